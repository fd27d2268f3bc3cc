# meshsim_precompile_headers(target [EIGEN] [TESTS]): precompile the headers
# nearly every translation unit of meshsim parses: the standard library, with
# EIGEN <Eigen/Core> (the public dtype header needs it for half and bfloat16,
# so every target above the mesh layer parses it), and with TESTS GoogleTest
# and GoogleMock. Parsing them was about
# half of each compile, so a clean build (three of them in CI) takes about a
# third less time. Each target makes its own: the layers and the suites are
# compiled with different flags, which a shared one (REUSE_FROM) requires to
# be equal.
# Off (-DMESHSIM_PRECOMPILED_HEADERS=OFF), every file is compiled from its own
# includes: the way to check that a file names all it uses.
option(MESHSIM_PRECOMPILED_HEADERS "Precompile the standard, Eigen and GoogleTest headers" ON)

function(meshsim_precompile_headers target)
  cmake_parse_arguments(ARG "EIGEN;TESTS" "" "" ${ARGN})
  if(NOT MESHSIM_PRECOMPILED_HEADERS)
    return()
  endif()
  target_precompile_headers(${target} PRIVATE
    <algorithm> <array> <atomic> <chrono> <cmath> <condition_variable> <cstddef>
    <cstdint> <cstring> <functional> <limits> <memory> <mutex> <optional>
    <span> <sstream> <string> <string_view> <thread> <utility> <vector>)
  if(ARG_EIGEN)
    target_precompile_headers(${target} PRIVATE <Eigen/Core>)
  endif()
  if(ARG_TESTS)
    target_precompile_headers(${target} PRIVATE <gmock/gmock.h> <gtest/gtest.h>)
  endif()
endfunction()
