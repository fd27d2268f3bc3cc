#include "meshsim/runtime/exec/internal/launch_report.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

namespace meshsim {
namespace {

constexpr size_t kMaxStates = 32;

std::string who(std::span<const int> ids) {
  if (ids.size() == 1) return "device " + std::to_string(ids[0]);
  return "devices " + compress_ids(ids);
}

// A Rendezvous label reads "axes 'x', group 1 of 4": the part before
// ", group" names the group set, so the groups of one set share a state.
struct GroupName {
  std::string set;
  int index = -1;  // -1: the label has another form; `set` is all of it
  int count = 0;
};

GroupName parse_label(const std::string& label) {
  const size_t at = label.rfind(", group ");
  int index = 0, count = 0;
  if (at == std::string::npos ||
      std::sscanf(label.c_str() + at, ", group %d of %d", &index, &count) != 2) {
    return {label};
  }
  return {label.substr(0, at), index, count};
}

struct State {
  std::vector<int> ids;
  int core = 0;
  std::string head;  // what, up to the group
  std::string tail;  // after the group
  bool has_group = false;
  GroupName group;
  int min_index = 0, max_index = 0;
};

std::string describe(const State& s) {
  std::string out = s.head;
  if (s.has_group) {
    out += " on " + s.group.set;
    if (s.group.index >= 0) {
      out += s.min_index == s.max_index
                 ? ", group " + std::to_string(s.min_index)
                 : ", groups " + std::to_string(s.min_index) + "–" + std::to_string(s.max_index);
      out += " of " + std::to_string(s.group.count);
    }
  }
  return out + s.tail;
}

}  // namespace

std::string compress_ids(std::span<const int> ids, size_t max_parts) {
  std::string out;
  size_t parts = 0, i = 0;
  while (i < ids.size()) {
    if (parts == max_parts) {
      out += ", … (" + std::to_string(ids.size()) + " in all)";
      break;
    }
    size_t j = i;
    if (i + 2 < ids.size() && ids[i + 1] - ids[i] == ids[i + 2] - ids[i + 1] &&
        ids[i + 1] != ids[i]) {
      const int step = ids[i + 1] - ids[i];
      j = i + 2;
      while (j + 1 < ids.size() && ids[j + 1] - ids[j] == step) ++j;
      out += (parts ? ", " : "") + std::to_string(ids[i]) + "–" + std::to_string(ids[j]);
      if (step != 1) out += " step " + std::to_string(step);
    } else {
      out += (parts ? ", " : "") + std::to_string(ids[i]);
    }
    ++parts;
    i = j + 1;
  }
  return out;
}

std::string summarize_devices(std::span<const DeviceSnapshot> devices) {
  std::unordered_map<const Rendezvous*, GroupName> names;
  std::unordered_map<std::string, size_t> index_of;
  std::vector<State> states;
  for (const DeviceSnapshot& d : devices) {
    State s;
    switch (d.state) {
      case DeviceSnapshot::State::kNotStarted:
        s.head = "not started (its thread or worker is busy elsewhere)";
        break;
      case DeviceSnapshot::State::kFinished:
        s.head = "finished";
        break;
      case DeviceSnapshot::State::kOwnCode:
        s.head = "running its own code";
        s.tail = " after " + std::to_string(d.collectives) + " collectives";
        break;
      case DeviceSnapshot::State::kWaiting:
        s.head = std::string("waiting in ") + (d.op ? d.op : "an unnamed wait") + d.detail;
        s.tail = " after " + std::to_string(d.collectives) + " collectives";
        if (d.group != nullptr) {
          auto it = names.find(d.group);
          if (it == names.end()) it = names.emplace(d.group, parse_label(d.group->label())).first;
          s.has_group = true;
          s.group = it->second;
        }
        break;
    }
    s.core = d.core;
    const std::string key = s.head + '\n' + s.group.set + '\n' + std::to_string(s.group.count) +
                            '\n' + s.tail + '\n' + std::to_string(d.core);
    const int group_index = s.group.index;
    auto [it, inserted] = index_of.emplace(key, states.size());
    if (inserted) {
      s.min_index = s.max_index = group_index;
      states.push_back(std::move(s));
    }
    State& state = states[it->second];
    state.ids.push_back(d.id);
    state.min_index = std::min(state.min_index, group_index);
    state.max_index = std::max(state.max_index, group_index);
  }
  std::string out;
  for (size_t i = 0; i < states.size() && i < kMaxStates; ++i) {
    out += "\n  " + who(states[i].ids);
    if (states[i].core > 0) out += " (core " + std::to_string(states[i].core) + ")";
    out += ": " + describe(states[i]);
  }
  if (states.size() > kMaxStates) {
    size_t rest = 0;
    for (size_t i = kMaxStates; i < states.size(); ++i) rest += states[i].ids.size();
    out += "\n  … and " + std::to_string(states.size() - kMaxStates) + " more states of " +
           std::to_string(rest) + " devices";
  }
  return out;
}

std::optional<GroupMismatch> find_group_mismatch(std::span<const DeviceSnapshot> devices) {
  const auto meeting = [](const DeviceSnapshot& d) {
    return d.blocked_in_group_meeting && d.op != nullptr && d.group != nullptr;
  };
  std::unordered_map<int, const DeviceSnapshot*> by_agent;
  for (const DeviceSnapshot& d : devices) by_agent.emplace(d.agent, &d);
  std::unordered_set<const Rendezvous*> checked;
  for (const DeviceSnapshot& d : devices) {
    if (!meeting(d) || !checked.insert(d.group).second) continue;
    for (int member : d.group->agent_ids()) {
      const auto it = by_agent.find(member);
      if (it == by_agent.end()) continue;
      const DeviceSnapshot& other = *it->second;
      if (!meeting(other) || other.group == d.group || std::strcmp(other.op, d.op) != 0) continue;
      const auto side = [&](const Rendezvous* group) {
        std::vector<int> ids;
        for (const DeviceSnapshot& s : devices) {
          if (meeting(s) && s.group == group && std::strcmp(s.op, d.op) == 0) ids.push_back(s.id);
        }
        return std::pair{ids.front(), who(ids) + (ids.size() == 1 ? " calls " : " call ") + d.op +
                                          " on " + group->label() + " [devices " +
                                          compress_ids(group->device_ids()) + "]"};
      };
      const auto [first, mine] = side(d.group);
      // Two spellings of one grouping: each is a group set of its own.
      const bool alike = d.group->label() == other.group->label() &&
                         std::ranges::equal(d.group->device_ids(), other.group->device_ids());
      return GroupMismatch{
          first, "collective mismatch: " + mine + " but " + side(other.group).second +
                     "; neither group can ever meet" +
                     (alike ? " (the same devices, grouped by different axis_index_groups that "
                              "order them alike: pass the same groups on every member)"
                            : "") +
                     "."};
    }
  }
  return std::nullopt;
}

}  // namespace meshsim
