# Run at build time by meshsim_discover_tests (cmake/gtest_registration.cmake):
# lists the parameterized suites of EXECUTABLE (names holding '/') and writes
# OUTPUT, one ctest test per suite. NEGATIVE (":-pattern...", or empty)
# leaves cases out of the listing and of each suite's run.
#   cmake -D EXECUTABLE=... -D NEGATIVE=... -D LABELS=a;b -D TIMEOUT=s -D OUTPUT=... -P gtest_suites_list.cmake
execute_process(COMMAND "${EXECUTABLE}" --gtest_list_tests "--gtest_filter=*/*${NEGATIVE}"
                OUTPUT_VARIABLE listing RESULT_VARIABLE status TIMEOUT 120)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${EXECUTABLE} --gtest_list_tests failed (${status}):\n${listing}")
endif()

# A suite line is unindented: "Prefix/Suite." with maybe "  # TypeParam = ...";
# its cases follow, indented. The listing is matched as text, not split
# into a CMake list: a case's parameter may hold ';', '[' or ']'.
string(REGEX MATCHALL "\n[^ \n#][^ \n]*\\." heads "\n${listing}")
set(script "")
foreach(head IN LISTS heads)
  string(REGEX REPLACE "^\n(.*)\\.$" "\\1" suite "${head}")
  string(APPEND script
    "add_test([==[${suite}]==] [==[${EXECUTABLE}]==] --gtest_brief=1 [==[--gtest_filter=${suite}.*${NEGATIVE}]==])\n"
    # A whole suite in one process: among the longest entries, so started
    # early (COST, as for the fiber runs).
    "set_tests_properties([==[${suite}]==] PROPERTIES TIMEOUT ${TIMEOUT} LABELS [==[${LABELS}]==] COST 100)\n")
endforeach()
# Every case listed belongs to a suite line: a listing with cases but no
# suite found means the format was misread, and cases would go unrun.
if(script STREQUAL "" AND listing MATCHES "\n  [^ ]")
  message(FATAL_ERROR "${EXECUTABLE}: no suite found in its --gtest_list_tests output:\n${listing}")
endif()
file(WRITE "${OUTPUT}" "${script}")
