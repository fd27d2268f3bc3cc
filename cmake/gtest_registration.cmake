# meshsim_discover_tests(target LABELS label... [TIMEOUT s] [EXCLUDE filter])
# registers a GoogleTest executable with ctest: each plain test as its own
# ctest test, and each instantiated value- or type-parameterized suite
# (`Prefix/Suite`, thousands of cases in the reference suites) as one ctest
# test that runs all its cases in one process. Starting the executable costs
# ~50 ms (it registers every case), so one process per case had made that
# start-up most of the Release test run; a failing case is still named in
# the suite's output. EXCLUDE: gtest patterns, joined by ':' (no '-' part),
# of tests left out of both.
include(GoogleTest)

function(meshsim_discover_tests target)
  cmake_parse_arguments(ARG "" "TIMEOUT;EXCLUDE" "LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set(excluded "")
  set(negative "")
  if(ARG_EXCLUDE)
    set(excluded ":${ARG_EXCLUDE}")
    set(negative ":-${ARG_EXCLUDE}")
  endif()
  gtest_discover_tests(${target} NO_PRETTY_VALUES DISCOVERY_TIMEOUT 120
                       TEST_FILTER "-*/*${excluded}"
                       PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}")

  # The suites are listed after each build, as gtest_discover_tests lists
  # the cases, into a file ctest includes.
  set(suites_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -D "EXECUTABLE=$<TARGET_FILE:${target}>"
            -D "NEGATIVE=${negative}" -D "LABELS=${ARG_LABELS}"
            -D "TIMEOUT=${ARG_TIMEOUT}" -D "OUTPUT=${suites_file}"
            -P "${PROJECT_SOURCE_DIR}/cmake/gtest_suites_list.cmake"
    BYPRODUCTS "${suites_file}"
    VERBATIM)
  # A target that was never built (the layers' suites in a sanitizer job,
  # which builds only meshsim_concurrency_tests) has no list: ctest then has
  # nothing of it to include.
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites_include.cmake")
  file(WRITE "${include_file}" "if(EXISTS \"${suites_file}\")\n  include(\"${suites_file}\")\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
