# Shared by minidl's build and its installed package config: put OpenBLAS's OpenMP build
# ahead of Debian's default (pthread) one when it is installed, so FindBLAS picks it.
# Debian keeps each build in its own folder; the executables get that folder as RUNPATH
# (CMake adds it for a library outside the system folders), so libopenblas.so.0 at run time
# is the OpenMP one too, whatever update-alternatives says.
macro(minidl_prefer_openblas_openmp)
  if(CMAKE_LIBRARY_ARCHITECTURE)
    list(PREPEND CMAKE_LIBRARY_PATH /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp)
  endif()
endmacro()

function(minidl_report_openblas_build libraries)
  if(libraries MATCHES "openblas-openmp")
    message(STATUS "minidl: OpenBLAS's OpenMP build: ${libraries}")
  elseif(libraries)
    message(STATUS "minidl: OpenBLAS ${libraries} is not the OpenMP build: its threads and minidl's "
                   "will compete for the cores (apt-get install -y libopenblas-openmp-dev)")
  endif()
endfunction()
