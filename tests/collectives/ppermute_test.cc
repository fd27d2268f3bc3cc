// ppermute / pshuffle: known answers as shard_map programs, randomized perms
// against a sequential reference over meshes, axes and dtypes, back-to-back
// rounds on many devices, every perm error, and a perm mismatch.

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "meshsim/meshsim.h"
#include "support/expect_error.h"
#include "support/param_names.h"

namespace meshsim::ppermute_test {
namespace {

using Pairs = std::vector<std::pair<int, int>>;

Array ints(std::initializer_list<int32_t> values) {
  return Array::from_values<int32_t>({static_cast<int64_t>(values.size())}, values);
}

// x = [1, 2, 3, 4] over i=4: a ring shift moves each value one device on.
TEST(PpermuteTest, RingShift) {
  Runtime rt(4);
  const Pairs perm = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  const Array out = shard_map(
      rt, Mesh::make({{"i", 4}}),
      [&](DeviceContext& ctx, const Array& x) { return ppermute(ctx, x, "i", perm); }, P{"i"},
      P{"i"}, ints({1, 2, 3, 4}));
  EXPECT_TRUE(array_equal(out, ints({4, 1, 2, 3}))) << out;
}

// Indices that are no pair's destination receive zeros (JAX's docstring).
TEST(PpermuteTest, NonDestinationsReceiveZeros) {
  Runtime rt(4);
  const Pairs perm = {{0, 1}, {1, 2}};
  const Array out = shard_map(
      rt, Mesh::make({{"i", 4}}),
      [&](DeviceContext& ctx, const Array& x) { return ppermute(ctx, x, "i", perm); }, P{"i"},
      P{"i"}, ints({1, 2, 3, 4}));
  EXPECT_TRUE(array_equal(out, ints({0, 1, 2, 0}))) << out;
}

// pshuffle: the output at axis index i comes from the input at perm[i].
TEST(PshuffleTest, OutputAtIComesFromPermI) {
  Runtime rt(4);
  const std::vector<int> perm = {1, 2, 3, 0};
  const Array out = shard_map(
      rt, Mesh::make({{"i", 4}}),
      [&](DeviceContext& ctx, const Array& x) { return pshuffle(ctx, x, "i", perm); }, P{"i"},
      P{"i"}, ints({1, 2, 3, 4}));
  EXPECT_TRUE(array_equal(out, ints({2, 3, 4, 1}))) << out;
}

// JAX accepts perm indices in [-n, n): a negative one means index + n, and
// uniqueness is checked after that (issue 9 item 16).
TEST(PpermuteTest, NegativeIndicesCountFromTheEnd) {
  Runtime rt(4);
  const auto run = [&](const Pairs& perm) {
    return shard_map(
        rt, Mesh::make({{"i", 4}}),
        [&](DeviceContext& ctx, const Array& x) { return ppermute(ctx, x, "i", perm); }, P{"i"},
        P{"i"}, ints({1, 2, 3, 4}));
  };
  EXPECT_TRUE(array_equal(run({{-1, 0}}), ints({4, 0, 0, 0})));
  EXPECT_TRUE(array_equal(run({{-1, 0}}), run({{3, 0}})));
  EXPECT_TRUE(array_equal(run({{-4, -3}, {1, -4}}), ints({2, 1, 0, 0})));
  // (3, 0) and (-1, 1) both have source 3.
  EXPECT_ERROR(run({{3, 0}, {-1, 1}}), InvalidPermutationError,
               "pairs (3, 0) and (-1, 1) of perm have the same source 3");
}

// Members compare perms after normalization: (-1, 0) and (3, 0) are one perm.
TEST(PpermuteTest, NormalizedPermsMatchAcrossMembers) {
  Runtime rt(4);
  const Array out = shard_map(
      rt, Mesh::make({{"i", 4}}),
      [&](DeviceContext& ctx, const Array& x) {
        const Pairs perm = ctx.position() == 2 ? Pairs{{-1, 0}} : Pairs{{3, 0}};
        return ppermute(ctx, x, "i", perm);
      },
      P{"i"}, P{"i"}, ints({1, 2, 3, 4}));
  EXPECT_TRUE(array_equal(out, ints({4, 0, 0, 0}))) << out;
}

// Braced lists of pairs bind to the perm parameter directly (issue 9 item 18).
TEST(PpermuteTest, TakesABracedListOfPairs) {
  Runtime rt(2);
  const Array out = shard_map(
      rt, Mesh::make({{"i", 2}}),
      [](DeviceContext& ctx, const Array& x) { return ppermute(ctx, x, "i", {{0, 1}, {1, 0}}); },
      P{"i"}, P{"i"}, ints({1, 2}));
  EXPECT_TRUE(array_equal(out, ints({2, 1}))) << out;
}

struct Case {
  std::vector<std::pair<std::string, int>> mesh;
  std::vector<std::string> axes;
  Shape shape;
};

std::string case_name(const ::testing::TestParamInfo<std::tuple<Case, DType>>& info) {
  const auto& [c, dtype] = info.param;
  std::string name = testing_names::mesh_axes_name(c.mesh, c.axes);
  return name + "_" + std::string(dtype_name(dtype));
}

class PermuteReferenceTest : public ::testing::TestWithParam<std::tuple<Case, DType>> {
 protected:
  void SetUp() override {
    const auto& [c, dtype] = GetParam();
    mesh_ = std::make_unique<Mesh>(Mesh::make(c.mesh));
    for (int p = 0; p < mesh_->size(); ++p) {
      Array a = Array::empty(c.shape, DType::kFloat64);
      double value = 100.0 * p + 1;  // distinct per device and element
      for (double& v : a.mutable_span<double>()) v = value++;
      inputs_.push_back(a.astype(dtype));
    }
    groups_ = device_groups(mesh_->abstract_mesh(), c.axes);
  }
  int group_size() const { return static_cast<int>(groups_.members[0].size()); }
  // The input of the member of `position`'s group at axis index `index`.
  const Array& input_at(int position, int index) const {
    return inputs_[groups_.members[groups_.group_of[position]][index]];
  }

