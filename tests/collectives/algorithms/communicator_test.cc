// Communicator and the algorithm path of the front-ends, through a small
// user-registered all-reduce (every member sends its input to rank 0, which
// reduces in rank order and sends the result back): results against a
// sequential reference, records of what ran, segmentation, and the send /
// receive size check.

#include "meshsim/collectives/algorithms/communicator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "meshsim/meshsim.h"
#include "tests/support/expect_error.h"

namespace meshsim::communicator_test {
namespace {

// Rank 0 gathers, reduces in rank order and sends back.
Algorithm<AllReduceArgs> star_all_reduce() {
  Algorithm<AllReduceArgs> a;
  a.name = "star";
  a.description = "gather to rank 0, reduce, send back";
  a.cost_formula = "2(n-1)α + 2(n-1)·Sβ + (n-1)·Sγ";
  a.cost = [](const CallShape& s) {
    const double n = s.group_size, S = static_cast<double>(s.bytes);
    return CostTerms{2 * (n - 1), 2 * (n - 1) * S, (n - 1) * S};
  };
  a.tunables = {{"segment_bytes", 0, "bytes per descriptor (0: one)"}};
  a.run = [](Communicator& comm, const AllReduceArgs& args) {
    const size_t bytes = static_cast<size_t>(args.count) * dtype_size(args.dtype);
    if (bytes > 0) std::memcpy(args.out, args.in, bytes);
    if (comm.rank() == 0) {
      for (int r = 1; r < comm.size(); ++r) {
        comm.recv_reduce(r, args.out, args.count, args.dtype, args.op);
      }
      for (int r = 1; r < comm.size(); ++r) comm.send(r, args.out, bytes);
    } else {
      comm.send(0, args.in, bytes);
      comm.recv(0, args.out, bytes);
    }
  };
  return a;
}

TEST(CommunicatorTest, UserAlgorithmMatchesASequentialSum) {
  for (int64_t segment : {0, 64, 1000}) {
    Runtime rt(5);
    AlgorithmRegistry& registry = algorithm_registry(rt);
    registry.add(star_all_reduce());
    registry.set_tunable(Collective::kAllReduce, "star", "segment_bytes", segment);
    const Mesh mesh = Mesh::make({{"x", 5}});
    constexpr int64_t kCount = 1000;
    std::vector<Array> results(5);
    std::vector<std::string> algorithms(5);
    rt.launch(mesh, [&](DeviceContext& ctx) {
      Array x = Array::iota({kCount}, DType::kInt32);
      for (int32_t& v : x.mutable_span<int32_t>()) v = v * 10 + ctx.position();
      results[ctx.position()] = psum(ctx, x, "x", {}, "star");
      algorithms[ctx.position()] = std::string(ctx.collective_records().back().algorithm) + "/" +
                                   std::string(ctx.collective_records().back().chosen_by);
    });
    for (int d = 0; d < 5; ++d) {
      EXPECT_EQ(algorithms[d], "star/call");
      for (int64_t i = 0; i < kCount; ++i) {
        ASSERT_EQ(results[d].span<int32_t>()[i], static_cast<int32_t>(50 * i + 10))
            << "segment " << segment << " device " << d << " element " << i;
      }
    }
  }
}

TEST(CommunicatorTest, DefaultIsDirectAndRecorded) {
  Runtime rt(2);
  std::vector<std::string> seen(2);
  rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    psum(ctx, Array::scalar<float>(1), "x");
    const CollectiveRecord& r = ctx.collective_records()[0];
    seen[ctx.position()] = std::string(r.collective) + " " + std::string(r.algorithm) + " " +
                           std::string(r.chosen_by) + " " + std::to_string(r.group_size);
  });
  EXPECT_EQ(seen[0], "psum direct default 2");
  EXPECT_EQ(seen[1], "psum direct default 2");
}

// A receiver that expects another size than was sent fails the launch with a
// CollectiveShapeError naming both devices, and reads nothing.
TEST(CommunicatorTest, SizeDisagreementIsAnErrorNamingBothDevices) {
  Runtime rt(2);
  Algorithm<AllReduceArgs> bad = star_all_reduce();
  bad.name = "lopsided";
  bad.run = [](Communicator& comm, const AllReduceArgs& args) {
    if (comm.rank() == 1) comm.send(0, args.in, 8);
    if (comm.rank() == 0) comm.recv(1, args.out, 4);
  };
  algorithm_registry(rt).add(bad);
  const Mesh mesh = Mesh::make({{"x", 2}});
  EXPECT_ERROR(rt.launch(mesh,
                        [&](DeviceContext& ctx) {
                          psum(ctx, Array::zeros({2}, DType::kInt32), "x", {}, "lopsided");
                        }),
               CollectiveShapeError,
               "device 0 expected a transfer of 4 bytes from device 1, which sent 8 bytes");
  // The runtime stays usable, links included.
  algorithm_registry(rt).add(star_all_reduce());
  std::vector<int32_t> got(2);
  rt.launch(mesh, [&](DeviceContext& ctx) {
    got[ctx.position()] =
        psum(ctx, Array::scalar<int32_t>(ctx.position() + 1), "x", {}, "star").at<int32_t>({});
  });
  EXPECT_EQ(got, (std::vector<int32_t>{3, 3}));
}

