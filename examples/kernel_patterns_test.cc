// Four communication patterns written as TPU-style kernels (run_kernel,
// remote DMAs, semaphores), each checked against a sequential reference and
// against the meshsim collective that does the same: ppermute, all_gather,
// psum and psum_scatter. Copy a pattern to start a kernel of your own.
//
// Words: the devices form a ring in logical-id order; a device's right
// neighbour is id + 1 (mod n), its left id - 1. A step is one round of DMAs.
// A receiver waits with a descriptor for the region it receives into: only
// that region's size and its own receive semaphore count. As in Mosaic's
// collective matmul, copies in flight to one receive semaphore are taken to
// land in the order they were started.
// Values are distinct float32 integers, so every sum is exact in any order
// and the kernels must match bit for bit.

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <meshsim/meshsim.h>

namespace meshsim::kernel_patterns_test {
namespace {

int mod(int a, int n) { return ((a % n) + n) % n; }
int right(const KernelContext& k) { return mod(k.device_id() + 1, k.num_devices()); }
int left(const KernelContext& k) { return mod(k.device_id() - 1, k.num_devices()); }

// (a) Right permute: one DMA of the shard into the right neighbour's `dst`.
Array right_permute(DeviceContext& ctx, const Array& x) {
  KernelSpec spec("right_permute");
  const BufferRef src = spec.buffer(x.shape(), x.dtype());
  const BufferRef dst = spec.buffer(x.shape(), x.dtype());
  const DmaSemaphore send = spec.dma_semaphore(), recv = spec.dma_semaphore();
  Array out;
  run_kernel(ctx, spec, [&](KernelContext& k) {
    k.store(src, x);
    AsyncCopy copy = k.make_async_remote_copy(src, dst, send, recv, right(k));
    copy.start();
    copy.wait_send();
    copy.wait_recv();  // the left neighbour's copy into our dst
    out = k.load(dst);
  });
  return out;
}

// (b) Ring all-gather: slot i of `gathered` ends up holding device i's shard.
// Step s = 0 .. n-2 forwards slot (me - s) mod n (the own shard at step 0,
// afterwards the one received the step before) into the same slot on the
// right neighbour, and waits for slot (me - s - 1) mod n from the left. Every
// slot is written once, so none needs flow control. n - 1 DMAs of one shard.
Array ring_all_gather(DeviceContext& ctx, const Array& x) {
  const int n = ctx.mesh().size();
  Shape shape = x.shape();
  shape.insert(shape.begin(), n);
  KernelSpec spec("ring_all_gather");
  const BufferRef gathered = spec.buffer(shape, x.dtype());
  const DmaSemaphore send = spec.dma_semaphore(), recv = spec.dma_semaphore();
  Array out;
  run_kernel(ctx, spec, [&](KernelContext& k) {
    const int me = k.device_id();
    k.store(gathered.at(me), x);
    for (int s = 0; s < n - 1; ++s) {
      const BufferRef outgoing = gathered.at(mod(me - s, n));
      AsyncCopy copy = k.make_async_remote_copy(outgoing, outgoing, send, recv, right(k));
      copy.start();
      copy.wait_send();
      const BufferRef incoming = gathered.at(mod(me - s - 1, n));
      k.make_async_remote_copy(incoming, incoming, send, recv, right(k)).wait_recv();
    }
    out = k.load(gathered);
  });
  return out;
}

// (c) Ring all-reduce (sum) of n chunks through two receive slots. Step
// t = 0 .. 2n-3 sends chunk (me - t) mod n of `acc` into slot t mod 2 of the
// right neighbour and takes chunk (me - t - 1) mod n from the left out of its
// own slot t mod 2: the first n - 1 steps add it (a reduce-scatter, after
// which chunk me + 1 is complete here), the last n - 1 copy it (an
// all-gather). Handshake: a slot is refilled two steps later, so from step 2
// on the sender waits on `slot_free`, which the receiver signals on the
// sender once it has consumed the slot; the last two slots are refilled by
// no one, so they are not signalled. 2(n - 1) DMAs of one chunk.
Array ring_all_reduce(DeviceContext& ctx, const Array& x) {
  const int n = ctx.mesh().size();
  const int64_t chunk = x.size() / n;
  const int steps = 2 * (n - 1);
  KernelSpec spec("ring_all_reduce");
  const BufferRef acc = spec.buffer({n, chunk}, DType::kFloat32);
  const BufferRef slots = spec.buffer({2, chunk}, DType::kFloat32);
  const Semaphore slot_free = spec.semaphore();
  const DmaSemaphore send = spec.dma_semaphore(), recv = spec.dma_semaphore();
  Array out;
  run_kernel(ctx, spec, [&](KernelContext& k) {
    const int me = k.device_id();
    k.store(acc, x.reshape({n, chunk}));
    for (int t = 0; t < steps; ++t) {
      const BufferRef slot = slots.at(t % 2);
      if (t >= 2) k.semaphore_wait(slot_free);  // the right neighbour consumed step t - 2
      AsyncCopy copy = k.make_async_remote_copy(acc.at(mod(me - t, n)), slot, send, recv, right(k));
      copy.start();
      copy.wait_send();
      copy.wait_recv();  // the left neighbour's chunk, in our slot t mod 2
      const auto in = k.read<float>(slot);
      const auto target = k.write<float>(acc.at(mod(me - t - 1, n)));
      for (size_t i = 0; i < in.size(); ++i) target[i] = t < n - 1 ? target[i] + in[i] : in[i];
      if (t + 2 < steps) k.semaphore_signal(slot_free, 1, left(k));
    }
    out = k.load(acc).reshape(x.shape());
  });
  return out;
}

// (d) Bidirectional ring reduce-scatter of n blocks: the first half of every
// block is reduced clockwise (towards the right), the second half
// counter-clockwise, in n - 1 steps. Step t sends the partial sums of block
// (me - t - 1) mod n to the right and of block (me + t + 1) mod n to the left,
// then adds what arrives — blocks (me - t - 2) and (me + t + 2) mod n — into
// its own, so after the last step both halves of block `me` are complete. A
// device receives a block at most once per direction, into that block's own
// inbox slot, so no slot is reused. Each direction carries half a block per
// link and step: half the bytes of a one-way ring in the same steps.
Array bidirectional_reduce_scatter(DeviceContext& ctx, const Array& x) {
  const int n = ctx.mesh().size();
  const int64_t half = x.dim(1) / 2;
  KernelSpec spec("bidirectional_reduce_scatter");
  const BufferRef acc = spec.buffer({n, 2, half}, DType::kFloat32);    // block, direction
  const BufferRef inbox = spec.buffer({2, n, half}, DType::kFloat32);  // direction, block
  const DmaSemaphore send[2] = {spec.dma_semaphore(), spec.dma_semaphore()};
  const DmaSemaphore recv[2] = {spec.dma_semaphore(), spec.dma_semaphore()};
  Array out;
  run_kernel(ctx, spec, [&](KernelContext& k) {
    const int me = k.device_id();
    const int to[2] = {right(k), left(k)};
    const int sign[2] = {-1, +1};  // clockwise blocks count down, the others up
    k.store(acc, x.reshape({n, 2, half}));
    for (int t = 0; t < n - 1; ++t) {
      for (int dir : {0, 1}) {
        const int block = mod(me + sign[dir] * (t + 1), n);
        k.make_async_remote_copy(acc.at(block).at(dir), inbox.at(dir).at(block), send[dir],
                                 recv[dir], to[dir])
            .start();
      }
      for (int dir : {0, 1}) {
        const int block = mod(me + sign[dir] * (t + 2), n);
        const BufferRef in_ref = inbox.at(dir).at(block);
        AsyncCopy copy = k.make_async_remote_copy(in_ref, in_ref, send[dir], recv[dir], to[dir]);
        copy.wait_send();  // our send this way this step: only its size matters
        copy.wait_recv();
        const auto in = k.read<float>(in_ref);
        const auto target = k.write<float>(acc.at(block).at(dir));
        for (size_t i = 0; i < in.size(); ++i) target[i] += in[i];
      }
    }
    out = k.load(acc.at(me)).reshape({2 * half});
  });
  return out;
}

// --- tests: every pattern on rings of 2, 3, 4, 8 and 64 devices ---

class KernelPatternsTest : public ::testing::TestWithParam<int> {
 protected:
  // Runs `body` on every device of a ring of n with its row block of
  // `global` (spec P("x")).
  template <class F>
  Array on_ring(F body, const Array& global, const PartitionSpec& out_spec) {
    return shard_map(rt_, Mesh::make({{"x", n_}}), body, P{"x"}, out_spec, global);
  }
  const int n_ = GetParam();
  Runtime rt_{n_};
};

TEST_P(KernelPatternsTest, RightPermuteByRemoteCopy) {
  const Array x = Array::iota({n_ * 2, 3}, DType::kFloat32);  // two rows per device
  RowMatrix<float> expected(n_ * 2, 3);
  for (int d = 0; d < n_; ++d) {
    expected.middleRows(d * 2, 2) = matrix_view<float>(x).middleRows(mod(d - 1, n_) * 2, 2);
  }
  std::vector<std::pair<int, int>> to_right;
  for (int d = 0; d < n_; ++d) to_right.emplace_back(d, mod(d + 1, n_));

  const Array got = on_ring(right_permute, x, P{"x"});

  EXPECT_TRUE(array_equal(got, from_eigen(expected))) << first_difference(got, from_eigen(expected));
  const Array collective = on_ring(
      [&](DeviceContext& ctx, const Array& s) { return ppermute(ctx, s, "x", to_right); }, x, P{"x"});
  EXPECT_TRUE(array_equal(got, collective)) << first_difference(got, collective);
}

TEST_P(KernelPatternsTest, RingAllGatherByForwarding) {
  const Array x = Array::iota({n_ * 2, 3}, DType::kFloat32);
  // Replicated output: shard_map checks that every device gathered the same.
  const Array got = on_ring(ring_all_gather, x, P{});

  const Array expected = x.reshape({n_, 2, 3});
  EXPECT_TRUE(array_equal(got, expected)) << first_difference(got, expected);
  const Array collective = on_ring(
      [](DeviceContext& ctx, const Array& s) { return all_gather(ctx, s, "x"); }, x, P{});
  EXPECT_TRUE(array_equal(got, collective)) << first_difference(got, collective);
}

TEST_P(KernelPatternsTest, DoubleBufferedRingAllReduce) {
  const Array x = Array::iota({n_, n_ * 4}, DType::kFloat32);  // one row, n chunks of 4, per device
  const Array got = on_ring(ring_all_reduce, x, P{});

  const Array expected = from_eigen(matrix_view<float>(x).colwise().sum());
  EXPECT_TRUE(array_equal(got, expected)) << first_difference(got, expected);
  const Array collective =
      on_ring([](DeviceContext& ctx, const Array& s) { return psum(ctx, s, "x"); }, x, P{});
  EXPECT_TRUE(array_equal(got, collective)) << first_difference(got, collective);
}

TEST_P(KernelPatternsTest, BidirectionalRingReduceScatter) {
  const Array x = Array::iota({n_ * n_, 4}, DType::kFloat32);  // n blocks of 4 per device
  // Device d gets the sum over devices e of their block d: rows e * n + d.
  Eigen::RowVectorXf expected = Eigen::RowVectorXf::Zero(n_ * 4);
  for (int d = 0; d < n_; ++d) {
    for (int e = 0; e < n_; ++e) expected.segment(d * 4, 4) += matrix_view<float>(x).row(e * n_ + d);
  }
  const Array got = on_ring(bidirectional_reduce_scatter, x, P{"x"});

  const Array want = from_eigen(expected).reshape({n_ * 4});
  EXPECT_TRUE(array_equal(got, want)) << first_difference(got, want);
  const Array collective = on_ring(
      [](DeviceContext& ctx, const Array& s) { return psum_scatter(ctx, s, "x"); }, x, P{"x"});
  EXPECT_TRUE(array_equal(got, collective)) << first_difference(got, collective);
}

INSTANTIATE_TEST_SUITE_P(Rings, KernelPatternsTest, ::testing::Values(2, 3, 4, 8, 64),
                         [](const auto& info) { return std::to_string(info.param) + "devices"; });

}  // namespace
}  // namespace meshsim::kernel_patterns_test
