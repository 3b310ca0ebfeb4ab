# SLEEF, the vector maths library behind GELU and SiLU and tanh's reference (Debian: libsleef-dev), as the
# imported target minidl::sleef. Shared by minidl's build and its installed package config,
# so a consumer linking the static libminidl finds it the same way.
if(NOT TARGET minidl::sleef)
  find_path(MINIDL_SLEEF_INCLUDE_DIR sleef.h PATH_SUFFIXES x86_64-linux-gnu aarch64-linux-gnu)
  find_library(MINIDL_SLEEF_LIBRARY sleef)
  if(MINIDL_SLEEF_INCLUDE_DIR AND MINIDL_SLEEF_LIBRARY)
    add_library(minidl::sleef UNKNOWN IMPORTED)
    set_target_properties(minidl::sleef PROPERTIES IMPORTED_LOCATION "${MINIDL_SLEEF_LIBRARY}"
                                                   INTERFACE_INCLUDE_DIRECTORIES "${MINIDL_SLEEF_INCLUDE_DIR}")
  endif()
endif()
