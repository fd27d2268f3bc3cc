# meshsim_precompile_headers(target [EIGEN] [TESTS]): precompile the headers
# nearly every translation unit of meshsim parses: the standard library, with
# EIGEN <Eigen/Core> (the public dtype header needs it for half and bfloat16,
# so every target above the mesh layer parses it), and with TESTS GoogleTest
# and GoogleMock. Parsing them costs 1.2 s (standard), 1.8 s (with Eigen) and
# 2.5 s (GoogleTest) per file under TSan; precompiled, the TSan build of
# meshsim_concurrency_tests took 4:31 instead of 5:24 on 2 cores (code
# generation is the rest). Each target makes its own: the layers and the
# suites are compiled with different flags, which a shared one (REUSE_FROM)
# requires to be equal.
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
