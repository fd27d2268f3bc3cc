# meshsim_add_layer(name [DEPS ...] [PRIVATE_DEPS ...]): a static library made
# of every .cc below the calling folder (meshsim/<layer>/). DEPS are what its
# public headers need; PRIVATE_DEPS only what its sources need (consumers link
# them but never include them). Headers are included as "meshsim/<layer>/..."
# from the repo root in the build tree and as <meshsim/<layer>/...> from the
# install tree. Only public headers are installed: anything under an
# internal/ folder is the library's own.
function(meshsim_add_layer name)
  cmake_parse_arguments(ARG "" "" "DEPS;PRIVATE_DEPS" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  file(GLOB_RECURSE headers CONFIGURE_DEPENDS RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}
       ${CMAKE_CURRENT_SOURCE_DIR}/*.h)
  add_library(${name} STATIC ${sources})
  target_compile_options(${name} PRIVATE -Wall -Wextra -Wpedantic)
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<INSTALL_INTERFACE:include>)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  file(RELATIVE_PATH layer_dir ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR})
  foreach(header ${headers})
    if(header MATCHES "(^|/)internal/")
      continue()
    endif()
    get_filename_component(subdir ${header} DIRECTORY)
    install(FILES ${header} DESTINATION include/${layer_dir}/${subdir})
  endforeach()
endfunction()
