#include "meshsim/collectives/ppermute.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "meshsim/collectives/internal/meeting.h"
#include "meshsim/mesh/error.h"
#include "meshsim/mesh/internal/format.h"

namespace meshsim {
namespace detail {
namespace {

std::string pair_text(const std::pair<int, int>& pair) {
  return "(" + std::to_string(pair.first) + ", " + std::to_string(pair.second) + ")";
}

}  // namespace

PermRoute perm_route(std::span<const std::pair<int, int>> perm, int index, int size,
                     std::string_view op, AxisNames axes) {
  const auto fail = [&](const std::string& what) -> InvalidArgumentError {
    return InvalidArgumentError(std::string(op) + " over " + axes.to_string() + ": " + what);
  };
  PermRoute route;
  const std::pair<int, int>* sends = nullptr;     // the pair whose source is `index`
  const std::pair<int, int>* receives = nullptr;  // the pair whose destination is `index`
  for (const auto& pair : perm) {
    const auto [source, destination] = pair;
    if (source < 0 || source >= size || destination < 0 || destination >= size) {
      throw fail("pair " + pair_text(pair) + " of perm is out of range [0, " +
                 std::to_string(size) + ") for axis size " + std::to_string(size));
    }
    if (source == index) {
      if (sends != nullptr) {
        throw fail("pairs " + pair_text(*sends) + " and " + pair_text(pair) +
                   " of perm have the same source " + std::to_string(index));
      }
      sends = &pair;
      route.destination = destination;
    }
    if (destination == index) {
      if (receives != nullptr) {
        throw fail("pairs " + pair_text(*receives) + " and " + pair_text(pair) +
                   " of perm have the same destination " + std::to_string(index));
      }
      receives = &pair;
      route.source = source;
    }
  }
  return route;
}

}  // namespace detail

namespace {

// CollectiveCall's list parameter holds int64 values; perms come as ints. Up to
// kInline values live on the stack, so common perms allocate nothing.
class ListParam {
 public:
  explicit ListParam(size_t size) : size_(size) {
    if (size > kInline) heap_.resize(size);
  }
  int64_t& operator[](size_t i) { return heap_.empty() ? inline_[i] : heap_[i]; }
  std::span<const int64_t> values() const {
    return heap_.empty() ? std::span<const int64_t>(inline_.data(), size_) : heap_;
  }

 private:
  static constexpr size_t kInline = 256;
  std::array<int64_t, kInline> inline_;
  std::vector<int64_t> heap_;
  size_t size_;
};

// The direct permutation behind ppermute and pshuffle.
//
// Words: n = group size, S = bytes of x; a member's source is the rank whose x
// it receives, or -1 (it receives zeros).
// Steps: every member publishes its x, its result and its source, and meets.
// The leader, while every member is held, sets each member's result to its
// source's x — a copy of the Array handle, which shares the storage — and
// releases everybody.
// Cost: 1 barrier; S bytes move to each destination logically, none
// physically; the leader makes at most n handle copies. No departure step:
// nobody touches a peer's Array after the release.
Array permute(Meeting& meeting, const CollectiveCall& call, const Array& x, int source) {
  std::optional<Array> out;
  if (source < 0) out = Array::zeros(x.shape(), x.dtype());
  meeting.publish(call, &x, &out, &source);
  meeting.meet([&] {
    for (int r = 0; r < meeting.size(); ++r) {
      const Rendezvous::Slot& member = meeting.peer(r);
      const int from = *static_cast<const int*>(member.extra);
      if (from < 0) continue;
      *static_cast<std::optional<Array>*>(member.output) =
          *static_cast<const Array*>(meeting.peer(from).input);
    }
  });
  return *std::move(out);
}

}  // namespace

Array ppermute(DeviceContext& ctx, const Array& x, AxisNames axes,
               ArgSpan<std::pair<int, int>> perm) {
  Meeting meeting(ctx, axes, {}, "ppermute");
  const detail::PermRoute route =
      detail::perm_route(perm, meeting.rank(), meeting.size(), "ppermute", axes);
  ListParam list(2 * perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    list[2 * i] = perm[i].first;
    list[2 * i + 1] = perm[i].second;
  }
  CollectiveCall call("ppermute", x.dtype(), x.shape());
  call.list_name = "perm";
  call.list = list.values();
  return permute(meeting, call, x, route.source);
}

Array pshuffle(DeviceContext& ctx, const Array& x, AxisNames axes, ArgSpan<int> perm) {
  Meeting meeting(ctx, axes, {}, "pshuffle");
  const int size = meeting.size();
  const int rank = meeting.rank();
  const auto fail = [&](const std::string& what) {
    return InvalidArgumentError("pshuffle over " + axes.to_string() + ": perm " +
                                format_ints(perm.span()) + " " + what);
  };
  if (perm.size() != static_cast<size_t>(size)) {
    throw fail("has " + std::to_string(perm.size()) + " entries but the axis size is " +
               std::to_string(size));
  }
  // In range, and this member's index at most once: with size entries, an
  // index that is missing means another one repeats, which its member reports.
  int seen_at = -1;
  ListParam list(perm.size());
  for (int i = 0; i < size; ++i) {
    if (perm[i] < 0 || perm[i] >= size) {
      throw fail("has perm[" + std::to_string(i) + "] = " + std::to_string(perm[i]) +
                 ", out of range [0, " + std::to_string(size) + ")");
    }
    if (perm[i] == rank) {
      if (seen_at >= 0) {
        throw fail("is not a permutation of range(" + std::to_string(size) +
                   "): " + std::to_string(rank) + " appears at entries " + std::to_string(seen_at) +
                   " and " + std::to_string(i));
      }
      seen_at = i;
    }
    list[i] = perm[i];
  }
  CollectiveCall call("pshuffle", x.dtype(), x.shape());
  call.list_name = "perm";
  call.list = list.values();
  return permute(meeting, call, x, perm[rank]);
}

}  // namespace meshsim
