include(CMakePackageConfigHelpers)
install(TARGETS meshsim meshsim_mesh meshsim_runtime meshsim_collectives
        EXPORT meshsimTargets ARCHIVE DESTINATION lib)
install(FILES meshsim/meshsim.h DESTINATION include/meshsim)
# GoogleTest matchers for Arrays: header-only, and only for users who link gmock.
install(FILES meshsim/testing/array_matchers.h DESTINATION include/meshsim/testing)
install(EXPORT meshsimTargets NAMESPACE meshsim:: DESTINATION lib/cmake/meshsim)
configure_package_config_file(cmake/meshsimConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/meshsimConfig.cmake INSTALL_DESTINATION lib/cmake/meshsim)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/meshsimConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/meshsimConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/meshsimConfigVersion.cmake
        DESTINATION lib/cmake/meshsim)