// Segmented transfers: a receiver expecting a shorter transfer than was sent
// fails on the first segment (the sender's total travels with every segment),
// instead of reading part of it and leaving the rest for a later receive.
TEST(CommunicatorTest, SegmentedSizeDisagreementFailsOnTheFirstSegment) {
  Runtime rt(2);
  Algorithm<AllReduceArgs> bad = star_all_reduce();
  bad.name = "short_read";
  bad.run = [](Communicator& comm, const AllReduceArgs& args) {
    if (comm.rank() == 1) comm.send(0, args.in, 512);
    if (comm.rank() == 0) comm.recv(1, args.out, 256);
  };
  algorithm_registry(rt).add(bad);
  algorithm_registry(rt).set_tunable(Collective::kAllReduce, "short_read", "segment_bytes", 256);
  std::vector<int32_t> first(2, -1);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                        [&](DeviceContext& ctx) {
                          Array x = Array::full({128}, DType::kInt32, 7.0);
                          Array y = psum(ctx, x, "x", {}, "short_read");
                          first[ctx.position()] = y.at<int32_t>({0});
                        }),
               CollectiveShapeError,
               "device 0 expected a transfer of 256 bytes from device 1, which sent 512 bytes");
}

// peer_args is for algorithms that declare it (their calls end with a
// departure barrier), never on a subgroup.
TEST(CommunicatorTest, PeerArgsNeedsTheDeclaration) {
  Runtime rt(2);
  Algorithm<AllReduceArgs> reader = star_all_reduce();
  reader.name = "reader";
  reader.run = [](Communicator& comm, const AllReduceArgs& args) {
    const AllReduceArgs& other = comm.peer_args<AllReduceArgs>(1 - comm.rank());
    reduce_elements(args.op, args.dtype, args.out, other.in, 0);
  };
  algorithm_registry(rt).add(reader);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                        [&](DeviceContext& ctx) {
                          psum(ctx, Array::zeros({4}, DType::kInt32), "x", {}, "reader");
                        }),
               InvalidArgumentError, "peer_args needs AlgorithmInfo::reads_peer_args");
}

}  // namespace
}  // namespace meshsim::communicator_test

namespace meshsim::communicator_test {
namespace {

// A user algorithm whose rank 1 sends 1 MiB from its own vector (large enough
// that the allocator returns it to the system when freed), then throws before
// rank 0 has read it: the launch fails with rank 1's error, and rank 0 never
// reads freed memory (the send was copied into memory the call owns; the
// sanitizer jobs run this).
TEST(CommunicatorTest, ThrowingWithASendInFlightFreesNothingAPeerReads) {
  constexpr size_t kBytes = size_t{1} << 20;
  Algorithm<AllReduceArgs> a = star_all_reduce();
  a.name = "throws_mid_send";
  a.run = [](Communicator& comm, const AllReduceArgs&) {
    if (comm.rank() == 1) {
      std::vector<std::byte> mine(kBytes, std::byte{7});
      comm.send(0, mine.data(), kBytes);
      throw std::runtime_error("rank 1 gives up");
    }
    std::vector<std::byte> theirs(kBytes);
    comm.recv(1, theirs.data(), kBytes);  // may complete, or be cancelled
    for (std::byte b : theirs) ASSERT_EQ(b, std::byte{7});
  };
  for (int round = 0; round < 20; ++round) {
    Runtime rt(2);
    algorithm_registry(rt).add(a);
    EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                           [](DeviceContext& ctx) {
                             psum(ctx, Array::zeros({1}, DType::kFloat32), "x", {},
                                  "throws_mid_send");
                           }),
                 Error, "rank 1 gives up");
  }
}

// What a member sends from its own memory is copied when sent: overwriting it
// right after send() returns changes nothing the peer receives. (From the
// call's Args buffers or scratch() the peer reads in place instead.)
TEST(CommunicatorTest, SendsFromAlgorithmMemoryAreFreeOnReturn) {
  constexpr size_t kBytes = 4096;
  Algorithm<AllReduceArgs> a = star_all_reduce();
  a.name = "overwrites";
  std::vector<std::vector<std::byte>> received(2);
  a.run = [&received](Communicator& comm, const AllReduceArgs&) {
    const int peer = 1 - comm.rank();
    std::vector<std::byte> mine(kBytes, std::byte(comm.rank() + 1));
    comm.send(peer, mine.data(), kBytes);
    std::fill(mine.begin(), mine.end(), std::byte{0xee});
    std::byte* scratch = comm.scratch(kBytes);
    std::fill(scratch, scratch + kBytes, std::byte(comm.rank() + 3));
    comm.send(peer, scratch, kBytes);
    received[comm.rank()].resize(2 * kBytes);
    comm.recv(peer, received[comm.rank()].data(), kBytes);
    comm.recv(peer, received[comm.rank()].data() + kBytes, kBytes);
  };
  Runtime rt(2);
  algorithm_registry(rt).add(a);
  rt.launch(Mesh::make({{"x", 2}}), [](DeviceContext& ctx) {
    psum(ctx, Array::zeros({1}, DType::kFloat32), "x", {}, "overwrites");
  });
  for (int r = 0; r < 2; ++r) {
    const int peer = 1 - r;
    std::vector<std::byte> expected(kBytes, std::byte(peer + 1));
    expected.resize(2 * kBytes, std::byte(peer + 3));
    EXPECT_EQ(received[r], expected) << "rank " << r;
  }
}

}  // namespace
}  // namespace meshsim::communicator_test
