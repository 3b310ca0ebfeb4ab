# cmake --install: the library, its headers and a package config, so that another
# project does find_package(minidl) and links minidl::minidl.
include(CMakePackageConfigHelpers)

install(TARGETS minidl EXPORT minidlTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/minidl DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT minidlTargets NAMESPACE minidl:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/minidl)
configure_package_config_file(cmake/minidlConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/minidlConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/minidl)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/minidlConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/minidlConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/minidlConfigVersion.cmake
  ${CMAKE_CURRENT_SOURCE_DIR}/cmake/MinidlOpenBLASOpenMP.cmake
  ${CMAKE_CURRENT_SOURCE_DIR}/cmake/MinidlSleef.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/minidl)
