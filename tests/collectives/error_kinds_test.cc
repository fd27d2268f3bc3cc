// One exception type per kind of defect, the same wherever it is detected
// (issue 9 item 17): every row triggers one defect in one place — a spec, a
// sharding, shard_map, a collective — and checks the exact dynamic type, that
// the row's broader base class catches it, and that the message names where
// it was found.

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <typeinfo>
#include <vector>

#include "meshsim/meshsim.h"
#include "meshsim/runtime/comm/internal/collective_call.h"
#include "support/param_names.h"

namespace meshsim::error_kinds_test {
namespace {

struct Kind {
  std::string name;
  std::function<void()> trigger;
  const std::type_info* exact;
  // Catches by the broader class; returns what() or "" if nothing was thrown.
  std::function<std::string(const std::function<void()>&)> catch_base;
  std::string needle;
};

void PrintTo(const Kind& k, std::ostream* os) { *os << k.name; }

template <class Exact, class Base>
Kind kind(std::string name, std::function<void()> trigger, std::string needle) {
  return Kind{std::move(name), std::move(trigger), &typeid(Exact),
              [](const std::function<void()>& f) -> std::string {
                try {
                  f();
                } catch (const Base& e) {
                  return e.what();
                }
                return "";
              },
              std::move(needle)};
}

// Runs `body` on every device of a 4-device mesh (x=4) or the given mesh.
void on_mesh(const Mesh& mesh, const std::function<void(DeviceContext&)>& body) {
  Runtime rt(mesh.size());
  rt.launch(mesh, body);
}
void on_x4(const std::function<void(DeviceContext&)>& body) {
  on_mesh(Mesh::make({{"x", 4}}), body);
}

Array f32(Shape shape) { return Array::zeros(std::move(shape), DType::kFloat32); }

Array run_shard_map(PartitionSpec in, PartitionSpec out, Array x) {
  Runtime rt(4);
  return shard_map(
      rt, Mesh::make({{"x", 2}, {"y", 2}}), [](DeviceContext&, const Array& s) { return s; },
      in, out, x);
}

std::vector<Kind> kinds() {
  const AbstractMesh mesh({{"x", 2}, {"y", 2}});
  return {
      // Unknown axis: a spec, a sharding, shard_map, collectives, axis_index.
      kind<UnknownAxisError, AxisError>(
          "UnknownAxisInSpec", [=] { P{"z"}.validate(mesh, 1); }, "unknown axis 'z'"),
      kind<UnknownAxisError, AxisError>(
          "UnknownAxisInShardMap", [] { run_shard_map(P{"z"}, P{}, f32({4})); },
          "shard_map input 0 (spec PartitionSpec('z')): unknown axis 'z'"),
      kind<UnknownAxisError, AxisError>(
          "UnknownAxisInPsum", [] { on_x4([](DeviceContext& ctx) { psum(ctx, f32({1}), "z"); }); },
          "psum over 'z': unknown axis 'z'"),
      kind<UnknownAxisError, AxisError>(
          "UnknownAxisInAllGather",
          [] { on_x4([](DeviceContext& ctx) { all_gather(ctx, f32({1}), {"x", "w"}); }); },
          "all_gather over ('x', 'w'): unknown axis 'w'"),
      kind<UnknownAxisError, AxisError>(
          "UnknownAxisInPmean", [] { on_x4([](DeviceContext& ctx) { pmean(ctx, f32({1}), "z"); }); },
          "pmean over 'z': unknown axis 'z'"),
      kind<UnknownAxisError, AxisError>(
          "UnknownAxisInPsend",
          [] { on_x4([](DeviceContext& ctx) { psend(ctx, f32({1}), "z", {{0, 1}}); }); },
          "psend over 'z': unknown axis 'z'"),
      kind<UnknownAxisError, AxisError>(
          "UnknownAxisInAxisIndex",
          [] { on_x4([](DeviceContext& ctx) { axis_index(ctx, "z"); }); },
          "axis_index over 'z': unknown axis 'z'"),
      // Duplicate axis.
      kind<DuplicateAxisError, AxisError>(
          "DuplicateAxisInSpec", [=] { (P{{"x", "x"}}).validate(mesh, 1); },
          "axis 'x' is used twice"),
      kind<DuplicateAxisError, AxisError>(
          "DuplicateAxisInShardMap", [] { run_shard_map(P{}, P{"y", "y"}, f32({4})); },
          "shard_map output 0 (spec PartitionSpec('y', 'y')): axis 'y' is used twice"),
      kind<DuplicateAxisError, AxisError>(
          "DuplicateAxisInBothSpecsNamesTheInput",
          [] { run_shard_map(P{"y", "y"}, P{"y", "y"}, f32({4, 4})); },
          "shard_map input 0 (spec PartitionSpec('y', 'y')): axis 'y' is used twice"),
      kind<DuplicateAxisError, AxisError>(
          "DuplicateAxisInPsum",
          [] { on_x4([](DeviceContext& ctx) { psum(ctx, f32({1}), {"x", "x"}); }); },
          "psum over ('x', 'x'): axis 'x' is listed twice"),
      kind<DuplicateAxisError, AxisError>(
          "DuplicateAxisInAxisSize",
          [] { on_x4([](DeviceContext& ctx) { axis_size(ctx, {"x", "x"}); }); },
          "axis_size over ('x', 'x'): axis 'x' is listed twice"),
      // A spec longer than the array's rank.
      kind<SpecRankError, SpecError>(
          "SpecRankInSpec", [=] { (P{"x", nullptr}).validate(mesh, 1); },
          "has 2 entries but the array has rank 1"),
      kind<SpecRankError, SpecError>(
          "SpecRankInShardMap", [] { run_shard_map(P{"x", "y"}, P{}, f32({4})); },
          "shard_map input 0 (spec PartitionSpec('x', 'y')): PartitionSpec('x', 'y') has 2 "
          "entries"),
      // A dimension its shards do not divide.
      kind<IndivisibleShardError, ShapeError>(
          "IndivisibleInShardShape", [=] { shard_shape(mesh, P{"x"}, Shape{3}); },
          "dimension 0 of size 3 is not divisible by 2"),
      kind<IndivisibleShardError, ShapeError>(
          "IndivisibleInShardMap", [] { run_shard_map(P{{"x", "y"}}, P{}, f32({6})); },
          "shard_map input 0 (spec PartitionSpec(('x', 'y'))): cannot shard shape (6)"),
      // Invalid axis_index_groups: the mesh layer and collectives.
      kind<GroupError, InvalidArgumentError>(
          "InvalidGroupsInValidate",
          [=] {
            validate_axis_index_groups(mesh, std::vector<std::string>{"x"}, {{0}, {0, 1}}, false);
          },
          "index 0 appears twice"),
      kind<GroupError, InvalidArgumentError>(
          "InvalidGroupsInPsum",
          [] { on_x4([](DeviceContext& ctx) { psum(ctx, f32({1}), "x", {{0, 1}, {2}}); }); },
          "psum over 'x': axis_index_groups [[0, 1], [2]]"),
      kind<GroupError, InvalidArgumentError>(
          "UnequalGroupsInAllGather",
          [] {
            on_x4([](DeviceContext& ctx) {
              all_gather(ctx, f32({1}), "x", {.axis_index_groups = {{0, 1, 2}, {3}}});
            });
          },
          "all_gather over 'x': axis_index_groups [[0, 1, 2], [3]]"),
      // Invalid permutations.
      kind<InvalidPermutationError, InvalidArgumentError>(
          "InvalidPermutationInPpermute",
          [] { on_x4([](DeviceContext& ctx) { ppermute(ctx, f32({1}), "x", {{0, 4}}); }); },
          "ppermute over 'x': pair (0, 4) of perm is out of range [-4, 4)"),
      kind<InvalidPermutationError, InvalidArgumentError>(
          "InvalidPermutationInPshuffle",
          [] { on_x4([](DeviceContext& ctx) { pshuffle(ctx, f32({1}), "x", {0, 0, 1, 2}); }); },
          "pshuffle over 'x': perm [0, 0, 1, 2] is not a permutation"),
      kind<InvalidPermutationError, InvalidArgumentError>(
          "InvalidPermutationInPsend",
          [] {
            on_x4([](DeviceContext& ctx) { psend(ctx, f32({1}), "x", {{0, 1}, {0, 2}}); });
          },
          "psend over 'x': pairs (0, 1) and (0, 2) of perm have the same source 0"),
      kind<InvalidPermutationError, InvalidArgumentError>(
          "InvalidPermutationInPrecv",
          [] {
            on_x4([](DeviceContext& ctx) {
              precv(ctx, Token{}, {1}, DType::kFloat32, "x", {{0, 1}, {2, 1}});
            });
          },
          "precv over 'x': pairs (0, 1) and (2, 1) of perm have the same destination 1"),
      // Collective shape requirements.
      kind<CollectiveShapeError, ShapeError>(
          "CollectiveShapeAxisOutOfRange",
          [] { on_x4([](DeviceContext& ctx) { all_gather(ctx, f32({2}), "x", {.axis = 2}); }); },
          "all_gather over 'x': axis=2 is out of range [-2, 2)"),
      kind<CollectiveShapeError, ShapeError>(
          "CollectiveShapeNotDivisible",
          [] {
            on_x4([](DeviceContext& ctx) { psum_scatter(ctx, f32({6}), "x", {.tiled = true}); });
          },
          "psum_scatter over 'x': scatter_dimension=0 of x of shape (6) has size 6"),
      kind<CollectiveShapeError, ShapeError>(
          "CollectiveShapeAllToAll",
          [] { on_x4([](DeviceContext& ctx) { all_to_all(ctx, f32({3}), "x", 0, 0); }); },
          "all_to_all over 'x': split_axis=0 of x of shape (3) has size 3"),
      kind<CollectiveShapeError, ShapeError>(
          "CollectiveShapePrecv",
          [] {
            on_mesh(Mesh::make({{"x", 2}}), [](DeviceContext& ctx) {
              const Token t = psend(ctx, f32({2}), "x", {{0, 1}});
              precv(ctx, t, {3}, DType::kFloat32, "x", {{0, 1}});
            });
          },
          "expected float32(3) but axis index 0 (device 0) sent float32(2)"),
      // Invalid arguments no narrower class describes.
      kind<InvalidArgumentError, Error>(
          "InvalidArgumentPbroadcastSource",
          [] { on_x4([](DeviceContext& ctx) { pbroadcast(ctx, f32({1}), "x", 4); }); },
          "pbroadcast over 'x': source 4 is out of range"),
      kind<InvalidArgumentError, Error>(
          "InvalidArgumentPargmaxAxes",
          [] {
            on_mesh(Mesh::make({{"x", 2}, {"y", 2}}),
                    [](DeviceContext& ctx) { pargmax(ctx, f32({1}), {"x", "y"}); });
          },
          "pargmax only accepts a single axis"),
      // Replication, mismatch, deadlock, timeout, usage.
      kind<ReplicationError, Error>(
          "Replication",
          [] {
            Runtime rt(2);
            shard_map(
                rt, Mesh::make({{"x", 2}}),
                [](DeviceContext& ctx, const Array&) {
                  return Array::full({1}, DType::kFloat32, ctx.position());
                },
                P{}, P{}, f32({1}));
          },
          "is not replicated"),
      kind<CollectiveMismatchError, Error>(
          "Mismatch",
          [] {
            on_x4([](DeviceContext& ctx) {
              all_gather(ctx, f32({1}), "x", {.tiled = ctx.position() == 0});
            });
          },
          "tiled=true"),
      kind<DeadlockError, Error>(
          "Deadlock",
          [] {
            on_mesh(Mesh::make({{"x", 2}}), [](DeviceContext& ctx) {
              precv(ctx, Token{}, {1}, DType::kFloat32, "x", {{0, 1}});
            });
          },
          "precv"),
      kind<TimeoutError, Error>(
          "Timeout",
          [] {
            // Device 1 waits in psum for device 0, busy in its own code for 8
            // times the timeout (as runtime_test's timeout test): not a
            // deadlock (device 0 is not blocked inside meshsim), so only the
            // timeout ends the launch.
            Runtime rt(2, {.launch_timeout = std::chrono::milliseconds(50)});
            rt.launch(Mesh::make({{"x", 2}}), [](DeviceContext& ctx) {
              if (ctx.position() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(400));
              psum(ctx, f32({1}), "x");
            });
          },
          "psum"),
      kind<RuntimeUsageError, Error>(
          "Usage",
          [] {
            on_mesh(Mesh::make({{"x", 1}}), [](DeviceContext& ctx) {
              Pending p = psum_start(ctx, f32({1}), "x");
              p.done();
              p.done();
            });
          },
          "psum_done called twice"),
  };
}

class ErrorKindTest : public ::testing::TestWithParam<Kind> {};

TEST_P(ErrorKindTest, ThrowsTheTypeOfItsDefect) {
  const Kind& k = GetParam();
  try {
    k.trigger();
    ADD_FAILURE() << "nothing thrown";
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(typeid(e).name()), std::string(k.exact->name())) << e.what();
    EXPECT_NE(std::string(e.what()).find(k.needle), std::string::npos) << e.what();
  }
  EXPECT_NE(k.catch_base(k.trigger), "");
}

INSTANTIATE_TEST_SUITE_P(Kinds, ErrorKindTest, ::testing::ValuesIn(kinds()),
                         [](const auto& info) { return info.param.name; });

// Booleans in a mismatch message read true / false, numbers stay numbers.
TEST(CollectiveCallTest, DescribePrintsBooleansAsTrueFalse) {
  const Shape shape = {4, 2};
  CollectiveCall call("all_gather", DType::kFloat32, shape);
  call.param("axis", 1).param("tiled", true).param("flag", false);
  EXPECT_EQ(call.describe(), "all_gather(float32(4, 2), axis=1, tiled=true, flag=false)");
}

}  // namespace
}  // namespace meshsim::error_kinds_test
