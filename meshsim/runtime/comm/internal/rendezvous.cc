#include "meshsim/runtime/comm/internal/rendezvous.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "meshsim/runtime/comm/internal/fabric.h"
#include "meshsim/runtime/exec/errors.h"

namespace meshsim {

Rendezvous::Rendezvous(std::vector<int> agent_ids, std::string label, int devices)
    : agent_ids_(std::move(agent_ids)),
      devices_(devices),
      label_(std::move(label)),
      slots_(new Slot[agent_ids_.size()]) {
  if (size() <= Exchange::kMaxMembers) exchange_ = std::make_unique<Exchange>(size());
  if (size() >= kBlockArrivalsFrom) {
    block_ranks_ = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(size()))));
    const int blocks = (size() + block_ranks_ - 1) / block_ranks_;
    arrival_blocks_ = std::vector<ArrivalBlock>(static_cast<size_t>(blocks));
    for (int b = 0; b < blocks; ++b) {
      arrival_blocks_[b].members =
          static_cast<uint32_t>(std::min(block_ranks_, size() - b * block_ranks_));
    }
  }
  if (devices > 0 && std::ranges::any_of(agent_ids_, [&](int id) { return id >= devices; })) {
    for (int id : agent_ids_) device_ids_.push_back(id % devices);
  }
}

std::string Rendezvous::member_name(int rank) const {
  if (device_ids_.empty()) return agent_name(agent_ids_[rank], 0);
  return agent_name(device_ids_[rank], agent_ids_[rank] / devices_);
}

std::string Rendezvous::describe() const {
  std::string out = label_ + " [devices ";
  for (int r = 0; r < size(); ++r) {
    if (r > 0) out += ", ";
    out += member_name(r).substr(std::string_view("device ").size());
  }
  return out + "]";
}

// A device that already settled in its failed launch (its body caught a
// CancelledError and went on) must not meet: peers no longer wait for it, so
// as a leader it could read calls and write outputs of members that unwound.
void Rendezvous::refuse_if_settled(Waiter& waiter) const {
  if (waiter.cancel_if_aborted()) {
    throw CancelledError("a meeting of " + describe() + ": the launch failed and was cancelled");
  }
}

bool Rendezvous::last_to_arrive(int rank) {
  // Each counter is reset by the last to reach it: nobody counts in it again
  // before the release, which happens after that reset (acq_rel chains it to
  // the last arrival).
  // arrived_ counts the blocks, or with one level the members.
  size_t arrivals = agent_ids_.size();
  if (block_ranks_ > 0) {
    ArrivalBlock& block = arrival_blocks_[rank / block_ranks_];
    if (block.arrived.fetch_add(1, std::memory_order_acq_rel) + 1 != block.members) return false;
    block.arrived.store(0, std::memory_order_relaxed);
    arrivals = arrival_blocks_.size();
  }
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 != arrivals) return false;
  arrived_.store(0, std::memory_order_relaxed);
  return true;
}

template <class Leader>
bool Rendezvous::arrive_impl(int rank, Waiter& waiter, Leader&& leader) {
  const uint32_t generation = released_.load();
  if (last_to_arrive(rank)) {
    leader();
    released_.advance();
    return true;
  }
  waiter.wait_change(released_, generation);
  return false;
}

void Rendezvous::checked_meet(int rank, Waiter& waiter, FunctionRef<void()> leader_step) {
  // A loop repeats its calls: each member compares its own with the one it
  // made last time, in its own cache, instead of the leader reading every
  // member's (cross-core misses on the path that holds the whole group).
  Slot& own = slots_[rank];
  if (!own.last_call) own.last_call = std::make_unique<StoredCall>();
  if (StoredCall::fits(*own.call)) {
    own.repeats = own.last_call->store(*own.call);
  } else {
    own.last_call->clear();
    own.repeats = false;
  }
  arrive_impl(rank, waiter, [&] {
    check_calls();
    if (!failed_) leader_step();
  });
  if (failed_) throw CollectiveMismatchError(error_);
}

