// Misuse of the fabric and of the registry, through the public API a user
// has: user-registered algorithms that send to a rank outside the group,
// disagree on a transfer's size or wait for a message nobody sends (each a
// clear error, never a hang or a torn read, and the runtime stays usable);
// unknown names, members choosing different algorithms, bad registrations,
// changes during a launch, MESHSIM_ALGO-style rules and their parse errors,
// and forced algorithms whose preconditions fail (error, or direct with
// set_fallback(true)).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "meshsim/collectives/algorithms/registry.h"
#include "meshsim/meshsim.h"
#include "support/expect_error.h"
#include "support/scoped_env.h"

namespace meshsim::fabric_misuse_test {
namespace {

using ::testing::HasSubstr;

// A backstop: a defect that hangs fails with TimeoutError instead.
RuntimeOptions with_timeout() {
  RuntimeOptions o;
  o.launch_timeout = std::chrono::seconds(60);
  return o;
}

// Devices 4..7, so that device ids and ranks differ in messages.
Mesh high_mesh() { return Mesh(AbstractMesh({{"x", 4}}), {4, 5, 6, 7}); }

Algorithm<AllReduceArgs> user_all_reduce(std::string name,
                                         std::function<void(Communicator&, const AllReduceArgs&)> run) {
  Algorithm<AllReduceArgs> a;
  a.name = std::move(name);
  a.description = "a test's algorithm";
  a.cost_formula = "α";
  a.cost = [](const CallShape&) { return CostTerms{1, 0, 0}; };
  a.run = std::move(run);
  return a;
}

// A correct all-reduce: rank 0 reduces in rank order and sends the result back.
void reduce_at_root(Communicator& comm, const AllReduceArgs& args) {
  const size_t bytes = static_cast<size_t>(args.count) * dtype_size(args.dtype);
  if (comm.rank() == 0) {
    if (args.out != args.in && bytes > 0) std::memcpy(args.out, args.in, bytes);
    for (int r = 1; r < comm.size(); ++r) comm.recv_reduce(r, args.out, args.count, args.dtype, args.op);
    for (int r = 1; r < comm.size(); ++r) comm.send(r, args.out, bytes);
  } else {
    comm.send(0, args.in, bytes);
    comm.recv(0, args.out, bytes);
  }
}

// After a failed launch: the same runtime runs a psum under the user
// algorithm `name` and under direct, with the right answer (1 + 2 + ... + n).
void expect_usable(Runtime& rt, const Mesh& mesh, const std::string& name) {
  for (const std::string& algorithm : {name, std::string("direct")}) {
    std::vector<int32_t> got(mesh.size());
    rt.launch(mesh, [&](DeviceContext& ctx) {
      const Array x = Array::full({3}, DType::kInt32, ctx.position() + 1);
      got[ctx.position()] = psum(ctx, x, "x", {}, algorithm).at<int32_t>({2});
    });
    EXPECT_THAT(got, ::testing::Each(mesh.size() * (mesh.size() + 1) / 2)) << algorithm;
  }
}

// --- The fabric -------------------------------------------------------------

TEST(FabricMisuseTest, SendToRankOutsideTheGroupNamesIt) {
  Runtime rt(8, with_timeout());
  AlgorithmRegistry& registry = algorithm_registry(rt);
  registry.add(user_all_reduce("send_too_far", [](Communicator& comm, const AllReduceArgs& args) {
    if (comm.rank() == 2) comm.send(comm.size() + 3, args.in, 4);  // rank 7 of 4
    comm.recv(2, args.out, 4);  // everyone else waits: the failure must cancel it
  }));
  registry.add(user_all_reduce("recv_negative", [](Communicator& comm, const AllReduceArgs& args) {
    if (comm.rank() == 1) comm.recv(-1, args.out, 4);
    comm.barrier();
  }));
  registry.add(user_all_reduce("reduce_at_root", reduce_at_root));
  const Mesh mesh = high_mesh();
  const Array x = Array::zeros({1}, DType::kInt32);
  EXPECT_ERROR(rt.launch(mesh, [&](DeviceContext& ctx) { psum(ctx, x, "x", {}, "send_too_far"); }),
               InvalidArgumentError, "rank 7");
  EXPECT_ERROR(rt.launch(mesh, [&](DeviceContext& ctx) { psum(ctx, x, "x", {}, "recv_negative"); }),
               InvalidArgumentError, "rank -1");
  expect_usable(rt, mesh, "reduce_at_root");
}

// Rank 0 sends `sent` bytes to rank 1, which receives `received`: the
// receiver raises CollectiveShapeError naming both devices before it reads
// anything, ranks 2 and 3 (waiting for a message that now never comes) are
// released, and the runtime runs the next launch.
TEST(FabricMisuseTest, SizeMismatchIsAShapeErrorNamingBothDevices) {
  struct Variant {
    const char* name;
    size_t sent, received;
    bool reduce;
  };
  const Variant variants[] = {{"recv_fewer", 16, 8, false},
                              {"recv_more", 8, 16, false},
                              {"recv_reduce_more", 8, 16, true}};
  Runtime rt(8, with_timeout());
  AlgorithmRegistry& registry = algorithm_registry(rt);
  std::atomic<int> torn{0};
  std::atomic<int> detected{0};
  for (const Variant& v : variants) {
    registry.add(user_all_reduce(v.name, [v, &torn, &detected](Communicator& comm, const AllReduceArgs&) {
      std::vector<int32_t> buffer(8, 7);
      if (comm.rank() == 0) {
        comm.send(1, buffer.data(), v.sent);
        comm.wait_sends();
      } else if (comm.rank() == 1) {
        std::vector<int32_t> target(8, -1);
        try {
          if (v.reduce) {
            comm.recv_reduce(0, target.data(), static_cast<int64_t>(v.received / 4), DType::kInt32,
                             ReduceOp::kSum);
          } else {
            comm.recv(0, target.data(), v.received);
          }
        } catch (const CollectiveShapeError&) {
          ++detected;
          if (std::any_of(target.begin(), target.end(), [](int32_t t) { return t != -1; })) ++torn;
          throw;
        }
      } else {
        comm.recv(0, buffer.data(), 4);  // never sent
      }
    }));
  }
  registry.add(user_all_reduce("reduce_at_root", reduce_at_root));
  const Mesh mesh = high_mesh();
  const Array x = Array::zeros({1}, DType::kInt32);
  for (const Variant& v : variants) {
    SCOPED_TRACE(v.name);
    bool thrown = false;
    try {
      rt.launch(mesh, [&](DeviceContext& ctx) { psum(ctx, x, "x", {}, v.name); });
    } catch (const CollectiveShapeError& e) {
      thrown = true;
      // Rank 0 is device 4, rank 1 device 5.
      EXPECT_THAT(e.what(), HasSubstr("device 4"));
      EXPECT_THAT(e.what(), HasSubstr("device 5"));
      EXPECT_THAT(e.what(), HasSubstr(std::to_string(v.sent)));
      EXPECT_THAT(e.what(), HasSubstr(std::to_string(v.received)));
    } catch (const std::exception& e) {
      thrown = true;
      ADD_FAILURE() << "expected CollectiveShapeError, got: " << e.what();
    }
    EXPECT_TRUE(thrown);
    expect_usable(rt, mesh, "reduce_at_root");
  }
  EXPECT_EQ(detected.load(), 3);
  EXPECT_EQ(torn.load(), 0) << "a receiver wrote into its buffer before raising the mismatch";
}

// A receive nobody sends to: every device ends up waiting (rank 1 in recv,
// the others in the collective), so the launch fails with DeadlockError.
TEST(FabricMisuseTest, RecvWithoutSenderIsADeadlock) {
  Runtime rt(8, with_timeout());
  AlgorithmRegistry& registry = algorithm_registry(rt);
  registry.add(user_all_reduce("orphan_recv", [](Communicator& comm, const AllReduceArgs& args) {
    if (comm.rank() == 1) comm.recv(0, args.out, 4);
  }));
  registry.add(user_all_reduce("reduce_at_root", reduce_at_root));
  const Mesh mesh = high_mesh();
  const Array x = Array::zeros({1}, DType::kInt32);
  EXPECT_ERROR(rt.launch(mesh, [&](DeviceContext& ctx) { psum(ctx, x, "x", {}, "orphan_recv"); }),
               DeadlockError, "");
  expect_usable(rt, mesh, "reduce_at_root");
}

// --- The registry -----------------------------------------------------------

TEST(RegistryMisuseTest, UnknownNameListsTheValidOnes) {
  Runtime rt(2);
  algorithm_registry(rt).add(user_all_reduce("reduce_at_root", reduce_at_root));
  const Mesh mesh = Mesh::make({{"x", 2}});
  const Array x = Array::zeros({4}, DType::kFloat32);
  bool thrown = false;
  try {
    rt.launch(mesh, [&](DeviceContext& ctx) { psum(ctx, x, "x", {}, "no_such_algorithm"); });
  } catch (const UnknownAlgorithmError& e) {
    thrown = true;
    EXPECT_THAT(e.what(), HasSubstr("no_such_algorithm"));
    for (const AlgorithmInfo* info : algorithm_registry(rt).list(Collective::kAllReduce)) {
      EXPECT_THAT(e.what(), HasSubstr(info->name));
    }
  }
  EXPECT_TRUE(thrown);
  AllGatherOptions o;
  o.algorithm = "no_such_gather";
  EXPECT_ERROR(rt.launch(mesh, [&](DeviceContext& ctx) { all_gather(ctx, x, "x", o); }),
               UnknownAlgorithmError, "no_such_gather");
  EXPECT_ERROR(algorithm_registry(rt).add_rule({.collective = Collective::kAllReduce,
                                                .algorithm = "no_such_rule_target"}),
               UnknownAlgorithmError, "no_such_rule_target");
}

TEST(RegistryMisuseTest, MembersChoosingDifferentAlgorithmsMismatch) {
  Runtime rt(4);
  algorithm_registry(rt).add(user_all_reduce("reduce_at_root", reduce_at_root));
  const Array x = Array::zeros({4}, DType::kFloat32);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 4}}),
                         [&](DeviceContext& ctx) {
                           psum(ctx, x, "x", {},
                                ctx.axis_index("x") == 2 ? "reduce_at_root" : "direct");
                         }),
               CollectiveMismatchError, "reduce_at_root");
  expect_usable(rt, Mesh::make({{"x", 4}}), "reduce_at_root");
}

