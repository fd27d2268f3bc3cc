// The bidirectional all-gather collective matmul: validation, then the
// kernel's init step and L/2 steps as collective_matmul.h describes them.

#include "collective_matmul.h"

#include <Eigen/Core>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include <meshsim/meshsim.h>

namespace meshsim::examples {
namespace {

using Rings = std::vector<std::vector<int>>;

// The two halves of the scratch buffer, by the direction their shards move.
enum Side : int { kLeft = 0, kRight = 1 };

void check_rank2(const Array& a, const char* name) {
  if (a.rank() != 2) {
    throw ShapeError(std::string(name) + " must be 2-D, got shape " + shape_to_string(a.shape()));
  }
}

// Throws as the header says; returns the ring length.
int validate(const Array& lhs, const Array& rhs, const Rings& rings, int buffering,
             int num_devices) {
  check_rank2(lhs, "lhs_local");
  check_rank2(rhs, "rhs");
  if (rings.empty()) throw InvalidArgumentError("rings must be a 2-D array of ids, got no rows");
  const int ring_len = static_cast<int>(rings[0].size());
  for (size_t r = 1; r < rings.size(); ++r) {
    if (static_cast<int>(rings[r].size()) != ring_len) {
      throw InvalidArgumentError("rings must be a 2-D array of ids, but row " + std::to_string(r) +
                                 " has " + std::to_string(rings[r].size()) + " ids and row 0 has " +
                                 std::to_string(ring_len));
    }
  }
  const int64_t k_shard = lhs.dim(1);
  if (k_shard * ring_len != rhs.dim(0)) {
    throw ShapeError("lhs_local has k_shard = " + std::to_string(k_shard) +
                     " columns and rings have length " + std::to_string(ring_len) +
                     ", so rhs needs " + std::to_string(k_shard * ring_len) + " rows, but has " +
                     std::to_string(rhs.dim(0)));
  }
  if (lhs.dtype() != DType::kBFloat16 || rhs.dtype() != DType::kBFloat16) {
    throw DTypeError("the collective matmul takes bfloat16 inputs (and gives float32), got " +
                     std::string(dtype_name(lhs.dtype())) + " lhs_local and " +
                     std::string(dtype_name(rhs.dtype())) + " rhs");
  }
  if (ring_len % 2 != 0) {
    throw InvalidArgumentError("the bidirectional collective matmul needs rings of even length, got " +
                               std::to_string(ring_len));
  }
  if (buffering < 2 || !std::has_single_bit(static_cast<unsigned>(buffering))) {
    throw InvalidArgumentError("buffering must be a power of two, at least 2, got " +
                               std::to_string(buffering));
  }
  const int ids = static_cast<int>(rings.size()) * ring_len;
  if (ids != num_devices) {
    throw InvalidArgumentError("rings hold " + std::to_string(ids) + " ids but the kernel runs on " +
                               std::to_string(num_devices) + " devices");
  }
  std::vector<bool> seen(num_devices, false);
  for (const auto& ring : rings) {
    for (int id : ring) {
      if (id < 0 || id >= num_devices) {
        throw InvalidArgumentError("ring id " + std::to_string(id) + " is outside [0, " +
                                   std::to_string(num_devices) + ")");
      }
      if (seen[id]) throw InvalidArgumentError("ring id " + std::to_string(id) + " appears twice");
      seen[id] = true;
    }
  }
  return ring_len;
}

// What the kernel declares; the same on every device.
struct Decls {
  Decls(int buffering, int64_t n, int64_t k_shard, int collective_id)
      : scratch(spec.buffer({buffering, 2, n, k_shard}, DType::kBFloat16)),
        capacity_left(spec.semaphore()),
        capacity_right(spec.semaphore()),
        send_right(spec.dma_semaphore()),
        send_left(spec.dma_semaphore()),
        recv_right(spec.dma_semaphore()),
        recv_left(spec.dma_semaphore()) {
    spec.set_collective_id(collective_id);
  }
  KernelSpec spec{"bidirectional_allgather_matmul"};
  BufferRef scratch;
  Semaphore capacity_left, capacity_right;  // free slots on that side's neighbour
  DmaSemaphore send_right, send_left, recv_right, recv_left;
};

// One device's run of the kernel: the seed's init and step bodies, with its
// shift, signal and compute helpers.
class Kernel {
 public:
  Kernel(KernelContext& k, const Decls& d, const Rings& rings, int buffering, const Array& lhs,
         const Array& rhs_f32, Array& out)
      : k_(k), d_(d), buffering_(buffering), ring_len_(static_cast<int>(rings[0].size())),
        lhs_(lhs), rhs_(matrix_view<float>(rhs_f32)), out_(mutable_matrix_view<float>(out)) {
    for (const auto& ring : rings) {
      for (int i = 0; i < ring_len_; ++i) {
        if (ring[i] != k.device_id()) continue;
        pos_ = i;
        left_ = ring[(i + ring_len_ - 1) % ring_len_];
        right_ = ring[(i + 1) % ring_len_];
      }
    }
  }