  std::unique_ptr<Mesh> mesh_;
  std::vector<Array> inputs_;
  DeviceGroups groups_;
  std::mt19937 rng_{2024};
};

// Several random partial perms, run back to back in one launch; each device's
// result must be its source's input, or zeros.
TEST_P(PermuteReferenceTest, PpermuteMatchesReference) {
  const auto& [c, dtype] = GetParam();
  const int n = group_size();
  std::vector<Pairs> perms;
  for (int round = 0; round < 4; ++round) {
    std::vector<int> sources(n), destinations(n);
    std::iota(sources.begin(), sources.end(), 0);
    std::iota(destinations.begin(), destinations.end(), 0);
    std::shuffle(sources.begin(), sources.end(), rng_);
    std::shuffle(destinations.begin(), destinations.end(), rng_);
    const int pairs = round == 0 ? n : static_cast<int>(rng_() % (n + 1));
    Pairs perm;
    for (int k = 0; k < pairs; ++k) perm.emplace_back(sources[k], destinations[k]);
    perms.push_back(perm);
  }
  const int devices = mesh_->size();
  std::vector<std::vector<Array>> outputs(perms.size(), std::vector<Array>(devices));
  Runtime rt(devices);
  rt.launch(*mesh_, [&, &c = c](DeviceContext& ctx) {
    for (size_t r = 0; r < perms.size(); ++r) {
      outputs[r][ctx.position()] = ppermute(ctx, inputs_[ctx.position()], c.axes, perms[r]);
    }
  });
  for (size_t r = 0; r < perms.size(); ++r) {
    for (int p = 0; p < devices; ++p) {
      Array expected = Array::zeros(c.shape, dtype);
      for (const auto& [source, destination] : perms[r]) {
        if (destination == groups_.rank_of[p]) expected = input_at(p, source);
      }
      ASSERT_TRUE(array_equal(outputs[r][p], expected))
          << "round " << r << ", position " << p << ": "
          << first_difference(outputs[r][p], expected);
    }
  }
}

TEST_P(PermuteReferenceTest, PshuffleMatchesReference) {
  const auto& [c, dtype] = GetParam();
  std::vector<int> perm(group_size());
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng_);
  const int devices = mesh_->size();
  std::vector<Array> outputs(devices);
  Runtime rt(devices);
  rt.launch(*mesh_, [&, &c = c](DeviceContext& ctx) {
    outputs[ctx.position()] = pshuffle(ctx, inputs_[ctx.position()], c.axes, perm);
  });
  for (int p = 0; p < devices; ++p) {
    const Array& expected = input_at(p, perm[groups_.rank_of[p]]);
    ASSERT_TRUE(array_equal(outputs[p], expected))
        << "position " << p << ": " << first_difference(outputs[p], expected);
  }
}

const Case kCases[] = {
    {{{"x", 1}}, {"x"}, {3}},
    {{{"x", 2}}, {"x"}, {2, 3}},
    {{{"x", 16}}, {"x"}, {5}},
    {{{"x", 4}, {"y", 4}}, {"y"}, {3}},
    {{{"x", 4}, {"y", 4}}, {"x", "y"}, {2, 2}},
    {{{"x", 4}, {"y", 4}}, {"y", "x"}, {1}},
    {{{"a", 2}, {"b", 2}, {"c", 4}}, {"c", "a"}, {3}},
    {{{"a", 2}, {"b", 2}, {"c", 4}}, {"a", "c"}, {2, 1, 2}},
    {{{"a", 2}, {"b", 3}, {"c", 2}}, {"b"}, {4}},
    {{{"a", 2}, {"b", 3}, {"c", 2}}, {"c", "b", "a"}, {}},  // scalars
};

INSTANTIATE_TEST_SUITE_P(Ppermute, PermuteReferenceTest,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::Values(DType::kFloat32, DType::kInt8,
                                                              DType::kBFloat16, DType::kBool,
                                                              DType::kInt64, DType::kFloat64)),
                         case_name);

