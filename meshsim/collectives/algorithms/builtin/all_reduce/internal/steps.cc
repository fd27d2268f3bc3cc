#include "meshsim/collectives/algorithms/builtin/all_reduce/internal/steps.h"

#include <bit>
#include <cstring>

namespace meshsim::all_reduce_steps {

void copy_input(const AllReduceArgs& args) {
  const size_t bytes = static_cast<size_t>(args.count) * dtype_size(args.dtype);
  if (bytes > 0 && args.in != args.out) std::memcpy(args.out, args.in, bytes);
}

bool trivial(Communicator& comm, const AllReduceArgs& args) {
  if (comm.size() > 1 && args.count > 0) return false;
  copy_input(args);
  return true;
}

void exchange(Communicator& comm, int to, const std::byte* send, int64_t send_count, int from,
              std::byte* recv, int64_t recv_count, int64_t common, DType dtype,
              std::optional<ReduceOp> reduce) {
  const size_t esize = dtype_size(dtype);
  if (common > 0) {
    if (reduce) {
      comm.sendrecv_reduce(to, send, from, recv, common, dtype, *reduce);
    } else {
      comm.sendrecv(to, send, from, recv, static_cast<size_t>(common) * esize);
    }
  }
  // Tails: posting first, then receiving, so no member waits on a cycle.
  if (send_count > common) {
    comm.send(to, send + common * esize, static_cast<size_t>(send_count - common) * esize);
  }
  if (recv_count > common) {
    std::byte* tail = recv + common * esize;
    if (reduce) {
      comm.recv_reduce(from, tail, recv_count - common, dtype, *reduce);
    } else {
      comm.recv(from, tail, static_cast<size_t>(recv_count - common) * esize);
    }
  }
}

RingAllReduce::RingAllReduce(Communicator& comm, int direction, const std::byte* in,
                             std::byte* out, int64_t count, DType dtype, ReduceOp op)
    : comm_(comm),
      direction_(direction),
      in_(in),
      out_(out),
      dtype_(dtype),
      op_(op),
      esize_(dtype_size(dtype)),
      blocks_{count, comm.size()},
      // Going the other way round is going forward on the mirrored ring.
      place_(direction > 0 ? comm.rank() : comm.size() - 1 - comm.rank()) {}

int RingAllReduce::rank_at(int place) const {
  const int p = block(place);
  return direction_ > 0 ? p : blocks_.n - 1 - p;
}

void RingAllReduce::reduce_scatter_step(int s) {
  const int send_block = block(place_ - s);
  const int recv_block = block(place_ - s - 1);
  std::byte* const recv = out_ + blocks_.begin(recv_block) * esize_;
  // Each block is received once, so it is copied from the input just before
  // (spread over the steps rather than one copy up front). The block sent at
  // step 0 is the member's own input, read in place.
  if (in_ != out_ && blocks_.size(recv_block) > 0) {
    std::memcpy(recv, in_ + blocks_.begin(recv_block) * esize_,
                static_cast<size_t>(blocks_.size(recv_block)) * esize_);
  }
  const std::byte* const source = s == 0 ? in_ : out_;
  exchange(comm_, rank_at(place_ + 1), source + blocks_.begin(send_block) * esize_,
           blocks_.size(send_block), rank_at(place_ - 1), recv, blocks_.size(recv_block),
           blocks_.base(), dtype_, op_);
}

void RingAllReduce::all_gather_step(int s) {
  const int send_block = block(place_ + 1 - s);
  const int recv_block = block(place_ - s);
  exchange(comm_, rank_at(place_ + 1), out_ + blocks_.begin(send_block) * esize_,
           blocks_.size(send_block), rank_at(place_ - 1),
           out_ + blocks_.begin(recv_block) * esize_, blocks_.size(recv_block), blocks_.base(),
           dtype_, std::nullopt);
}

void RingAllReduce::run() {
  for (int s = 0; s < steps(); ++s) reduce_scatter_step(s);
  comm_.wait_sends();
  for (int s = 0; s < steps(); ++s) all_gather_step(s);
}

PowerOfTwoFold::PowerOfTwoFold(int n, int rank)
    : rank_(rank), p_(static_cast<int>(std::bit_floor(static_cast<unsigned>(n)))), rem_(n - p_) {
  if (rank < 2 * rem_) {
    vrank_ = rank % 2 == 1 ? rank / 2 : -1;
  } else {
    vrank_ = rank - rem_;
  }
}

void PowerOfTwoFold::fold(Communicator& comm, const AllReduceArgs& args) const {
  const size_t bytes = static_cast<size_t>(args.count) * dtype_size(args.dtype);
  if (vrank_ < 0) {
    comm.send(rank_ + 1, args.in, bytes);
    return;
  }
  copy_input(args);
  // Only the odd member computes this combination, so its operand order
  // cannot make members disagree.
  if (rank_ < 2 * rem_) comm.recv_reduce(rank_ - 1, args.out, args.count, args.dtype, args.op);
}

void PowerOfTwoFold::unfold(Communicator& comm, const AllReduceArgs& args) const {
  const size_t bytes = static_cast<size_t>(args.count) * dtype_size(args.dtype);
  if (vrank_ < 0) {
    comm.wait_sends();  // `in` may be `out`: the partner has read it
    comm.recv(rank_ + 1, args.out, bytes);
  } else if (rank_ < 2 * rem_) {
    comm.send(rank_ - 1, args.out, bytes);
  }
}


int64_t segment_elements(Communicator& comm, DType dtype) {
  // Whole cache lines, as the fabric cuts its segments, so one pipelined
  // segment is one descriptor.
  const int64_t bytes = std::max<int64_t>(64, comm.tunable("segment_bytes") / 64 * 64);
  return bytes / static_cast<int64_t>(dtype_size(dtype));
}

}  // namespace meshsim::all_reduce_steps