  void init() {
    k_.semaphore_signal(d_.capacity_right, buffering_ - 1);
    k_.semaphore_signal(d_.capacity_left, buffering_ - 1);
    // Only neighbours write into our buffers, so only they must have entered
    // the kernel before we write into theirs.
    const Semaphore barrier = k_.barrier_semaphore();
    k_.semaphore_signal(barrier, 1, left_);
    k_.semaphore_signal(barrier, 1, right_);
    k_.semaphore_wait(barrier, 2);
    k_.store(slot(0, kLeft), lhs_);
    // The own shard also starts the rightward journey, in the right half.
    AsyncCopy first = k_.make_async_remote_copy(slot(0, kLeft), slot(0, kRight), d_.send_right,
                                                d_.recv_right, right_);
    first.start();
    out_.setZero();
    // Invariant of every step: its left slot is here, its right slot was sent.
    first.wait_send();
  }

  void step(int s) {
    const int version = s & (buffering_ - 1);
    const int next = (version + 1) & (buffering_ - 1);
    const bool more = s != ring_len_ / 2 - 1;
    if (more) {
      k_.semaphore_wait(d_.capacity_left, 1);
      shift(kLeft, version, next).start();
    }
    wait_arrival(kRight, version);  // from the left neighbour
    if (more) {
      k_.semaphore_wait(d_.capacity_right, 1);
      shift(kRight, version, next).start();
    }
    compute(kLeft, version, (pos_ + s) % ring_len_);
    compute(kRight, version, (pos_ - s - 1 + ring_len_) % ring_len_);
    if (more) {
      // Both slots of this version are read and sent: free them on the
      // neighbours that fill them.
      shift(kLeft, version, next).wait_send();
      k_.semaphore_signal(d_.capacity_left, 1, right_);
      shift(kRight, version, next).wait_send();
      k_.semaphore_signal(d_.capacity_right, 1, left_);
      wait_arrival(kLeft, next);  // from the right neighbour
    } else {
      // The last step frees nothing, so the initial capacity is what returns.
      k_.semaphore_wait(d_.capacity_left, buffering_ - 1);
      k_.semaphore_wait(d_.capacity_right, buffering_ - 1);
    }
  }

 private:
  BufferRef slot(int version, Side side) const { return d_.scratch.at(version).at(side); }

  // The DMA of `side`'s slot `from` here into slot `to` on that side's
  // neighbour.
  AsyncCopy shift(Side side, int from, int to) {
    return side == kLeft ? k_.make_async_remote_copy(slot(from, kLeft), slot(to, kLeft),
                                                     d_.send_left, d_.recv_left, left_)
                         : k_.make_async_remote_copy(slot(from, kRight), slot(to, kRight),
                                                     d_.send_right, d_.recv_right, right_);
  }

  // Waits until the shard for slot (`version`, `side`) here has arrived: a
  // receiver's descriptor needs only the slot (its size) and the semaphore.
  void wait_arrival(Side side, int version) { shift(side, version, version).wait_recv(); }

  // out += (slot of `side`) · (rows of rhs for ring position `source`).
  void compute(Side side, int version, int source) {
    const BufferRef ref = slot(version, side);
    const Eigen::Map<const RowMatrix<Eigen::bfloat16>> shard(
        k_.read<Eigen::bfloat16>(ref).data(), ref.shape()[0], ref.shape()[1]);
    out_.noalias() += shard.cast<float>() * rhs_.middleRows(source * ref.shape()[1], ref.shape()[1]);
    // Virtual time: the product on the device's roofline (bfloat16 operands,
    // the float32 block read and written).
    const double n = static_cast<double>(ref.shape()[0]), k = static_cast<double>(ref.shape()[1]);
    const double m = static_cast<double>(out_.cols());
    k_.device().compute(2 * n * k * m, 2 * (n * k + k * m) + 8 * n * m);
  }

  KernelContext& k_;
  const Decls& d_;
  const int buffering_, ring_len_;
  const Array& lhs_;
  const MatrixView<float> rhs_;
  MutableMatrixView<float> out_;
  int pos_ = 0, left_ = 0, right_ = 0;  // ring position, neighbours' ids
};

}  // namespace

Array bidirectional_allgather_matmul(DeviceContext& ctx, const Array& lhs_local, const Array& rhs,
                                     const Rings& rings, int collective_id, int buffering) {
  const int ring_len = validate(lhs_local, rhs, rings, buffering, ctx.mesh().size());
  const Decls d(buffering, lhs_local.dim(0), lhs_local.dim(1), collective_id);
  const Array rhs_f32 = rhs.astype(DType::kFloat32);
  Array out = Array::empty({lhs_local.dim(0), rhs.dim(1)}, DType::kFloat32);
  run_kernel(ctx, d.spec, [&](KernelContext& k) {
    Kernel kernel(k, d, rings, buffering, lhs_local, rhs_f32, out);
    kernel.init();
    for (int s = 0; s < ring_len / 2; ++s) kernel.step(s);
  });
  return out;
}

}  // namespace meshsim::examples