// Many devices on two cores, many rounds with no outside synchronization:
// after k ring shifts, device p holds the value of device p - k.
TEST(PpermuteTest, ManyRoundsOnManyDevices) {
  constexpr int kDevices = 64, kRounds = 100;
  Runtime rt(kDevices);
  Pairs ring;
  for (int i = 0; i < kDevices; ++i) ring.emplace_back(i, (i + 1) % kDevices);
  std::vector<int32_t> final_values(kDevices);
  rt.launch(Mesh::make({{"x", kDevices}}), [&](DeviceContext& ctx) {
    Array x = Array::scalar<int32_t>(ctx.position());
    for (int r = 0; r < kRounds; ++r) x = ppermute(ctx, x, "x", ring);
    final_values[ctx.position()] = x.at<int32_t>({});
  });
  for (int p = 0; p < kDevices; ++p) {
    EXPECT_EQ(final_values[p], ((p - kRounds) % kDevices + kDevices) % kDevices) << p;
  }
}

struct BadPerm {
  const char* name;
  Pairs perm;
  const char* needle;
};

class PpermuteErrorTest : public ::testing::TestWithParam<BadPerm> {};

TEST_P(PpermuteErrorTest, InvalidArgumentNamesThePair) {
  Runtime rt(4);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 4}}),
                         [&](DeviceContext& ctx) {
                           ppermute(ctx, Array::zeros({1}, DType::kFloat32), "x", GetParam().perm);
                         }),
               InvalidPermutationError, GetParam().needle);
}