TEST(RegistryMisuseTest, AddRejectsBadRegistrations) {
  Runtime rt(1);
  AlgorithmRegistry& registry = algorithm_registry(rt);
  registry.add(user_all_reduce("mine", reduce_at_root));
  EXPECT_ERROR(registry.add(user_all_reduce("", reduce_at_root)), InvalidArgumentError, "");
  EXPECT_ERROR(registry.add(user_all_reduce("mine", reduce_at_root)), InvalidArgumentError, "mine");
  EXPECT_ERROR(registry.add(user_all_reduce("direct", reduce_at_root)), InvalidArgumentError,
               "direct");
  EXPECT_ERROR(registry.add(user_all_reduce("auto", reduce_at_root)), InvalidArgumentError, "auto");
  EXPECT_ERROR(registry.add(user_all_reduce("Has Space", reduce_at_root)), InvalidArgumentError,
               "Has Space");
  EXPECT_ERROR(registry.add(user_all_reduce("no_run", nullptr)), InvalidArgumentError, "no_run");
  // Names are per collective: "mine" is free for all_gather.
  Algorithm<AllGatherArgs> gather;
  gather.name = "mine";
  gather.run = [](Communicator&, const AllGatherArgs&) {};
  EXPECT_NO_THROW(registry.add(gather));
  EXPECT_ERROR(registry.set_tunable(Collective::kAllReduce, "mine", "no_such_tunable", 1),
               InvalidArgumentError, "no_such_tunable");
}

