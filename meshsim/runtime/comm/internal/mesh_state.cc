#include "meshsim/runtime/comm/internal/mesh_state.h"

namespace meshsim {
namespace {

std::atomic<uint64_t> mesh_states_created{0};

}  // namespace

MeshState::MeshState(Mesh mesh, Fabric& fabric, GroupLayouts& layouts)
    : mesh_(std::move(mesh)),
      id_(mesh_states_created.fetch_add(1, std::memory_order_relaxed)),
      fabric_(fabric),
      layouts_(layouts) {
  coords_.reserve(mesh_.size());
  for (int p = 0; p < mesh_.size(); ++p) coords_.push_back(mesh_.abstract_mesh().coords(p));
  for (int id : mesh_.device_ids()) {
    if (static_cast<size_t>(id) >= is_member_.size()) is_member_.resize(id + 1, false);
    is_member_[id] = true;
  }
}

uint64_t MeshState::created_count() { return mesh_states_created.load(std::memory_order_relaxed); }

GroupRef MeshState::group(const AxisNames& axes, const AxisIndexGroups& index_groups,
                          int position) {
  std::lock_guard lock(mu_);
  GroupSet* set = nullptr;
  for (GroupSet& candidate : sets_) {
    if (axes.equals(candidate.axes) && candidate.index_groups == index_groups) {
      set = &candidate;
      break;
    }
  }
  if (set == nullptr) {
    GroupSet fresh;
    fresh.axes = axes.to_vector();
    fresh.index_groups = index_groups;
    fresh.layout = layouts_.get(mesh_.abstract_mesh(), fresh.axes, index_groups);
    const auto& members = fresh.layout->members;
    for (size_t g = 0; g < members.size(); ++g) {
      fresh.equal_sizes = fresh.equal_sizes && members[g].size() == members[0].size();
      std::vector<int> ids;
      for (int p : members[g]) ids.push_back(mesh_.device_at(p));
      fresh.rendezvous.push_back(std::make_unique<Rendezvous>(
          std::move(ids),
          "axes " + axes.to_string() + ", group " + std::to_string(g) + " of " +
              std::to_string(members.size()),
          fabric_.devices()));
    }
    set = &sets_.emplace_back(std::move(fresh));
  }
  const int g = set->layout->group_of[position];
  return {set, set->rendezvous[g].get(), set->layout->rank_of[position], &fabric_,
          &messages_sent_};
}

void MeshState::reset_after_abort() {
  {
    std::lock_guard lock(mu_);
    for (GroupSet& set : sets_) {
      for (auto& r : set.rendezvous) r->reset();
    }
  }
  fabric_.reset([this](int id) { return static_cast<size_t>(id) < is_member_.size() && is_member_[id]; });
  messages_sent_.store(false, std::memory_order_relaxed);
}

std::string MeshState::take_unreceived_messages() {
  if (!messages_sent_.exchange(false, std::memory_order_relaxed)) return "";
  return fabric_.take_unreceived(
      [this](int id) { return static_cast<size_t>(id) < is_member_.size() && is_member_[id]; });
}

}  // namespace meshsim
