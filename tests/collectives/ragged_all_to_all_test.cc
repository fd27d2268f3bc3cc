// ragged_all_to_all: the JAX docstring example as a shard_map program,
// randomized ragged layouts against a sequential reference (meshes, tuple
// axes, axis_index_groups, several slices per peer, dtypes, index dtypes),
// every argument error, and a mismatch.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>
#include <typeinfo>

#include "meshsim/meshsim.h"
#include "support/expect_error.h"
#include "support/param_names.h"

namespace meshsim::ragged_all_to_all_test {
namespace {

Array i32(std::initializer_list<int32_t> values) {
  return Array::from_values<int32_t>({static_cast<int64_t>(values.size())}, values);
}

// The arguments of one device, in ragged_all_to_all's order.
struct Args {
  Array operand, output, input_offsets, send_sizes, output_offsets, recv_sizes;
};

// The docstring's arguments at axis index 0 and 1 of an axis of size 2.
Args docstring_args(int index) {
  if (index == 0) {
    return {i32({1, 2, 2}), i32({0, 0, 0, 0}), i32({0, 1}), i32({1, 2}), i32({0, 0}), i32({1, 1})};
  }
  return {i32({3, 4, 0}), i32({0, 0, 0, 0}), i32({0, 1}), i32({1, 1}), i32({1, 2}), i32({2, 1})};
}

TEST(RaggedAllToAllTest, JaxDocstringExample) {
  Runtime rt(2);
  // The global arrays: index 0's shard, then index 1's.
  const std::vector<Array> inputs = {i32({1, 2, 2, 3, 4, 0}), i32({0, 0, 0, 0, 0, 0, 0, 0}),
                                     i32({0, 1, 0, 1}),       i32({1, 2, 1, 1}),
                                     i32({0, 0, 1, 2}),       i32({1, 1, 2, 1})};
  const std::vector<PartitionSpec> in_specs(6, P{"x"});
  const std::vector<PartitionSpec> out_specs = {P{"x"}};
  const std::vector<Array> out = shard_map(
      rt, Mesh::make({{"x", 2}}),
      [](DeviceContext& ctx, std::span<const Array> in) {
        return std::vector<Array>{
            ragged_all_to_all(ctx, in[0], in[1], in[2], in[3], in[4], in[5], "x")};
      },
      in_specs, out_specs, inputs);
  // Index 0: [1, 3, 0, 0]; index 1: [2, 2, 4, 0].
  EXPECT_TRUE(array_equal(out[0], i32({1, 3, 0, 0, 2, 2, 4, 0}))) << out[0];
}

struct Case {
  std::vector<std::pair<std::string, int>> mesh;
  std::vector<std::string> axes;
  AxisIndexGroups groups;
  int per_peer;     // slices per peer: the index arrays have group size * per_peer entries
  Shape row_shape;  // the dims after dim 0
};

// The case, the data dtype, the index arrays' dtype, and the algorithm.
using Param = std::tuple<Case, DType, DType, std::string>;

std::string case_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& [c, dtype, index_dtype, algorithm] = info.param;
  std::string name = testing_names::mesh_axes_name(c.mesh, c.axes, c.groups);
  name +=
      "_" + std::to_string(c.per_peer) + "per_peer_rank" + std::to_string(c.row_shape.size() + 1);
  return name + "_" + std::string(dtype_name(dtype)) + "_" + std::string(dtype_name(index_dtype)) +
         "_" + algorithm;
}

class RaggedReferenceTest : public ::testing::TestWithParam<Param> {};

// Random slice sizes, random gaps, and a shuffled layout on every receiver;
// the reference applies the docstring's SEND / RECEIVE loops one row at a time.
TEST_P(RaggedReferenceTest, MatchesSequentialReference) {
  const auto& [c, dtype, index_dtype, algorithm] = GetParam();
  const Mesh mesh = Mesh::make(c.mesh);
  const int devices = mesh.size();
  const DeviceGroups groups = device_groups(mesh.abstract_mesh(), c.axes, c.groups);
  const int n = static_cast<int>(groups.members[0].size());
  const int spd = c.per_peer;
  const int entries = n * spd;
  const int64_t rows = 5 * entries;  // room for every slice (<= 3 rows) and gap (<= 1 row)
  const int64_t row_elements = num_elements(c.row_shape);
  std::mt19937 rng(99);

  // Index arrays per mesh position, built group by group.
  std::vector<std::vector<int64_t>> input_offsets(devices, std::vector<int64_t>(entries));
  auto send_sizes = input_offsets, output_offsets = input_offsets, recv_sizes = input_offsets;
  for (const auto& members : groups.members) {
    for (int s = 0; s < n; ++s) {
      int64_t offset = 0;
      for (int e = 0; e < entries; ++e) {
        send_sizes[members[s]][e] = rng() % 4;
        offset += rng() % 2;
        input_offsets[members[s]][e] = offset;
        offset += send_sizes[members[s]][e];
      }
    }
    for (int r = 0; r < n; ++r) {
      std::vector<int> order(entries);  // receiver r's entries i = s * spd + t, shuffled
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      int64_t offset = 0;
      for (int i : order) {
        const int s = i / spd, e = r * spd + i % spd;  // sender s's entry for r
        offset += rng() % 2;
        output_offsets[members[s]][e] = offset;
        recv_sizes[members[r]][i] = send_sizes[members[s]][e];
        offset += send_sizes[members[s]][e];
      }
    }
  }
  Shape shape = {rows};
  shape.insert(shape.end(), c.row_shape.begin(), c.row_shape.end());
  const auto index_array = [&, index_dtype = index_dtype](const std::vector<int64_t>& v) {
    return Array::from_values<int64_t>({entries}, v).astype(index_dtype);
  };
  std::vector<Array> operands64, outputs64;
  std::vector<Args> args;
  for (int p = 0; p < devices; ++p) {
    Array operand = Array::empty(shape, DType::kFloat64), output = operand.clone();
    auto in = operand.mutable_span<double>();
    auto out = output.mutable_span<double>();
    for (int64_t k = 0; k < operand.size(); ++k) {
      in[k] = 1000.0 * p + k + 1;
      out[k] = -(1000.0 * p + k + 1);
    }
    operands64.push_back(operand);
    outputs64.push_back(output);
    args.push_back({operand.astype(dtype), output.astype(dtype), index_array(input_offsets[p]),
                    index_array(send_sizes[p]), index_array(output_offsets[p]),
                    index_array(recv_sizes[p])});
  }
  std::vector<Array> outputs_before;
  for (const Args& a : args) outputs_before.push_back(a.output.clone());

  std::vector<Array> results(devices);
  Runtime rt(devices);
  rt.launch(mesh, [&, &c = c, &algorithm = algorithm](DeviceContext& ctx) {
    const Args& a = args[ctx.position()];
    results[ctx.position()] =
        ragged_all_to_all(ctx, a.operand, a.output, a.input_offsets, a.send_sizes, a.output_offsets,
                          a.recv_sizes, c.axes, c.groups, algorithm);
  });

  for (int p = 0; p < devices; ++p) {
    const auto& members = groups.members[groups.group_of[p]];
    const int r = groups.rank_of[p];
    Array expected = outputs64[p].clone();
    auto out = expected.mutable_span<double>();
    for (int s = 0; s < n; ++s) {
      const int q = members[s];
      const auto in = operands64[q].span<double>();
      for (int t = 0; t < spd; ++t) {
        const int e = r * spd + t;
        for (int64_t row = 0; row < send_sizes[q][e]; ++row) {
          for (int64_t k = 0; k < row_elements; ++k) {
            out[(output_offsets[q][e] + row) * row_elements + k] =
                in[(input_offsets[q][e] + row) * row_elements + k];
          }
        }
      }
    }
    expected = expected.astype(dtype);
    ASSERT_TRUE(array_equal(results[p], expected))
        << "position " << p << ": " << first_difference(results[p], expected);
    ASSERT_TRUE(array_equal(args[p].output, outputs_before[p])) << "the caller's output changed";
  }
}

const Case kCases[] = {
    {{{"x", 1}}, {"x"}, {}, 1, {}},
    {{{"x", 2}}, {"x"}, {}, 1, {3}},
    {{{"x", 2}}, {"x"}, {}, 3, {}},
    {{{"x", 8}}, {"x"}, {}, 1, {2}},
    {{{"x", 4}, {"y", 4}}, {"y"}, {}, 1, {}},
    {{{"x", 4}, {"y", 4}}, {"x", "y"}, {}, 1, {2}},
    {{{"x", 4}, {"y", 4}}, {"y", "x"}, {}, 2, {}},
    {{{"x", 4}, {"y", 2}}, {"x"}, {{0, 3}, {2, 1}}, 2, {1}},
    {{{"a", 2}, {"b", 2}, {"c", 4}}, {"c", "a"}, {}, 1, {2, 2}},
    {{{"a", 2}, {"b", 2}, {"c", 4}}, {"a", "c"}, {{0, 1, 2, 3}, {7, 6, 5, 4}}, 1, {}},
};

INSTANTIATE_TEST_SUITE_P(RaggedAllToAll, RaggedReferenceTest,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::Values(DType::kFloat32, DType::kInt8,
                                                              DType::kBFloat16, DType::kBool,
                                                              DType::kFloat64),
                                            ::testing::Values(DType::kInt32, DType::kInt64),
                                            ::testing::Values("direct", "pairwise", "linear")),
                         case_name);

