# Run at build time by meshsim_discover_tests (cmake/gtest_registration.cmake):
# lists the parameterized suites of EXECUTABLE that FILTER selects and writes
# OUTPUT, one ctest test per suite.
#   cmake -D EXECUTABLE=... -D FILTER=... -D LABELS=a;b -D TIMEOUT=s -D OUTPUT=... -P gtest_suites_list.cmake
execute_process(COMMAND "${EXECUTABLE}" --gtest_list_tests "--gtest_filter=${FILTER}"
                OUTPUT_VARIABLE listing RESULT_VARIABLE status TIMEOUT 120)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${EXECUTABLE} --gtest_list_tests failed (${status}):\n${listing}")
endif()

set(script "")
string(REPLACE "\n" ";" lines "${listing}")
foreach(line IN LISTS lines)
  # A suite line is unindented: "Prefix/Suite." with maybe "  # TypeParam = ...".
  if(line MATCHES "^([^ #][^ ]*)\\.")
    set(suite "${CMAKE_MATCH_1}")
    string(APPEND script
      "add_test([==[${suite}]==] [==[${EXECUTABLE}]==] --gtest_brief=1 [==[--gtest_filter=${suite}.*]==])\n"
      "set_tests_properties([==[${suite}]==] PROPERTIES TIMEOUT ${TIMEOUT} LABELS [==[${LABELS}]==])\n")
  endif()
endforeach()
file(WRITE "${OUTPUT}" "${script}")