TEST(RegistryMisuseTest, ChangesDuringALaunchAreUsageErrors) {
  Runtime rt(2);
  AlgorithmRegistry& registry = algorithm_registry(rt);
  const Mesh mesh = Mesh::make({{"x", 2}});
  auto during_launch = [&](const std::function<void()>& change) {
    rt.launch(mesh, [&](DeviceContext& ctx) {
      if (ctx.position() == 0) change();
    });
  };
  EXPECT_ERROR(during_launch([&] { registry.add(user_all_reduce("late", reduce_at_root)); }),
               RuntimeUsageError, "add");
  EXPECT_ERROR(during_launch([&] { registry.set_fallback(true); }), RuntimeUsageError,
               "set_fallback");
  EXPECT_ERROR(during_launch([&] { registry.clear_rules(); }), RuntimeUsageError, "clear_rules");
  EXPECT_ERROR(during_launch([&] { registry.set_environment_rules("psum:direct"); }),
               RuntimeUsageError, "set_environment_rules");
  EXPECT_ERROR(during_launch([&] {
                 registry.add_rule({.collective = Collective::kAllReduce, .algorithm = "direct"});
               }),
               RuntimeUsageError, "add_rule");
  // Nothing was changed, and between launches changes work.
  EXPECT_EQ(registry.find(Collective::kAllReduce, "late"), nullptr);
  EXPECT_NO_THROW(registry.add(user_all_reduce("late", reduce_at_root)));
  expect_usable(rt, mesh, "late");
}