// One broken argument on top of the docstring example.
struct BadArgs {
  const char* name;
  std::function<void(int index, Args&)> mutate;
  const std::type_info* type;
  const char* needle;
};

class RaggedErrorTest : public ::testing::TestWithParam<BadArgs> {};

TEST_P(RaggedErrorTest, NamesTheCulprit) {
  Runtime rt(2);
  const BadArgs& bad = GetParam();
  bool thrown = false;
  try {
    rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
      Args a = docstring_args(ctx.position());
      bad.mutate(ctx.position(), a);
      ragged_all_to_all(ctx, a.operand, a.output, a.input_offsets, a.send_sizes, a.output_offsets,
                        a.recv_sizes, "x");
    });
  } catch (const InvalidArgumentError& e) {
    thrown = true;
    EXPECT_EQ(typeid(e), *bad.type) << e.what();
    EXPECT_THAT(e.what(), ::testing::HasSubstr(bad.needle));
  }
  EXPECT_TRUE(thrown);
}

INSTANTIATE_TEST_SUITE_P(
    RaggedAllToAll, RaggedErrorTest,
    ::testing::Values(
        BadArgs{"OutputDtype", [](int, Args& a) { a.output = a.output.astype(DType::kFloat32); },
                &typeid(DTypeError), "operand is int32 but output is float32"},
        BadArgs{"IndexDtype",
                [](int, Args& a) { a.send_sizes = a.send_sizes.astype(DType::kFloat32); },
                &typeid(DTypeError), "send_sizes must be int32 or int64, got float32"},
        BadArgs{"IndexRank",
                [](int, Args& a) {
                  a.recv_sizes = a.recv_sizes.reshape({1, 2});
                },
                &typeid(CollectiveShapeError), "recv_sizes must have rank 1, got shape (1, 2)"},
        BadArgs{"IndexLength",
                [](int, Args& a) {
                  a.output_offsets = i32({0, 0, 0});
                },
                &typeid(CollectiveShapeError), "output_offsets has 3 entries but input_offsets has 2"},
        BadArgs{"NotAMultipleOfTheGroupSize",
                [](int, Args& a) {
                  a.input_offsets = a.send_sizes = a.output_offsets = a.recv_sizes = i32({0, 0, 0});
                },
                &typeid(CollectiveShapeError),
                "the index arrays have 3 entries, not a positive multiple of the group size 2"},
        BadArgs{"OutputDims",
                [](int, Args& a) {
                  a.output = a.output.reshape({4, 1});
                },
                &typeid(CollectiveShapeError),
                "operand (3) and output (4, 1) must have rank >= 1 and the same dims after dim 0"},
        BadArgs{"NegativeInputOffset",
                [](int index, Args& a) {
                  if (index == 1) a.input_offsets = i32({-1, 1});
                },
                &typeid(InvalidArgumentError),
                "entry 0 (to peer 0 (device 0)): input_offsets[0] = -1 is negative"},
        BadArgs{"NegativeSendSize",
                [](int index, Args& a) {
                  if (index == 0) a.send_sizes = i32({1, -2});
                },
                &typeid(InvalidArgumentError),
                "entry 1 (to peer 1 (device 1)): send_sizes[1] = -2 is negative"},
        BadArgs{"NegativeRecvSize",
                [](int index, Args& a) {
                  if (index == 0) a.recv_sizes = i32({-1, 1});
                },
                &typeid(InvalidArgumentError),
                "entry 0 (from peer 0 (device 0)): recv_sizes[0] = -1 is negative"},
        BadArgs{"PastTheOperand",
                [](int index, Args& a) {
                  if (index == 0) a.input_offsets = i32({0, 2});
                },
                &typeid(InvalidArgumentError),
                "entry 1 (to peer 1 (device 1)): input_offsets[1] = 2 plus send_sizes[1] = 2 "
                "exceeds the operand's 3 rows"},
        BadArgs{"PastTheOutput",
                [](int index, Args& a) {
                  if (index == 1) a.output_offsets = i32({1, 4});
                },
                &typeid(InvalidArgumentError),
                "entry 1 (to peer 1 (device 1)): output_offsets[1] = 4 plus send_sizes[1] = 1 "
                "exceeds the receiver's 4 output rows"},
        BadArgs{"RecvSizesDisagree",
                [](int index, Args& a) {
                  if (index == 1) a.recv_sizes = i32({1, 1});
                },
                &typeid(InvalidArgumentError),
                "recv_sizes[0] = 1 on peer 1 (device 1) but peer 0 (device 0) sends it "
                "send_sizes[1] = 2"}),
    [](const auto& info) { return info.param.name; });

TEST(RaggedAllToAllTest, DifferentOutputRowsIsAMismatch) {
  Runtime rt(2);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [](DeviceContext& ctx) {
                           Args a = docstring_args(ctx.position());
                           if (ctx.position() == 1) a.output = i32({0, 0, 0, 0, 0});
                           ragged_all_to_all(ctx, a.operand, a.output, a.input_offsets,
                                             a.send_sizes, a.output_offsets, a.recv_sizes, "x");
                         }),
               CollectiveMismatchError,
               "device 0 called ragged_all_to_all(int32(3), output_rows=4, entries=2) but device 1 "
               "called ragged_all_to_all(int32(3), output_rows=5, entries=2)");
}

TEST(RaggedAllToAllTest, UnevenGroupsAreAGroupError) {
  Runtime rt(3);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 3}}),
                         [](DeviceContext& ctx) {
                           const Array z = i32({0});
                           ragged_all_to_all(ctx, z, z, z, z, z, z, "x", {{0}, {1, 2}});
                         }),
               GroupError, "axis_index_groups [[0], [1, 2]] must all have the same size");
}

}  // namespace
}  // namespace meshsim::ragged_all_to_all_test