Exchange::Outcome Rendezvous::exchange_meet(int rank, Waiter& waiter, const Exchange::Post& post) {
  return settle(rank, waiter, exchange_->meet(rank, waiter, post));
}

Exchange::Outcome Rendezvous::settle(int rank, Waiter& waiter, Exchange::Outcome outcome) {
  if (outcome == Exchange::Outcome::kMismatch) {
    const int other = exchange_->mismatch(rank);
    throw CollectiveMismatchError(
        mismatch_message(exchange_->call(rank, 0), other, exchange_->call(rank, other)));
  }
  if (outcome == Exchange::Outcome::kUnchecked) checked_meet(rank, waiter, [] {});
  return outcome;
}

void Rendezvous::meet(int rank, Waiter& waiter, FunctionRef<void()> leader_step) {
  refuse_if_settled(waiter);
  if (!exchange_) return checked_meet(rank, waiter, leader_step);
  // The calls are compared; the leader step still needs everybody held.
  exchange_meet(rank, waiter, {slots_[rank].call, false, {}});
  arrive_impl(rank, waiter, leader_step);
}

void Rendezvous::meet(int rank, Waiter& waiter) {
  refuse_if_settled(waiter);
  if (!exchange_) return checked_meet(rank, waiter, [] {});
  exchange_meet(rank, waiter, {slots_[rank].call, false, {}});
}

bool Rendezvous::meet_sharing(int rank, Waiter& waiter, std::span<const std::byte> data) {
  refuse_if_settled(waiter);
  if (!exchange_) {
    checked_meet(rank, waiter, [] {});
    return false;
  }
  return exchange_meet(rank, waiter, {slots_[rank].call, true, data}) ==
         Exchange::Outcome::kShared;
}

void Rendezvous::post_sharing(int rank, Waiter& waiter, std::span<const std::byte> data) {
  refuse_if_settled(waiter);
  exchange_->post(rank, {slots_[rank].call, true, data});
}

bool Rendezvous::finish_sharing(int rank, Waiter& waiter) {
  return settle(rank, waiter, exchange_->collect(rank, waiter)) ==
         Exchange::Outcome::kShared;
}

void Rendezvous::arrive(int rank, Waiter& waiter) {
  refuse_if_settled(waiter);
  if (exchange_) {
    exchange_->meet(rank, waiter, {});
  } else {
    arrive_impl(rank, waiter, [] {});
  }
}

std::byte* Rendezvous::leader_result(size_t bytes) {
  const size_t units = (bytes + sizeof(std::max_align_t) - 1) / sizeof(std::max_align_t);
  if (units > leader_result_.size()) leader_result_.resize(units);
  return reinterpret_cast<std::byte*>(leader_result_.data());
}

std::string Rendezvous::mismatch_message(const CollectiveCall& first, int rank,
                                         const CollectiveCall& other) const {
  return "collective mismatch in " + describe() + ": " + member_name(0) + " called " +
         first.describe() + " but " + member_name(rank) + " called " + other.describe();
}

void Rendezvous::check_calls() {
  failed_ = false;
  if (verified_ && std::all_of(slots_.get(), slots_.get() + size(),
                               [](const Slot& s) { return s.repeats; })) {
    return;
  }
  verified_ = false;
  const CollectiveCall& first = *slots_[0].call;
  for (int rank = 1; rank < size(); ++rank) {
    if (slots_[rank].call->same_as(first)) continue;
    failed_ = true;
    error_ = mismatch_message(first, rank, *slots_[rank].call);
    return;
  }
  verified_ = true;
}

void Rendezvous::reset() {
  arrived_.store(0, std::memory_order_relaxed);
  for (ArrivalBlock& block : arrival_blocks_) block.arrived.store(0, std::memory_order_relaxed);
  released_.clear_poison();
  if (exchange_) exchange_->reset();
  for (int rank = 0; rank < size(); ++rank) {
    slots_[rank].clock_posts = 0;
    slots_[rank].call = nullptr;  // its caller unwound
  }
  failed_ = false;
  verified_ = false;
}

}  // namespace meshsim
