# Finds minidl's Debian-packaged dependencies; a missing one stops configure with the
# package to install.
include(GNUInstallDirs)

macro(minidl_require found what package)
  if(NOT ${found})
    # The indented line is printed as is (CMake wraps the rest), so it can be copied.
    message(FATAL_ERROR "minidl needs ${what} (Debian: ${package}). Install it with\n"
                        "  apt-get install -y ${package}\n"
                        "or run scripts/setup.sh as root, which installs every dependency.")
  endif()
endmacro()

# OpenBLAS's OpenMP build (Debian: libopenblas-openmp-dev) runs its threads in the same
# OpenMP pool as minidl's loops. Debian's default, the pthread build, keeps a pool of its own,
# and each pool's idle threads spin on the cores the other needs: on 2 cores the wide net's
# two threads were 1.03x faster than one with it, 1.7x with the OpenMP build.
include(MinidlOpenBLASOpenMP)
set(BLA_VENDOR OpenBLAS)
minidl_prefer_openblas_openmp()
find_package(BLAS)
minidl_require(BLAS_FOUND "OpenBLAS" libopenblas-dev)
minidl_report_openblas_build("${BLAS_LIBRARIES}")
find_path(MINIDL_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES x86_64-linux-gnu aarch64-linux-gnu openblas)
minidl_require(MINIDL_CBLAS_INCLUDE_DIR "cblas.h (OpenBLAS)" libopenblas-dev)

# SLEEF's vector maths: GELU's erf and tanh, SiLU's exp, and the reference for minidl's own tanh (docs/numerics.md).
include(MinidlSleef)
if(TARGET minidl::sleef)
  set(MINIDL_SLEEF_FOUND ON)
endif()
minidl_require(MINIDL_SLEEF_FOUND "SLEEF (sleef.h and libsleef)" libsleef-dev)

find_package(OpenMP)
minidl_require(OpenMP_CXX_FOUND "OpenMP" "g++ libgomp1")

find_package(nlohmann_json 3 QUIET)
minidl_require(nlohmann_json_FOUND "nlohmann/json" nlohmann-json3-dev)

if(MINIDL_BUILD_APPS OR MINIDL_BUILD_TESTS OR MINIDL_BUILD_BENCHMARKS OR MINIDL_BUILD_FUZZERS)
  find_package(cxxopts QUIET)
  minidl_require(cxxopts_FOUND "cxxopts" libcxxopts-dev)
  # cxxopts parses option names and integers by hand instead of with <regex>, whose
  # templates are most of the compile time of every file that includes it
  # (docs/build-time.md). It comes with the target: every file that includes cxxopts.hpp
  # belongs to a target that links cxxopts::cxxopts, so no program sees two definitions.
  set_property(TARGET cxxopts::cxxopts APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS CXXOPTS_NO_REGEX)
endif()
if(MINIDL_BUILD_TESTS)
  find_package(Catch2 2 QUIET)
  minidl_require(Catch2_FOUND "Catch2 v2" catch2)
endif()

# MPI (Debian: libopenmpi-dev, openmpi-bin) for minidl::distributed, optional unless ON.
set(MINIDL_MPI_ENABLED OFF)
if(NOT MINIDL_WITH_MPI STREQUAL "OFF")
  enable_language(C)  # FindMPI's C component probes with the C compiler; minidl calls MPI's C API
  find_package(MPI COMPONENTS C QUIET)
  if(MPI_C_FOUND)
    set(MINIDL_MPI_ENABLED ON)
    find_program(MINIDL_MPIEXEC NAMES ${MPIEXEC_EXECUTABLE} mpirun mpiexec)
    message(STATUS "minidl: MPI found (${MPI_C_VERSION}): minidl::distributed and digits --distributed are built")
  elseif(MINIDL_WITH_MPI STREQUAL "ON")
    minidl_require(MPI_C_FOUND "MPI (MINIDL_WITH_MPI=ON)" "libopenmpi-dev openmpi-bin")
  else()
    message(STATUS "minidl: MPI not found: built without minidl::distributed "
                   "(apt-get install -y libopenmpi-dev openmpi-bin turns it on)")
  endif()
endif()
