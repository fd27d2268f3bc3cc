# meshsim_add_fiber_run(target label [gtest_filter]): registers the whole gtest executable
# `target` once more as a single ctest test, `<target>_on_fibers`, with every
# Runtime it makes in fiber mode (MESHSIM_EXEC=fibers, which RuntimeOptions
# read when they do not choose). The suite's own per-test entries run in
# thread mode, so one `ctest` runs everything in both execution modes; one
# process per suite keeps the second pass cheap. Labels: `label` and `fibers`.
function(meshsim_add_fiber_run target label)
  # The fiber suites choose fibers themselves: once is enough.
  set(filter "*:-FiberModeTest.*:FiberAdversarialTest.*:ExecutionModeTest.*")
  if(ARGC GREATER 2)
    set(filter "${ARGV2}")
  endif()
  add_test(NAME ${target}_on_fibers COMMAND ${target} --gtest_brief=1 --gtest_filter=${filter})
  set_tests_properties(${target}_on_fibers PROPERTIES
    ENVIRONMENT MESHSIM_EXEC=fibers LABELS "${label};fibers" TIMEOUT 1200
    # The longest entry of a run (one process, one core): started first (ctest
    # -j runs the costliest first when it has no timings yet, as on a clean
    # CI machine), it overlaps the rest instead of ending the run alone.
    COST 1000)
endfunction()