// Two host threads share a registry: one registers algorithms while the
// other lists, finds and asks for names, costs and applicable ones. Every
// read sees a consistent table (the sanitizer jobs run this under TSan), and
// in the end all 200 additions are there, in order.
TEST(RegistryMisuseTest, HostThreadsMayReadWhileAnotherAdds) {
  constexpr int kAdds = 200;
  Runtime rt(2);
  AlgorithmRegistry& registry = algorithm_registry(rt);
  const size_t builtins = registry.list(Collective::kAllReduce).size();
  std::atomic<bool> done{false};
  std::thread reader([&] {
    const CallShape shape{.collective = Collective::kAllReduce, .group_size = 2, .bytes = 64};
    size_t seen = builtins;
    while (!done.load()) {
      const size_t listed = registry.list(Collective::kAllReduce).size();
      ASSERT_GE(listed, seen);  // additions only
      seen = listed;
      ASSERT_NE(registry.find(Collective::kAllReduce, "direct"), nullptr);
      ASSERT_THAT(registry.valid_names(Collective::kAllReduce), HasSubstr("direct"));
      ASSERT_FALSE(registry.applicable(shape).empty());
      ASSERT_GT(registry.cost_model().alpha_us, 0);
    }
  });
  for (int i = 0; i < kAdds; ++i) {
    registry.add(user_all_reduce("added_" + std::to_string(i), reduce_at_root));
  }
  done = true;
  reader.join();
  const auto listed = registry.list(Collective::kAllReduce);
  ASSERT_EQ(listed.size(), builtins + kAdds);
  for (int i = 0; i < kAdds; ++i) EXPECT_EQ(listed[builtins + i]->name, "added_" + std::to_string(i));
}

