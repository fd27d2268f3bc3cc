#include "meshsim/runtime/comm/internal/rendezvous.h"

#include "meshsim/runtime/exec/errors.h"

namespace meshsim {

Rendezvous::Rendezvous(std::vector<int> device_ids, std::string label)
    : device_ids_(std::move(device_ids)),
      label_(std::move(label)),
      slots_(new Slot[device_ids_.size()]) {}

std::string Rendezvous::describe() const {
  std::string out = label_ + " [devices ";
  for (size_t i = 0; i < device_ids_.size(); ++i) {
    out += (i ? ", " : "") + std::to_string(device_ids_[i]);
  }
  return out + "]";
}

template <class Leader>
bool Rendezvous::arrive_impl(Waiter& waiter, Leader&& leader) {
  const uint32_t generation = released_.load();
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == device_ids_.size()) {
    arrived_.store(0, std::memory_order_relaxed);  // nobody arrives before the release below
    leader();
    released_.advance();
    return true;
  }
  waiter.wait_change(released_, generation);
  return false;
}

void Rendezvous::meet(Waiter& waiter, FunctionRef<void()> leader_step) {
  arrive_impl(waiter, [&] {
    check_calls();
    if (!failed_) leader_step();
  });
  if (failed_) throw CollectiveMismatchError(error_);
}

void Rendezvous::arrive(Waiter& waiter) {
  arrive_impl(waiter, [] {});
}

void Rendezvous::check_calls() {
  failed_ = false;
  const uint64_t signature = slots_[0].signature;
  const CollectiveCall& first = slots_[0].call;
  for (int rank = 1; rank < size(); ++rank) {
    const CollectiveCall& other = slots_[rank].call;
    // The signature only rejects fast: equal ones are confirmed field by field.
    if (slots_[rank].signature == signature && other.same_as(first)) continue;
    failed_ = true;
    error_ = "collective mismatch in " + describe() + ": device " +
             std::to_string(device_ids_[0]) + " called " + first.describe() + " but device " +
             std::to_string(device_ids_[rank]) + " called " + other.describe();
    return;
  }
}

void Rendezvous::reset() {
  arrived_.store(0, std::memory_order_relaxed);
  released_.clear_poison();
  failed_ = false;
}

}  // namespace meshsim