INSTANTIATE_TEST_SUITE_P(
    Ppermute, PpermuteErrorTest,
    ::testing::Values(
        BadPerm{"DestinationOutOfRange",
                {{0, 4}},
                "ppermute over 'x': pair (0, 4) of perm is out of range [-4, 4)"},
        BadPerm{"SourceBelowMinusN", {{1, 0}, {-5, 2}}, "pair (-5, 2) of perm is out of range"},
        BadPerm{"SameSourceAfterNormalization",
                {{3, 0}, {-1, 1}},
                "pairs (3, 0) and (-1, 1) of perm have the same source 3"},
        BadPerm{"SameDestinationAfterNormalization",
                {{0, -2}, {1, 2}},
                "pairs (0, -2) and (1, 2) of perm have the same destination 2"},
        BadPerm{"SameSource",
                {{0, 1}, {2, 3}, {0, 2}},
                "pairs (0, 1) and (0, 2) of perm have the same source 0"},
        BadPerm{"SameDestination",
                {{0, 1}, {2, 1}},
                "pairs (0, 1) and (2, 1) of perm have the same destination 1"}),
    [](const auto& info) { return info.param.name; });

struct BadShuffle {
  const char* name;
  std::vector<int> perm;
  const char* needle;
};

class PshuffleErrorTest : public ::testing::TestWithParam<BadShuffle> {};

TEST_P(PshuffleErrorTest, InvalidArgumentNamesThePerm) {
  Runtime rt(4);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 4}}),
                         [&](DeviceContext& ctx) {
                           pshuffle(ctx, Array::zeros({1}, DType::kFloat32), "x", GetParam().perm);
                         }),
               InvalidPermutationError, GetParam().needle);
}

INSTANTIATE_TEST_SUITE_P(
    Pshuffle, PshuffleErrorTest,
    ::testing::Values(
        BadShuffle{"TooShort",
                   {0, 1, 2},
                   "pshuffle over 'x': perm [0, 1, 2] has 3 entries but the axis size is 4"},
        BadShuffle{
            "OutOfRange", {0, 1, 4, 2}, "perm [0, 1, 4, 2] has perm[2] = 4, out of range [0, 4)"},
        BadShuffle{"Repeat",
                   {3, 1, 3, 0},
                   "perm [3, 1, 3, 0] is not a permutation of range(4): 3 appears at entries 0 "
                   "and 2"}),
    [](const auto& info) { return info.param.name; });

TEST(PpermuteTest, UnknownAxisIsAnAxisError) {
  Runtime rt(2);
  const Pairs perm = {{0, 1}};
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [&](DeviceContext& ctx) {
                           ppermute(ctx, Array::zeros({1}, DType::kFloat32), "z", perm);
                         }),
               UnknownAxisError, "ppermute over 'z': unknown axis 'z'");
}

TEST(PpermuteTest, DifferentPermOnOneDeviceIsAMismatch) {
  Runtime rt(4);
  const Pairs perm = {{0, 1}, {1, 0}};
  const Pairs other = {{0, 1}};
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 4}}),
                         [&](DeviceContext& ctx) {
                           ppermute(ctx, Array::zeros({1}, DType::kFloat32), "x",
                                    ctx.position() == 2 ? other : perm);
                         }),
               CollectiveMismatchError,
               "device 0 called ppermute(float32(1), perm=[0, 1, 1, 0]) but device 2 called "
               "ppermute(float32(1), perm=[0, 1])");
}

TEST(PshuffleTest, DifferentPermOnOneDeviceIsAMismatch) {
  Runtime rt(2);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [&](DeviceContext& ctx) {
                           const std::vector<int> perm = ctx.position() == 0
                                                             ? std::vector<int>{0, 1}
                                                             : std::vector<int>{1, 0};
                           pshuffle(ctx, Array::zeros({1}, DType::kFloat32), "x", perm);
                         }),
               CollectiveMismatchError,
               "device 0 called pshuffle(float32(1), perm=[0, 1]) but device 1 called "
               "pshuffle(float32(1), perm=[1, 0])");
}

}  // namespace
}  // namespace meshsim::ppermute_test