// The rule string of MESHSIM_ALGO, over user-registered algorithms so the
// test needs no particular built-in: psum (all of all_reduce) below 64 KiB
// per member runs the user's algorithm, from 64 KiB on direct; all_gather
// always runs the user's gather.
TEST(RegistryRulesTest, EnvironmentRulesChooseAsStated) {
  Runtime rt(4);
  AlgorithmRegistry& registry = algorithm_registry(rt);
  registry.add(user_all_reduce("reduce_at_root", reduce_at_root));
  Algorithm<AllGatherArgs> gather;
  gather.name = "copy_gather";
  gather.description = "every member reads every block from its owner";
  gather.cost = [](const CallShape&) { return CostTerms{}; };
  gather.run = [](Communicator& comm, const AllGatherArgs& args) {
    for (int r = 0; r < comm.size(); ++r) {
      const auto& peer = comm.peer_args<AllGatherArgs>(r);
      if (args.bytes > 0) std::memcpy(static_cast<std::byte*>(args.out) + r * args.bytes, peer.in, args.bytes);
    }
  };
  gather.reads_peer_args = true;  // the call ends with a departure barrier
  registry.add(gather);
  registry.set_environment_rules("psum:reduce_at_root:0-64K,direct:64K-;all_gather:copy_gather");

  struct Expect {
    std::string front_end;
    int64_t count;  // float32 elements
    std::string algorithm;
  };
  const std::vector<Expect> expected = {
      {"psum", 1, "reduce_at_root"},      {"psum", 16383, "reduce_at_root"},
      {"psum", 16384, "direct"},          {"pmax", 100, "reduce_at_root"},
      {"pmean", 20000, "direct"},         {"all_gather", 5, "copy_gather"},
      {"all_gather", 100000, "copy_gather"}, {"psum_scatter", 8, "direct"},
  };
  std::vector<std::vector<std::string>> seen(4);
  rt.launch(Mesh::make({{"x", 4}}), [&](DeviceContext& ctx) {
    for (const Expect& e : expected) {
      const Array x = Array::full({e.count}, DType::kFloat32, 1.0);
      Array y;
      if (e.front_end == "psum") y = psum(ctx, x, "x");
      if (e.front_end == "pmax") y = pmax(ctx, x, "x");
      if (e.front_end == "pmean") y = pmean(ctx, x, "x");
      AllGatherOptions gather;
      gather.tiled = true;
      PsumScatterOptions scatter;
      scatter.tiled = true;
      if (e.front_end == "all_gather") y = all_gather(ctx, x, "x", gather);
      if (e.front_end == "psum_scatter") y = psum_scatter(ctx, x, "x", scatter);
      const CollectiveRecord& r = ctx.collective_records().back();
      seen[ctx.position()].push_back(std::string(r.collective) + "/" + std::string(r.algorithm) +
                                     (r.chosen_by.empty() ? " (no chosen_by)" : ""));
    }
  });
  std::vector<std::string> want;
  for (const Expect& e : expected) want.push_back(e.front_end + "/" + e.algorithm);
  for (const auto& s : seen) EXPECT_EQ(s, want);
}

// The issue's own example, once the built-ins ring and bruck are registered.
TEST(RegistryRulesTest, IssueExampleRules) {
  Runtime rt(4);
  AlgorithmRegistry& registry = algorithm_registry(rt);
  if (!registry.find(Collective::kAllReduce, "ring") ||
      !registry.find(Collective::kAllGather, "bruck")) {
    GTEST_SKIP() << "needs the built-in ring and bruck";
  }
  registry.set_environment_rules("psum:ring:0-64K,direct:64K-;all_gather:bruck");
  std::vector<std::string> seen(4);
  rt.launch(Mesh::make({{"x", 4}}), [&](DeviceContext& ctx) {
    psum(ctx, Array::zeros({16383}, DType::kFloat32), "x");
    psum(ctx, Array::zeros({16384}, DType::kFloat32), "x");
    all_gather(ctx, Array::zeros({7}, DType::kInt8), "x");
    for (const CollectiveRecord& r : ctx.collective_records()) {
      seen[ctx.position()] += std::string(r.algorithm) + " ";
    }
  });
  EXPECT_THAT(seen, ::testing::Each(std::string("ring direct bruck ")));
}

TEST(RegistryRulesTest, MalformedSpecNamesTheBadPart) {
  Runtime rt(1);
  AlgorithmRegistry& registry = algorithm_registry(rt);
  EXPECT_ERROR(registry.set_environment_rules("psum:direct:0-64Q"), InvalidArgumentError, "'direct:0-64Q'");
  EXPECT_ERROR(registry.set_environment_rules("psum:direct:abc"), InvalidArgumentError, "'direct:abc'");
  EXPECT_ERROR(registry.set_environment_rules("psum:direct;no_such_collective:direct"),
               InvalidArgumentError, "'no_such_collective'");
  EXPECT_ERROR(registry.set_environment_rules("psum:direct:0-1K:extra"), InvalidArgumentError,
               "'direct:0-1K:extra'");
  EXPECT_NO_THROW(registry.set_environment_rules("pmin:direct:1K-;all_gather:direct"));
}

