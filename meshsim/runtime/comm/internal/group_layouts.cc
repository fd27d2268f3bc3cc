#include "meshsim/runtime/comm/internal/group_layouts.h"

#include <algorithm>
#include <string_view>
#include <vector>

namespace meshsim {
namespace {

// Names and sizes, axes and groups, each part length-prefixed so that no two
// different requests share a key.
std::string key_of(const AbstractMesh& mesh, std::span<const std::string> axes,
                   const AxisIndexGroups& index_groups) {
  std::string key;
  const auto add = [&key](std::string_view text) {
    key += std::to_string(text.size());
    key += ':';
    key += text;
  };
  for (int a = 0; a < mesh.num_axes(); ++a) {
    add(mesh.axis_names()[a]);
    add(std::to_string(mesh.axis_sizes()[a]));
  }
  key += '|';
  for (const std::string& axis : axes) add(axis);
  key += '|';
  for (const std::vector<int>& group : index_groups) {
    key += '[';
    for (int index : group) add(std::to_string(index));
    key += ']';
  }
  return key;
}

}  // namespace

std::shared_ptr<const DeviceGroups> GroupLayouts::get(const AbstractMesh& mesh,
                                                      std::span<const std::string> axes,
                                                      const AxisIndexGroups& index_groups) {
  std::string key = key_of(mesh, axes, index_groups);
  std::lock_guard lock(mu_);
  if (const auto it = layouts_.find(key); it != layouts_.end()) {
    if (std::shared_ptr<const DeviceGroups> layout = it->second.lock()) return layout;
  }
  auto layout = std::make_shared<const DeviceGroups>(
      device_groups(mesh, axes, index_groups, /*require_equal_sizes=*/false));
  ++computed_;
  layouts_[std::move(key)] = layout;
  if (layouts_.size() >= purge_at_) {
    std::erase_if(layouts_, [](const auto& entry) { return entry.second.expired(); });
    purge_at_ = std::max<size_t>(64, 2 * layouts_.size());
  }
  return layout;
}

uint64_t GroupLayouts::computed() const {
  std::lock_guard lock(mu_);
  return computed_;
}

}  // namespace meshsim
