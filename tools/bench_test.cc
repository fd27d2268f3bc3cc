// meshsim bench: option parsing, the nccl-tests size / count / busbw
// conventions on known numbers, the sequential reference on hand-computed
// answers, a checked sweep of every collective that must find nothing wrong,
// and a deliberately corrupted collective that the checker must catch.

#include <CLI/CLI.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>

#include "meshsim/collectives/algorithms/registry.h"
#include "meshsim/collectives/reductions.h"
#include "meshsim/mesh/axis_groups.h"
#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/runtime.h"
#include "meshsim/runtime/exec/wait_policy.h"
#include "support/expect_error.h"
#include "support/scoped_env.h"
#include "tools/bench_collectives.h"
#include "tools/bench_help.h"
#include "tools/bench_options.h"
#include "tools/bench_reference.h"
#include "tools/bench_report.h"
#include "tools/bench_run.h"
#include "tools/bench_timing.h"

namespace meshsim::cli {
namespace {

using ::testing::HasSubstr;

// --- sizes -------------------------------------------------------------------

class ParseBytesTest : public ::testing::TestWithParam<std::pair<const char*, size_t>> {};

TEST_P(ParseBytesTest, KnownValues) {
  EXPECT_EQ(parse_bytes(GetParam().first, "-b/--minbytes"), GetParam().second);
}

INSTANTIATE_TEST_SUITE_P(Sizes, ParseBytesTest,
                         ::testing::Values(std::pair<const char*, size_t>{"8", 8},
                                           std::pair<const char*, size_t>{"0", 0},
                                           std::pair<const char*, size_t>{"1K", 1024},
                                           std::pair<const char*, size_t>{"1k", 1024},
                                           std::pair<const char*, size_t>{"512K", 524288},
                                           std::pair<const char*, size_t>{"64M", 67108864},
                                           std::pair<const char*, size_t>{"3m", 3145728},
                                           std::pair<const char*, size_t>{"2G", 2147483648},
                                           std::pair<const char*, size_t>{"8589934591G",
                                                                          9223372035781033984u}));

class BadBytesTest : public ::testing::TestWithParam<const char*> {};

TEST_P(BadBytesTest, NamesOptionAndValue) {
  const std::string text = GetParam();
  EXPECT_ERROR(parse_bytes(text, "-e/--maxbytes"), InvalidArgumentError,
               "-e/--maxbytes '" + text + "': expected a byte count");
}

INSTANTIATE_TEST_SUITE_P(Sizes, BadBytesTest,
                         ::testing::Values("", "K", "abc", "-8", "+8", "1.5M", "12Q", "8 ", "64MB",
                                           "8589934592G", "99999999999999999999"));

// --- meshes ------------------------------------------------------------------

TEST(ParseMeshTest, CountAndNamedAxes) {
  EXPECT_EQ(parse_mesh("8"), Mesh::make({{"x", 8}}));
  EXPECT_EQ(parse_mesh("1"), Mesh::make({{"x", 1}}));
  EXPECT_EQ(parse_mesh("x=4,y=2"), Mesh::make({{"x", 4}, {"y", 2}}));
  EXPECT_EQ(parse_mesh("data=2,model=3,pipe=1"),
            Mesh::make({{"data", 2}, {"model", 3}, {"pipe", 1}}));
}

class BadMeshTest : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(BadMeshTest, NamesOptionAndValue) {
  const auto [text, why] = GetParam();
  EXPECT_ERROR(parse_mesh(text), InvalidArgumentError, "--mesh '" + std::string(text) + "': ");
  EXPECT_ERROR(parse_mesh(text), InvalidArgumentError, why);
}

INSTANTIATE_TEST_SUITE_P(
    Meshes, BadMeshTest,
    ::testing::Values(std::pair{"", "expected a device count or NAME=SIZE"},
                      std::pair{"x", "expected a device count or NAME=SIZE"},
                      std::pair{"x=", "expected a device count or NAME=SIZE"},
                      std::pair{"x=a", "expected a device count or NAME=SIZE"},
                      std::pair{"x=4,", "expected a device count or NAME=SIZE"},
                      std::pair{"x=-4", "expected a device count or NAME=SIZE"},
                      std::pair{"4,2", "expected a device count or NAME=SIZE"},
                      std::pair{"99999999999", "expected a device count or NAME=SIZE"},
                      std::pair{"0", "x"}, std::pair{"x=0", "x"}, std::pair{"=4", "name"},
                      std::pair{"x=4,x=2", "x"}));

// --- the command line --------------------------------------------------------

TEST(ParseBenchArgsTest, Defaults) {
  const BenchOptions o = parse_bench_args({"all_reduce"});
  EXPECT_EQ(o.collective, find_collective("all_reduce"));
  EXPECT_EQ(o.mesh, Mesh::make({{"x", 8}}));
  EXPECT_EQ(o.axes, std::vector<std::string>{"x"});
  EXPECT_EQ(o.min_bytes, 8u);
  EXPECT_EQ(o.max_bytes, 64u << 20);
  EXPECT_EQ(o.step_factor, 2);
  EXPECT_EQ(o.params.dtype, DType::kFloat32);
  EXPECT_EQ(o.params.op, ReduceOp::kSum);
  EXPECT_EQ(o.iters, 20);
  EXPECT_EQ(o.warmup, 5);
  EXPECT_FALSE(o.check);
  EXPECT_EQ(o.algo, "");  // the runtime's choice
  EXPECT_EQ(o.format, OutputFormat::kTable);
  EXPECT_EQ(o.timeout.count(), 60000);
  EXPECT_EQ(o.group_size(), 8);
}

// Without --exec (and MESHSIM_EXEC), a mesh runs on threads while each of its
// devices has a usable core, and on fibers once the devices outnumber them.
TEST(ParseBenchArgsTest, ExecDefaultsToFibersOnlyWhenDevicesOutnumberTheCores) {
  const std::string cores = std::to_string(usable_cores());
  const std::string more = std::to_string(usable_cores() + 1);
  if (execution_mode_variable() != nullptr) {  // the fiber pass of ctest: the runtime reads it
    EXPECT_FALSE(parse_bench_args({"all_reduce", "--mesh", more, "-e", "8"}).exec.has_value());
    return;
  }
  EXPECT_EQ(parse_bench_args({"all_reduce", "--mesh", cores, "-e", "8"}).exec,
            ExecutionMode::kThreads);
  EXPECT_EQ(parse_bench_args({"all_reduce", "--mesh", more, "-e", "8"}).exec,
            ExecutionMode::kFibers);
  EXPECT_EQ(parse_bench_args({"all_reduce", "--mesh", more, "-e", "8", "--exec", "threads"}).exec,
            ExecutionMode::kThreads);
  EXPECT_EQ(parse_bench_args({"all_reduce", "--mesh", "1", "--exec", "fibers"}).exec,
            ExecutionMode::kFibers);
}

TEST(ParseBenchArgsTest, EveryOption) {
  // clang-format off
  const BenchOptions o = parse_bench_args(
      {"psum", "--mesh", "x=4,y=2", "--axes", "y,x", "-b", "1K", "-e", "1M", "-f", "4",
       "--dtype", "bf16", "--op", "max", "--iters", "3", "--warmup", "0", "--check",
       "--algo", "direct", "--format", "json", "--timeout-ms", "500", "--root", "1",
       "--seed", "7"});
  // clang-format on
  EXPECT_EQ(o.collective->name, "all_reduce");
  EXPECT_EQ(o.mesh, Mesh::make({{"x", 4}, {"y", 2}}));
  EXPECT_EQ(o.axes, (std::vector<std::string>{"y", "x"}));
  EXPECT_EQ(o.group_size(), 8);
  EXPECT_EQ(o.min_bytes, 1024u);
  EXPECT_EQ(o.max_bytes, 1u << 20);
  EXPECT_EQ(o.step_factor, 4);
  EXPECT_EQ(o.params.dtype, DType::kBFloat16);
  EXPECT_EQ(o.params.op, ReduceOp::kMax);
  EXPECT_EQ(o.iters, 3);
  EXPECT_EQ(o.warmup, 0);
  EXPECT_TRUE(o.check);
  EXPECT_EQ(o.format, OutputFormat::kJson);
  EXPECT_EQ(o.timeout.count(), 500);
  EXPECT_EQ(o.params.root, 1);
  EXPECT_EQ(o.params.seed, 7u);

  const BenchOptions sub = parse_bench_args({"psum_scatter", "--mesh", "x=4,y=2", "--axes", "y"});
  EXPECT_EQ(sub.collective->name, "reduce_scatter");
  EXPECT_EQ(sub.group_size(), 2);
}

struct BadArgs {
  std::vector<std::string> args;
  const char* message;
};

class BadBenchArgsTest : public ::testing::TestWithParam<BadArgs> {};

TEST_P(BadBenchArgsTest, NamesOptionAndValue) {
  EXPECT_ERROR(parse_bench_args(GetParam().args), InvalidArgumentError, GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Values, BadBenchArgsTest,
    ::testing::Values(
        BadArgs{{"allreduce"},
                "collective 'allreduce': unknown; choose one of all_reduce (psum), "
                "all_gather, reduce_scatter (psum_scatter)"},
        BadArgs{{"all_reduce", "--mesh", "x=0"}, "--mesh 'x=0'"},
        BadArgs{{"all_reduce", "--axes", "z"}, "--axes 'z'"},
        BadArgs{{"all_reduce", "--mesh", "x=2,y=2", "--axes", "x,x"}, "--axes 'x,x'"},
        BadArgs{{"all_reduce", "-b", "0"}, "-b/--minbytes '0': must be at least 1"},
        BadArgs{{"all_reduce", "-b", "1M", "-e", "1K"},
                "-e/--maxbytes '1K': is below -b/--minbytes 1048576"},
        BadArgs{{"all_reduce", "-e", "lots"}, "-e/--maxbytes 'lots'"},
        // 16 x 1 TiB: more memory than any machine this runs on.
        BadArgs{{"all_reduce", "--mesh", "8", "-b", "1K", "-e", "1024G"},
                "-e/--maxbytes '1024G': needs about 16385 GiB (2 x 8 devices x the size, and the "
                "memcpy reference), more than the "},
        BadArgs{{"all_reduce", "-f", "1"}, "-f/--stepfactor '1': must be at least 2"},
        BadArgs{{"all_reduce", "--dtype", "float33"}, "--dtype 'float33'"},
        BadArgs{{"all_reduce", "--op", "prod"}, "--op 'prod': choose sum, max or min"},
        BadArgs{{"reduce_scatter", "--op", "max"},
                "--op 'max': reduce_scatter reduces with sum only"},
        BadArgs{{"all_reduce", "--iters", "0"}, "--iters '0': must be at least 1"},
        BadArgs{{"all_reduce", "--warmup", "-1"}, "--warmup '-1': must be at least 0"},
        BadArgs{{"all_gather", "--algo", "nosuch"},
                "--algo 'nosuch': not an algorithm of all_gather; available: direct, "},
        BadArgs{{"all_reduce", "--algo", "Ring"},
                "--algo 'Ring': not an algorithm of all_reduce; available: direct, "},
        BadArgs{{"ppermute", "--algo", "auto"},
                "--algo 'auto': not an algorithm of ppermute; available: direct"},
        BadArgs{{"all_reduce", "--format", "xml"}, "--format 'xml': choose table, json or csv"},
        BadArgs{{"all_reduce", "--timeout-ms", "-5"}, "--timeout-ms '-5': must be at least 0"},
        BadArgs{{"ragged_all_to_all", "--seed", "-1"}, "--seed '-1': must be at least 0"},
        BadArgs{{"pbroadcast", "--mesh", "4", "--root", "4"},
                "--root '4': out of range [0, 4) for pbroadcast"},
        BadArgs{{"all_reduce", "--trace", ""}, "--trace '': is empty"},
        BadArgs{{"all_reduce", "--network", "congestion-aware"},
                "--network 'congestion-aware': models a --topology, and none is given"}));

// --algo takes every name the registry lists for the collective, auto and
// all; collectives without algorithms take direct only.
TEST(ParseBenchArgsTest, AlgoChoicesComeFromTheRegistry) {
  Runtime fresh;
  for (const Collective& c : collectives()) {
    const std::vector<std::string> choices = algorithm_choices(c);
    if (!c.kind) {
      EXPECT_EQ(choices, std::vector<std::string>{"direct"}) << c.name;
      continue;
    }
    const std::vector<const AlgorithmInfo*> listed = algorithm_registry(fresh).list(*c.kind);
    ASSERT_EQ(choices.size(), listed.size() + 2) << c.name;
    for (size_t i = 0; i < listed.size(); ++i) EXPECT_EQ(choices[i], listed[i]->name);
    EXPECT_EQ(choices[listed.size()], "auto");
    EXPECT_EQ(choices[listed.size() + 1], "all");
    for (const std::string& name : choices) {
      EXPECT_EQ(parse_bench_args({std::string(c.name), "--algo", name}).algo, name);
    }
  }
}

TEST(ParseBenchArgsTest, SyntaxErrorsComeFromCli11) {
  EXPECT_THROW(parse_bench_args({"all_reduce", "--iters", "many"}), CLI::ParseError);
  EXPECT_THROW(parse_bench_args({"all_reduce", "--bogus"}), CLI::ParseError);
  EXPECT_THROW(parse_bench_args({}), CLI::ParseError);  // the collective is required
}

TEST(BenchHelpTest, NamesEveryCollectiveAndFloor) {
  const std::string help = bench_help_footer();
  for (const Collective& c : collectives()) {
    EXPECT_THAT(help, HasSubstr(std::string(c.name))) << c.name;
    EXPECT_THAT(help, HasSubstr(std::string(c.floor_formula))) << c.name;
  }
  EXPECT_THAT(help, HasSubstr("2*N*S / B"));
}

// --- nccl-tests conventions --------------------------------------------------

TEST(SweepSizesTest, KnownSweeps) {
  EXPECT_EQ(sweep_sizes(8, 1024, 2), (std::vector<size_t>{8, 16, 32, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(sweep_sizes(3, 100, 2), (std::vector<size_t>{3, 6, 12, 24, 48, 96}));
  EXPECT_EQ(sweep_sizes(5, 5, 2), (std::vector<size_t>{5}));
  EXPECT_EQ(sweep_sizes(8, 64 << 20, 4).size(), 12u);  // 8 * 4^11 = 32M
  // No overflow past the largest size_t.
  EXPECT_EQ(sweep_sizes(size_t{1} << 62, SIZE_MAX, 2),
            (std::vector<size_t>{size_t{1} << 62, size_t{1} << 63}));
}

struct BusCase {
  const char* collective;
  int n;
  double busbw;  // for 1e9 bytes in 0.5 s, i.e. algbw = 2 GB/s
};

class BandwidthTest : public ::testing::TestWithParam<BusCase> {};

TEST_P(BandwidthTest, NcclTestsFactors) {
  const auto& [name, n, busbw] = GetParam();
  const Bandwidth bw = bandwidth(*find_collective(name), 1'000'000'000, 0.5, n);
  EXPECT_DOUBLE_EQ(bw.algbw, 2.0);
  EXPECT_DOUBLE_EQ(bw.busbw, busbw);
}

INSTANTIATE_TEST_SUITE_P(
    Factors, BandwidthTest,
    ::testing::Values(BusCase{"all_reduce", 8, 3.5},      // 2 * 2(n-1)/n = 2 * 1.75
                      BusCase{"all_reduce", 2, 2.0},      // 2 * 1
                      BusCase{"all_reduce", 1, 0.0},      // nothing crosses a bus
                      BusCase{"barrier", 4, 3.0},         // as all_reduce: 2 * 1.5
                      BusCase{"all_gather", 8, 1.75},     // 2 * (n-1)/n = 2 * 0.875
                      BusCase{"reduce_scatter", 4, 1.5},  // 2 * 0.75
                      BusCase{"all_to_all", 2, 1.0},      // 2 * 0.5
                      BusCase{"ragged_all_to_all", 8, 1.75},
                      BusCase{"ppermute", 8, 2.0},      // sendrecv: 1
                      BusCase{"pbroadcast", 8, 2.0}));  // broadcast: 1

struct SizeCase {
  const char* collective;
  DType dtype;
  size_t bytes;
  int64_t count;
  size_t size;
};

class WorkloadSizeTest : public ::testing::TestWithParam<SizeCase> {};

// nccl-tests' size and count columns, on 8 devices.
TEST_P(WorkloadSizeTest, NcclTestsConventions) {
  const auto& [name, dtype, bytes, count, size] = GetParam();
  const Mesh mesh = Mesh::make({{"x", 8}});
  const DeviceGroups groups = device_groups(mesh.abstract_mesh(), std::vector<std::string>{"x"});
  const Workload work = find_collective(name)->prepare({.dtype = dtype}, groups, bytes, false);
  EXPECT_EQ(work.count, count);
  EXPECT_EQ(work.size(), size);
  EXPECT_EQ(work.args.empty(), count == 0);
}

INSTANTIATE_TEST_SUITE_P(
    Columns, WorkloadSizeTest,
    ::testing::Values(SizeCase{"all_reduce", DType::kFloat32, 1000, 250, 1000},
                      SizeCase{"all_reduce", DType::kBool, 1000, 1000, 4000},      // int32 out
                      SizeCase{"all_reduce", DType::kFloat64, 4, 0, 0},            // no element
                      SizeCase{"all_gather", DType::kFloat32, 1000, 31, 992},      // 31 * 8 out
                      SizeCase{"all_gather", DType::kFloat32, 16, 0, 0},           // 4 elements < 8
                      SizeCase{"reduce_scatter", DType::kFloat32, 1000, 31, 992},  // 248 in
                      SizeCase{"reduce_scatter", DType::kBool, 64, 8, 64},  // 64 in, 8 int32 out
                      SizeCase{"all_to_all", DType::kInt8, 1000, 125, 1000},
                      SizeCase{"ragged_all_to_all", DType::kFloat32, 1000, 31, 992},
                      SizeCase{"ppermute", DType::kBFloat16, 1000, 500, 1000},
                      SizeCase{"pbroadcast", DType::kInt64, 1000, 125, 1000},
                      SizeCase{"barrier", DType::kFloat64, 1 << 20, 1, 4}));

// The registry's view of a bench call (what --algo all checks preconditions
// on) counts the elements prepare puts in each device's input.
TEST(CallShapeTest, CountsWhatPrepareBuilds) {
  const Mesh mesh = Mesh::make({{"x", 2}, {"y", 3}});
  const DeviceGroups groups =
      device_groups(mesh.abstract_mesh(), std::vector<std::string>{"x", "y"});
  for (const Collective& c : collectives()) {
    if (!c.kind) continue;
    for (DType dtype : {DType::kFloat32, DType::kInt8, DType::kFloat64}) {
      for (size_t bytes : {size_t{8}, size_t{100}, size_t{1000}, size_t{4096}}) {
        const BenchParams params{.dtype = dtype};
        const CallShape shape = call_shape(c, params, 6, 2, bytes);
        const Workload work = c.prepare(params, groups, bytes, false);
        EXPECT_EQ(shape.collective, *c.kind);
        EXPECT_EQ(shape.group_size, 6);
        EXPECT_EQ(shape.num_axes, 2);
        const size_t input_bytes = work.args.empty() ? 0 : work.args[0][0].nbytes();
        EXPECT_EQ(shape.bytes, input_bytes) << c.name << " " << bytes << " B";
        EXPECT_EQ(shape.count, static_cast<int64_t>(input_bytes / dtype_size(dtype)));
      }
    }
  }
}

// --- the sequential reference ------------------------------------------------

TEST(BenchInputTest, KnownValues) {
  // Position 0: v = 0, 1, 2, 3 (step 31 mod 5 = 1); position 1 starts at 7919 mod 5 = 4.
  EXPECT_TRUE(array_equal(bench_input(DType::kFloat32, 4, 0, 5),
                          Array::from_values<float>({4}, {-2, -1, 0, 1})));
  EXPECT_TRUE(array_equal(bench_input(DType::kFloat32, 4, 1, 5),
                          Array::from_values<float>({4}, {2, -2, -1, 0})));
  EXPECT_TRUE(array_equal(bench_input(DType::kUInt8, 4, 0, 5),
                          Array::from_values<uint8_t>({4}, {254, 255, 0, 1})));
  EXPECT_TRUE(array_equal(bench_input(DType::kBool, 4, 0, 5),
                          Array::from_values<bool>({4}, {false, true, false, true})));
}

// Mesh x=2, y=2 over "y": groups {0, 1} and {2, 3}.
DeviceGroups two_groups_of_two() {
  return device_groups(Mesh::make({{"x", 2}, {"y", 2}}).abstract_mesh(),
                       std::vector<std::string>{"y"});
}

DeviceGroups one_group(int n) {
  return device_groups(Mesh::make({{"x", n}}).abstract_mesh(), std::vector<std::string>{"x"});
}

void expect_arrays(const std::vector<Array>& got, const std::vector<Array>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t p = 0; p < got.size(); ++p) {
    EXPECT_TRUE(array_equal(got[p], want[p])) << "position " << p << ": " << got[p];
  }
}

TEST(ReferenceTest, AllReduce) {
  const std::vector<Array> in = {
      Array::from_values<float>({3}, {1, -2, 5}), Array::from_values<float>({3}, {4, 3, -5}),
      Array::from_values<float>({3}, {0, 1, 2}), Array::from_values<float>({3}, {7, 7, 7})};
  const DeviceGroups groups = two_groups_of_two();
  const Array sum01 = Array::from_values<float>({3}, {5, 1, 0});
  const Array sum23 = Array::from_values<float>({3}, {7, 8, 9});
  expect_arrays(expected_all_reduce(ReduceOp::kSum, in, groups), {sum01, sum01, sum23, sum23});
  const Array max01 = Array::from_values<float>({3}, {4, 3, 5});
  const Array min23 = Array::from_values<float>({3}, {0, 1, 2});
  EXPECT_TRUE(array_equal(expected_all_reduce(ReduceOp::kMax, in, groups)[1], max01));
  EXPECT_TRUE(array_equal(expected_all_reduce(ReduceOp::kMin, in, groups)[3], min23));

  // int8 wraps: 100 + 100 = -56, -128 + -1 = 127.
  const std::vector<Array> bytes = {Array::from_values<int8_t>({2}, {100, -128}),
                                    Array::from_values<int8_t>({2}, {100, -1})};
  EXPECT_TRUE(array_equal(expected_all_reduce(ReduceOp::kSum, bytes, one_group(2))[0],
                          Array::from_values<int8_t>({2}, {-56, 127})));
  // bool: sum counts into int32, max is or, min is and.
  const std::vector<Array> bools = {Array::from_values<bool>({3}, {true, true, false}),
                                    Array::from_values<bool>({3}, {true, false, false})};
  EXPECT_TRUE(array_equal(expected_all_reduce(ReduceOp::kSum, bools, one_group(2))[0],
                          Array::from_values<int32_t>({3}, {2, 1, 0})));
  EXPECT_TRUE(array_equal(expected_all_reduce(ReduceOp::kMax, bools, one_group(2))[0],
                          Array::from_values<bool>({3}, {true, true, false})));
  EXPECT_TRUE(array_equal(expected_all_reduce(ReduceOp::kMin, bools, one_group(2))[0],
                          Array::from_values<bool>({3}, {true, false, false})));
}

TEST(ReferenceTest, DataMovement) {
  const std::vector<Array> in = {Array::from_values<int32_t>({4}, {1, 2, 3, 4}),
                                 Array::from_values<int32_t>({4}, {10, 20, 30, 40}),
                                 Array::from_values<int32_t>({4}, {5, 6, 7, 8}),
                                 Array::from_values<int32_t>({4}, {50, 60, 70, 80})};
  const DeviceGroups groups = two_groups_of_two();
  const auto ints = [](std::initializer_list<int32_t> v) {
    return Array::from_values<int32_t>({static_cast<int64_t>(v.size())}, v);
  };
  expect_arrays(expected_all_gather(in, groups),
                {ints({1, 2, 3, 4, 10, 20, 30, 40}), ints({1, 2, 3, 4, 10, 20, 30, 40}),
                 ints({5, 6, 7, 8, 50, 60, 70, 80}), ints({5, 6, 7, 8, 50, 60, 70, 80})});
  expect_arrays(expected_psum_scatter(in, groups),
                {ints({11, 22}), ints({33, 44}), ints({55, 66}), ints({77, 88})});
  expect_arrays(expected_all_to_all(in, groups), {ints({1, 2, 10, 20}), ints({3, 4, 30, 40}),
                                                  ints({5, 6, 50, 60}), ints({7, 8, 70, 80})});
  expect_arrays(expected_broadcast(in, groups, 1), {in[1], in[1], in[3], in[3]});
  // A ring of 4: rank r receives rank r - 1's input.
  expect_arrays(expected_ring_shift(in, one_group(4)), {in[3], in[0], in[1], in[2]});
}

// jax.lax.ragged_all_to_all's docstring example, with outputs of 3 rows:
// rank 0 sends [1] to itself and [2, 2] to rank 1; rank 1 sends [3] to rank 0
// and [4] to itself. Results: [1, 3, 0] and [2, 2, 4].
TEST(ReferenceTest, RaggedAllToAllJaxExample) {
  const std::vector<Array> in = {Array::from_values<float>({3}, {1, 2, 2}),
                                 Array::from_values<float>({3}, {3, 4, 0})};
  expect_arrays(
      expected_ragged_all_to_all(in, one_group(2), {{1, 2}, {1, 1}}),
      {Array::from_values<float>({3}, {1, 3, 0}), Array::from_values<float>({3}, {2, 2, 4})});
}

class RaggedSendSizesTest : public ::testing::TestWithParam<std::tuple<int, int64_t, uint64_t>> {};

TEST_P(RaggedSendSizesTest, EveryRowAndColumnSumsToRows) {
  const auto [n, rows, seed] = GetParam();
  const auto sizes = ragged_send_sizes(n, rows, seed);
  ASSERT_EQ(sizes.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    int64_t row_sum = 0, column_sum = 0;
    for (int j = 0; j < n; ++j) {
      EXPECT_GE(sizes[i][j], 0);
      row_sum += sizes[i][j];
      column_sum += sizes[j][i];
    }
    EXPECT_EQ(row_sum, rows) << "row " << i;
    EXPECT_EQ(column_sum, rows) << "column " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Plans, RaggedSendSizesTest,
                         ::testing::Combine(::testing::Values(1, 2, 3, 8),
                                            ::testing::Values(int64_t{0}, int64_t{7}, int64_t{800}),
                                            ::testing::Values(uint64_t{1}, uint64_t{42})));

TEST(RaggedSendSizesTest, SeedChangesTheSplit) {
  EXPECT_NE(ragged_send_sizes(4, 400, 1), ragged_send_sizes(4, 400, 2));
  EXPECT_EQ(ragged_send_sizes(4, 400, 1), ragged_send_sizes(4, 400, 1));
  // Not the uniform split: the sizes are actually ragged.
  EXPECT_NE(ragged_send_sizes(4, 400, 1),
            std::vector<std::vector<int64_t>>(4, std::vector<int64_t>(4, 100)));
}

TEST(CountWrongTest, CountsDifferingElements) {
  const Array expected = Array::from_values<float>({6}, {1, 2, 3, 0, 5, 6});
  EXPECT_EQ(count_wrong(expected.clone(), expected), 0);
  Array corrupted = expected.clone();
  corrupted.set<float>({0}, 9.f);
  corrupted.set<float>({5}, 6.5f);
  EXPECT_EQ(count_wrong(corrupted, expected), 2);
  Array negative_zero = expected.clone();
  negative_zero.set<float>({3}, -0.f);  // equal as numbers, not as bits
  EXPECT_EQ(count_wrong(negative_zero, expected), 1);
  EXPECT_EQ(count_wrong(expected.astype(DType::kFloat64), expected), 6);
  EXPECT_EQ(count_wrong(expected.reshape({2, 3}), expected), 6);
  EXPECT_EQ(count_wrong(Array::zeros({0}, DType::kInt8), Array::zeros({0}, DType::kInt8)), 0);
}

// --- checked sweeps ----------------------------------------------------------

struct MeshCase {
  const char* mesh;
  const char* axes;  // "" = all
};

class CheckedSweepTest
    : public ::testing::TestWithParam<std::tuple<std::string_view, MeshCase, const char*>> {};

// Every collective, 8 B .. 1 KiB on 4 devices, every call checked: 0 wrong.
TEST_P(CheckedSweepTest, FindsNothingWrong) {
  const auto& [name, mesh, dtype] = GetParam();
  std::vector<std::string> args = {
      std::string(name), "--mesh", mesh.mesh,  "-b", "8",       "-e",      "1K",
      "--iters",         "2",      "--warmup", "1",  "--check", "--dtype", dtype};
  if (*mesh.axes != '\0') args.insert(args.end(), {"--axes", mesh.axes});
  if (name == "pbroadcast") args.insert(args.end(), {"--root", "1"});
  const BenchOptions options = parse_bench_args(args);
  Runtime runtime(options.mesh.size());
  int rows = 0;
  for (size_t bytes : sweep_sizes(options.min_bytes, options.max_bytes, options.step_factor)) {
    const std::optional<Row> row = run_size(runtime, options, bytes);
    if (!row) continue;
    ++rows;
    ASSERT_TRUE(row->wrong.has_value());
    EXPECT_EQ(*row->wrong, 0) << bytes << " B";
    EXPECT_GT(row->time_us, 0);
    EXPECT_LE(row->median_us, row->time_us);
  }
  EXPECT_GT(rows, 0);
}

std::vector<std::string_view> collective_names() {
  std::vector<std::string_view> names;
  for (const Collective& c : collectives()) names.push_back(c.name);
  return names;
}

std::string sweep_name(
    const ::testing::TestParamInfo<std::tuple<std::string_view, MeshCase, const char*>>& info) {
  const auto& [name, mesh, dtype] = info.param;
  std::string out = std::string(name) + "_" + mesh.mesh + "_over_" + mesh.axes + "_" + dtype;
  for (char& ch : out) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    Collectives, CheckedSweepTest,
    ::testing::Combine(::testing::ValuesIn(collective_names()),
                       ::testing::Values(MeshCase{"4", ""}, MeshCase{"x=2,y=2", "y"},
                                         MeshCase{"x=2,y=2", "y,x"}),
                       ::testing::Values("float32", "bfloat16", "int8", "bool")),
    sweep_name);

class CheckedReductionTest : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {
};

TEST_P(CheckedReductionTest, MaxAndMinFindNothingWrong) {
  const auto& [op, dtype] = GetParam();
  const BenchOptions options =
      parse_bench_args({"all_reduce", "--mesh", "4", "-b", "8", "-e", "1K", "--iters", "2",
                        "--warmup", "0", "--check", "--op", op, "--dtype", dtype});
  Runtime runtime(4);
  for (size_t bytes : sweep_sizes(options.min_bytes, options.max_bytes, options.step_factor)) {
    const std::optional<Row> row = run_size(runtime, options, bytes);
    ASSERT_TRUE(row.has_value());
    EXPECT_EQ(row->redop, op);
    EXPECT_EQ(row->wrong, 0) << bytes << " B";
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, CheckedReductionTest,
                         ::testing::Combine(::testing::Values("max", "min"),
                                            ::testing::Values("float16", "uint32", "int64",
                                                              "bool")));

// all_reduce whose result on mesh position 1 has its first and last elements
// off by one: 2 wrong elements per call.
Array corrupting_all_reduce(DeviceContext& ctx, const Workload& work, int position,
                            const AxisNames& axes, std::string_view algorithm) {
  Array out = psum(ctx, work.args[position][0], axes, {}, algorithm);
  if (position == 1) {
    const std::span<float> values = out.mutable_span<float>();
    values.front() += 1;
    values.back() += 1;
  }
  return out;
}

TEST(CorruptedResultTest, IsCountedWrong) {
  Collective corrupting = *find_collective("all_reduce");
  corrupting.run = corrupting_all_reduce;
  BenchOptions options = parse_bench_args({"all_reduce", "--mesh", "4", "-b", "64", "-e", "64",
                                           "--iters", "3", "--warmup", "2", "--check"});
  options.collective = &corrupting;
  Runtime runtime(4);
  const std::optional<Row> row = run_size(runtime, options, 64);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->wrong, 2 * (3 + 2));  // every call checked, warmup included

  std::ostringstream out;
  EXPECT_EQ(run_bench(options, out, nullptr), 1);
  EXPECT_THAT(out.str(), HasSubstr("# wrong elements: 10 WRONG"));
}

// --- the whole command -------------------------------------------------------

// The header's meeting floor runs launches of about 20 ms each; they must not
// fall under the sweep's --timeout-ms (a 10 ms timeout failed the whole run
// before the floor got a runtime of its own).
TEST(RunBench, ShortLaunchTimeoutAppliesToTheSweepOnly) {
  const BenchOptions options = parse_bench_args({"psum", "--mesh", "2", "-b", "8", "-e", "8",
                                                 "--iters", "1", "--warmup", "0", "--check",
                                                 "--timeout-ms", "10"});
  std::ostringstream out;
  EXPECT_EQ(run_bench(options, out, nullptr), 0) << out.str();
  EXPECT_THAT(out.str(), HasSubstr("# meeting floor: 2 "));  // either mode
  EXPECT_THAT(out.str(), HasSubstr("# wrong elements: 0 OK"));
}

struct FormatCase {
  const char* format;
  std::vector<std::string> lines;  // text the output must hold
  const char* row_marker;          // text found once in each row and nowhere else
};

class RunBenchTest : public ::testing::TestWithParam<FormatCase> {};

TEST_P(RunBenchTest, WritesHeaderAndOneRowPerSize) {
  const FormatCase& c = GetParam();
  const BenchOptions options =
      parse_bench_args({"all_gather", "--mesh", "4", "-b", "64", "-e", "256", "--iters", "1",
                        "--warmup", "0", "--check", "--format", c.format});
  std::ostringstream out;
  EXPECT_EQ(run_bench(options, out, nullptr), 0);
  const std::string text = out.str();
  for (const std::string& line : c.lines) EXPECT_THAT(text, HasSubstr(line));
  int rows = 0;  // 64, 128 and 256 B
  for (size_t at = text.find(c.row_marker); at != std::string::npos;
       at = text.find(c.row_marker, at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, 3) << text;
}

INSTANTIATE_TEST_SUITE_P(
    Formats, RunBenchTest,
    ::testing::Values(
        FormatCase{
            "table",
            {"# meshsim bench all_gather, algorithm: the runtime's choice",
             "# memcpy reference: 2 threads, 1024 B",
             "# floor at S = 256 B: N*S / memcpy", "# execution: ", "# meeting floor: 4 ",
             "#wrong",
             "\n          64             4   float32    none      -1  ", "# wrong elements: 0 OK"},
            "   float32    none      -1  "},
        FormatCase{"csv",
                   {"size,count,type,redop,root,time_us,algbw_gbps,busbw_gbps,wrong,median_us,"
                    "algorithm,chosen_by,modeled_us,modeled_busbw_gbps\n",
                    "\n64,4,float32,none,-1,", "\n256,16,float32,none,-1,"},
                   ",float32,none,-1,"}));

// JSON: one object that parses, with the header's facts and a row per size.
TEST(RunBench, JsonHoldsHeaderAndOneRowPerSize) {
  const BenchOptions options =
      parse_bench_args({"all_gather", "--mesh", "4", "-b", "64", "-e", "256", "--iters", "1",
                        "--warmup", "0", "--check", "--format", "json"});
  std::ostringstream out;
  EXPECT_EQ(run_bench(options, out, nullptr), 0);
  const nlohmann::json report = nlohmann::json::parse(out.str());
  EXPECT_EQ(report["collective"], "all_gather");
  EXPECT_EQ(report["group_size"], 4);
  EXPECT_EQ(report["meeting_floor"]["threads"], 4);
  EXPECT_GT(report["meeting_floor"]["yield_barrier_us"].get<double>(), 0);
  EXPECT_EQ(report["topology"], nullptr);
  EXPECT_EQ(report["wrong"], 0);
  ASSERT_EQ(report["rows"].size(), 3u) << out.str();  // 64, 128 and 256 B
  int64_t size = 64;
  for (const nlohmann::json& row : report["rows"]) {
    EXPECT_EQ(row["size"], size);
    EXPECT_EQ(row["count"], size / 16);  // float32 elements per device of 4
    EXPECT_EQ(row["type"], "float32");
    EXPECT_EQ(row["redop"], "none");
    EXPECT_EQ(row["root"], -1);
    EXPECT_EQ(row["wrong"], 0);
    EXPECT_EQ(row["algorithm"], "direct");
    EXPECT_EQ(row["modeled_us"], nullptr);
    size *= 2;
  }
  // Each row is one line, spaced as Python's json.dumps writes it: scripts
  // (peers/compare.sh) grep a row for '"time_us": <number>'.
  std::istringstream lines(out.str());
  int spaced_rows = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("\"size\": ") != std::string::npos &&
        line.find("\"time_us\": ") != std::string::npos &&
        line.find(", \"median_us\": ") != std::string::npos) {
      ++spaced_rows;
    }
  }
  EXPECT_EQ(spaced_rows, 3) << out.str();
}

// A quote, a backslash and a control character in a string come out
// escaped, a byte that is not UTF-8 as U+FFFD, and a number that is not
// finite as null: the output still parses and the string reads back the same.
TEST(RunBench, JsonEscapesStrings) {
  BenchOptions options =
      parse_bench_args({"psum", "--mesh", "2", "-b", "8", "-e", "8", "--iters", "1", "--warmup",
                        "0", "--format", "json"});
  const std::string odd = "a \"b\" \\ c\n\x01";
  const std::string not_utf8 = "cpu \xff";
  std::ostringstream out;
  const auto writer = make_report_writer(OutputFormat::kJson, out);
  ReportHeader header;
  header.options = &options;
  header.machine.hostname = odd;
  header.machine.cpu_model = not_utf8;
  header.floor_us = std::numeric_limits<double>::quiet_NaN();
  writer->begin(header);
  writer->end(ReportSummary{});
  const nlohmann::json report = nlohmann::json::parse(out.str());
  EXPECT_EQ(report["machine"]["hostname"], odd);
  EXPECT_EQ(report["machine"]["cpu_model"], "cpu \xef\xbf\xbd");  // U+FFFD
  EXPECT_EQ(report["floor"]["us"], nullptr);
  EXPECT_EQ(report["rows"].size(), 0u);
  EXPECT_EQ(report["wrong"], nullptr);
}

// --exec names the execution mode; the header says which ran, and on fibers
// the meeting floor is the fibers' yield barrier alone.
TEST(RunBench, ExecChoosesTheModeAndTheHeaderSaysIt) {
  for (const char* mode : {"threads", "fibers"}) {
    const BenchOptions options =
        parse_bench_args({"all_reduce", "--mesh", "4", "-b", "8", "-e", "8", "--iters", "1",
                          "--warmup", "0", "--check", "--exec", mode});
    std::ostringstream out;
    EXPECT_EQ(run_bench(options, out, nullptr), 0);
    if (std::string(mode) == "fibers") {
      EXPECT_THAT(out.str(), HasSubstr("# execution: fibers, 4 devices on "));
      EXPECT_THAT(out.str(), HasSubstr("# meeting floor: 4 fibers, yield barrier "));
    } else {
      EXPECT_THAT(out.str(), HasSubstr("# execution: threads, one per device (4 threads"));
      EXPECT_THAT(out.str(), HasSubstr("# meeting floor: 4 threads, yield barrier "));
    }
    EXPECT_THAT(out.str(), HasSubstr("# wrong elements: 0 OK"));
  }
  EXPECT_THROW(parse_bench_args({"all_reduce", "--exec", "gpu"}), InvalidArgumentError);
}

// --bind chooses whether the runtime binds its threads to CPUs, and the
// header and the JSON say which ran.
TEST(RunBench, BindChoosesTheBindingAndTheReportSaysIt) {
  for (const char* bind : {"cores", "none"}) {
    const BenchOptions options =
        parse_bench_args({"all_reduce", "--mesh", "2", "-b", "8", "-e", "8", "--iters", "1",
                          "--warmup", "0", "--exec", "threads", "--bind", bind});
    const bool bound = std::string(bind) == "cores";
    EXPECT_EQ(options.bind, bound);
    std::ostringstream table;
    EXPECT_EQ(run_bench(options, table, nullptr), 0);
    EXPECT_THAT(table.str(),
                HasSubstr(bound ? "(2 threads, bound to CPUs)" : "(2 threads, unbound)"));
    BenchOptions json_options = options;
    json_options.format = OutputFormat::kJson;
    std::ostringstream json;
    EXPECT_EQ(run_bench(json_options, json, nullptr), 0);
    EXPECT_EQ(nlohmann::json::parse(json.str())["bound_to_cpus"], bound);
  }
  EXPECT_FALSE(parse_bench_args({"all_reduce"}).bind.has_value());
  EXPECT_ERROR(parse_bench_args({"all_reduce", "--bind", "core"}), InvalidArgumentError,
               "--bind 'core': choose cores or none");
  EXPECT_ERROR(parse_bench_args({"all_reduce", "--bind", ""}), InvalidArgumentError,
               "--bind '': choose cores or none");
  EXPECT_ERROR(parse_bench_args({"all_reduce", "--exec", ""}), InvalidArgumentError,
               "--exec '': choose threads or fibers");
  // The flag wins over the variable, which then is not read at all.
  const testing_support::ScopedEnv bogus("MESHSIM_BIND", "bogus");
  EXPECT_EQ(parse_bench_args({"all_reduce", "--bind", "none"}).bind, false);
}

// --- algorithms --------------------------------------------------------------

// An all_reduce that writes zeros: a wrong algorithm the bench must run when
// named, record, and catch with --check.
Algorithm<AllReduceArgs> zeroing_all_reduce() {
  Algorithm<AllReduceArgs> a;
  a.name = "zeroing_test";
  a.description = "writes zeros";
  a.cost_formula = "0";
  a.cost = [](const CallShape&) { return CostTerms{}; };
  a.run = [](Communicator&, const AllReduceArgs& args) {
    std::memset(args.out, 0, static_cast<size_t>(args.count) * dtype_size(args.dtype));
  };
  return a;
}

TEST(BenchAlgorithmTest, RunsTheChosenAlgorithmAndRecordsIt) {
  const BenchOptions options = parse_bench_args({"all_reduce", "--mesh", "4", "-b", "64", "-e",
                                                 "64", "--iters", "2", "--warmup", "1", "--check"});
  Runtime runtime(4);
  algorithm_registry(runtime).add(zeroing_all_reduce());
  // Zeros are wrong wherever the reference is not zero, in every call.
  const std::optional<Workload> work = prepare_size(options, 64);
  ASSERT_TRUE(work.has_value());
  int64_t nonzero = 0;
  for (const Array& expected : work->expected) {
    nonzero += count_wrong(Array::zeros(expected.shape(), expected.dtype()), expected);
  }
  ASSERT_GT(nonzero, 0);

  const std::optional<Row> by_default = run_size(runtime, options, 64);
  ASSERT_TRUE(by_default.has_value());
  EXPECT_EQ(by_default->algorithm, "direct");
  EXPECT_FALSE(by_default->chosen_by.empty());
  EXPECT_EQ(by_default->wrong, 0);

  const std::optional<Row> named = run_size(runtime, options, 64, "zeroing_test");
  ASSERT_TRUE(named.has_value());
  EXPECT_EQ(named->algorithm, "zeroing_test");
  EXPECT_EQ(named->wrong, nonzero * (2 + 1));

  // A runtime rule chooses it when the call does not.
  algorithm_registry(runtime).add_rule({.collective = meshsim::Collective::kAllReduce,
                                        .algorithm = "zeroing_test"});
  const std::optional<Row> by_rule = run_size(runtime, options, 64);
  ASSERT_TRUE(by_rule.has_value());
  EXPECT_EQ(by_rule->algorithm, "zeroing_test");
  EXPECT_NE(by_rule->chosen_by, by_default->chosen_by);
  EXPECT_EQ(by_rule->wrong, nonzero * (2 + 1));
}

TEST(BenchAlgorithmTest, AutoRunsAnApplicableAlgorithm) {
  const BenchOptions options = parse_bench_args({"all_reduce", "--mesh", "4", "-b", "1K", "-e",
                                                 "1K", "--iters", "1", "--warmup", "0", "--check",
                                                 "--algo", "auto"});
  Runtime runtime(4);
  const std::optional<Row> row = run_size(runtime, options, 1024);
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->wrong, 0);
  std::vector<std::string> applicable;
  for (const AlgorithmInfo* info : algorithm_registry(runtime).applicable(
           call_shape(*options.collective, options.params, 4, 1, 1024))) {
    applicable.push_back(info->name);
  }
  EXPECT_THAT(applicable, ::testing::Contains(row->algorithm));
  EXPECT_FALSE(row->chosen_by.empty());
}

class SideBySideTest
    : public ::testing::TestWithParam<std::tuple<std::string_view, MeshCase>> {};

// --algo all: every algorithm applicable at some size is a column group, and
// every one of them, checked, finds nothing wrong.
TEST_P(SideBySideTest, EveryAlgorithmFindsNothingWrong) {
  const auto& [name, mesh] = GetParam();
  std::vector<std::string> args = {std::string(name), "--mesh", mesh.mesh, "-b",      "8",
                                   "-e",              "2K",     "-f",      "4",       "--iters",
                                   "1",               "--warmup", "1",     "--check", "--algo",
                                   "all"};
  if (*mesh.axes != '\0') args.insert(args.end(), {"--axes", mesh.axes});
  const BenchOptions options = parse_bench_args(args);
  std::ostringstream out;
  EXPECT_EQ(run_bench(options, out, nullptr), 0) << out.str();
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("# wrong elements: 0 OK\n")) << text;

  Runtime fresh;
  const CallShape largest = call_shape(*options.collective, options.params, options.group_size(),
                                       static_cast<int>(options.axes.size()), 2048);
  const std::string header = text.substr(0, text.find('\n'));
  EXPECT_THAT(header, HasSubstr("algorithms side by side: direct")) << header;
  for (const AlgorithmInfo* info : algorithm_registry(fresh).applicable(largest)) {
    EXPECT_THAT(header, HasSubstr(info->name)) << header;
  }
  EXPECT_THAT(text, HasSubstr("# mean busbw (GB/s): direct ")) << text;
}

std::vector<std::string_view> collectives_with_algorithms() {
  std::vector<std::string_view> names;
  for (const Collective& c : collectives()) {
    if (c.kind) names.push_back(c.name);
  }
  return names;
}

std::string side_by_side_name(
    const ::testing::TestParamInfo<std::tuple<std::string_view, MeshCase>>& info) {
  const auto& [name, mesh] = info.param;
  std::string out = std::string(name) + "_" + mesh.mesh + "_over_" + mesh.axes;
  for (char& ch : out) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(
    Collectives, SideBySideTest,
    ::testing::Combine(::testing::ValuesIn(collectives_with_algorithms()),
                       ::testing::Values(MeshCase{"4", ""}, MeshCase{"3", ""},
                                         MeshCase{"x=2,y=2", "y,x"})),
    side_by_side_name);

// The side-by-side table: one group per column, a "-" pair where an
// algorithm does not apply; csv and json: one record per size and algorithm.
TEST(SideBySideFormatTest, HoldsOneRecordPerAlgorithm) {
  const std::vector<std::string> base = {"all_reduce", "--mesh", "4", "-b", "64", "-e", "64",
                                         "--iters", "1", "--warmup", "0", "--algo", "all"};
  Runtime fresh;
  const size_t applicable = algorithm_registry(fresh)
                                .applicable(call_shape(*find_collective("all_reduce"),
                                                       BenchParams{}, 4, 1, 64))
                                .size();
  const auto count = [](const std::string& text, const std::string& marker) {
    size_t found = 0;
    for (size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + 1)) {
      ++found;
    }
    return found;
  };
  for (const char* format : {"csv", "json"}) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--format", format});
    std::ostringstream out;
    EXPECT_EQ(run_bench(parse_bench_args(args), out, nullptr), 0);
    if (std::string(format) == "csv") {
      EXPECT_EQ(count(out.str(), "\n64,16,float32,sum,-1,"), applicable) << out.str();
    } else {
      const nlohmann::json report = nlohmann::json::parse(out.str());
      std::set<std::string> algorithms;
      for (const nlohmann::json& row : report["rows"]) {
        EXPECT_EQ(row["size"], 64);
        algorithms.insert(row["algorithm"].get<std::string>());
      }
      EXPECT_EQ(report["rows"].size(), applicable) << out.str();
      EXPECT_EQ(algorithms.size(), applicable) << "one record per algorithm";
    }
  }
  std::ostringstream table;
  EXPECT_EQ(run_bench(parse_bench_args(base), table, nullptr), 0);
  EXPECT_THAT(table.str(), HasSubstr("#wrong"));
  EXPECT_THAT(table.str(), HasSubstr("# wrong elements: N/A (run with --check)"));
}

}  // namespace
}  // namespace meshsim::cli