// A MESHSIM_ALGO from a careless script: its bytes are quoted in the message
// (an unprintable one escaped, a long value cut), not repeated whole.
TEST(RegistryRulesTest, AMalformedEnvironmentIsQuotedAndCut) {
  const std::string spec = "psum:direct:\x01" + std::string(100'000, '9');
  const testing_support::ScopedEnv garbage("MESHSIM_ALGO", spec.c_str());
  Runtime rt(1);
  try {
    rt.launch(Mesh::make({{"x", 1}}), [](DeviceContext& ctx) {
      (void)psum(ctx, Array::full({2}, DType::kInt32, 1), "x");
    });
    FAIL() << "a malformed MESHSIM_ALGO ran";
  } catch (const InvalidArgumentError& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, ::testing::HasSubstr("'psum:direct:\\x01999"));
    EXPECT_THAT(what, ::testing::HasSubstr("(100013 bytes)"));
    EXPECT_LT(what.size(), 1000u) << what.substr(0, 300);
  }
}

// A rule that would parse yet is long (a 100,000-letter name, a byte bound of
// 200 leading zeros) would name itself in every call's error and record: the
// parser refuses it, and the quoted error stays short. A name has at most 64.
TEST(RegistryRulesTest, AnOverlongRuleIsAParseError) {
  const std::string long_name = "psum:" + std::string(100, 'a');  // a rule of 100 bytes
  const std::string huge_name = "psum:" + std::string(100'000, 'a');
  const std::string long_bound = "psum:direct:" + std::string(200, '0') + "1-";
  for (const std::string& spec : {long_name, huge_name, long_bound}) {
    Runtime rt(1);
    try {
      algorithm_registry(rt).set_environment_rules(spec);
      FAIL() << "accepted a rule of " << spec.size() << " bytes";
    } catch (const InvalidArgumentError& e) {
      const std::string what = e.what();
      EXPECT_LT(what.size(), 1000u) << what.substr(0, 300);
      EXPECT_THAT(what, HasSubstr(spec == long_name ? "1 to 64 characters" : "longer than 128"));
    }
  }
}

// The algorithm a call asks for is the caller's text: quoted in the error
// (control bytes escaped, a long one cut), as the environment's is.
TEST(RegistryRulesTest, AnUnknownAlgorithmOfACallIsQuoted) {
  Runtime rt(2);
  for (const std::string& name : {std::string("ri\x01ng\x1b[31m\n"), std::string(100'000, 'r')}) {
    try {
      rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
        (void)psum(ctx, Array::full({2}, DType::kFloat32, 1), "x", {}, name);
      });
      FAIL() << "ran an unknown algorithm";
    } catch (const UnknownAlgorithmError& e) {
      const std::string what = e.what();
      EXPECT_LT(what.size(), 1000u) << what.substr(0, 300);
      if (name.size() < 100) {
        EXPECT_THAT(what, HasSubstr("unknown algorithm 'ri\\x01ng\\x1b[31m\\x0a'"));
      }
      EXPECT_EQ(what.find_first_of("\x01\x1b\n"), std::string::npos) << what;
    }
  }
}

// A MESHSIM_ALGO that does not parse fails every call, naming the bad part,
// but not the registry: the program can still reach it and replace the
// rules, and its calls then run.
TEST(RegistryRulesTest, AMalformedEnvironmentFailsCallsUntilReplaced) {
  const testing_support::ScopedEnv garbage("MESHSIM_ALGO", "psum:direct:abc");
  Runtime rt(2);
  const auto run_psum = [&] {
    rt.launch(Mesh::make({{"x", 2}}), [](DeviceContext& ctx) {
      const Array sum = psum(ctx, Array::full({2}, DType::kInt32, 1), "x");
      EXPECT_EQ(sum.at<int32_t>({1}), 2);
    });
  };
  EXPECT_ERROR(run_psum(), InvalidArgumentError, "MESHSIM_ALGO: ");
  EXPECT_ERROR(run_psum(), InvalidArgumentError, "'direct:abc'");
  AlgorithmRegistry* registry = nullptr;
  EXPECT_NO_THROW(registry = &algorithm_registry(rt));
  registry->set_environment_rules("psum:direct");
  EXPECT_NO_THROW(run_psum());
}

// A Collective outside the enum is named, not used as an index.
TEST(RegistryRulesTest, ACollectiveOutsideTheEnumIsAnError) {
  Runtime rt(1);
  AlgorithmRegistry& registry = algorithm_registry(rt);
  const auto bad = static_cast<Collective>(42);
  EXPECT_ERROR(registry.add_rule({.collective = bad, .algorithm = "direct"}), InvalidArgumentError,
               "AlgorithmRegistry::add_rule: 42 is not a Collective");
  EXPECT_ERROR(registry.list(bad), InvalidArgumentError, "AlgorithmRegistry::list: 42");
  EXPECT_ERROR(registry.find(bad, "direct"), InvalidArgumentError, "find: 42");
  EXPECT_ERROR(registry.valid_names(bad), InvalidArgumentError, "valid_names: 42");
  EXPECT_ERROR(registry.set_tunable(static_cast<Collective>(-1), "ring", "segment_bytes", 1),
               InvalidArgumentError, "set_tunable: -1 is not a Collective");
  CallShape shape;
  shape.collective = bad;
  EXPECT_ERROR(registry.applicable(shape), InvalidArgumentError, "applicable: 42");
}

// A user algorithm for powers of two only, and one whose check wants an even
// count: forced where they do not apply, each is an error naming it and the
// precondition; with set_fallback(true) the call runs direct instead.
TEST(RegistryPreconditionTest, ForcedAlgorithmWithUnmetPreconditionFailsOrFallsBack) {
  Runtime rt(3);
  AlgorithmRegistry& registry = algorithm_registry(rt);
  Algorithm<AllReduceArgs> pow2 = user_all_reduce("pow2_only", reduce_at_root);
  pow2.preconditions = kPowerOfTwoGroup;
  registry.add(pow2);
  Algorithm<AllReduceArgs> even = user_all_reduce("even_count_only", reduce_at_root);
  even.check = [](const CallShape& s) {
    return s.count % 2 == 0 ? std::string() : "count " + std::to_string(s.count) + " is odd";
  };
  registry.add(even);
  const Mesh mesh = Mesh::make({{"x", 3}});
  const Array x = Array::full({5}, DType::kInt32, 2);

  EXPECT_ERROR(rt.launch(mesh, [&](DeviceContext& ctx) { psum(ctx, x, "x", {}, "pow2_only"); }),
               AlgorithmPreconditionError, "pow2_only");
  EXPECT_ERROR(rt.launch(mesh, [&](DeviceContext& ctx) { psum(ctx, x, "x", {}, "pow2_only"); }),
               AlgorithmPreconditionError, "power of two");
  EXPECT_ERROR(rt.launch(mesh, [&](DeviceContext& ctx) { psum(ctx, x, "x", {}, "even_count_only"); }),
               AlgorithmPreconditionError, "count 5 is odd");
  // A rule chose it: the same policy.
  registry.add_rule({.collective = Collective::kAllReduce, .algorithm = "pow2_only"});
  EXPECT_ERROR(rt.launch(mesh, [&](DeviceContext& ctx) { psum(ctx, x, "x"); }),
               AlgorithmPreconditionError, "pow2_only");

  registry.set_fallback(true);
  for (const char* forced : {"pow2_only", "even_count_only", ""}) {
    SCOPED_TRACE(forced);
    std::vector<std::string> ran(3);
    std::vector<int32_t> sums(3);
    rt.launch(mesh, [&](DeviceContext& ctx) {
      sums[ctx.position()] = psum(ctx, x, "x", {}, forced).at<int32_t>({4});
      ran[ctx.position()] = std::string(ctx.collective_records().back().algorithm);
    });
    EXPECT_THAT(sums, ::testing::Each(6));
    EXPECT_THAT(ran, ::testing::Each(std::string("direct")));
  }
}

}  // namespace
}  // namespace meshsim::fabric_misuse_test
