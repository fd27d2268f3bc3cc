#include "meshsim/collectives/ppermute.h"

#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "meshsim/collectives/internal/meeting.h"
#include "meshsim/mesh/error.h"
#include "meshsim/mesh/internal/dimension.h"
#include "meshsim/mesh/internal/format.h"

namespace meshsim {
namespace detail {
namespace {

std::string pair_text(const std::pair<int, int>& pair) {
  return "(" + std::to_string(pair.first) + ", " + std::to_string(pair.second) + ")";
}

}  // namespace

PermRoute perm_route(std::span<const std::pair<int, int>> perm, int index, int size,
                     std::string_view op, const AxisNames& axes) {
  const auto fail = [&](const std::string& what) {
    return InvalidPermutationError(std::string(op) + " over " + axes.to_string() + ": " + what);
  };
  PermRoute route;
  const std::pair<int, int>* sends = nullptr;     // the pair whose source is `index`
  const std::pair<int, int>* receives = nullptr;  // the pair whose destination is `index`
  for (const auto& pair : perm) {
    const std::optional<int> source = canonical_dimension(pair.first, size);
    const std::optional<int> destination = canonical_dimension(pair.second, size);
    if (!source || !destination) {
      throw fail("pair " + pair_text(pair) + " of perm is out of range [" +
                 std::to_string(-size) + ", " + std::to_string(size) + ") for axis size " +
                 std::to_string(size));
    }
    if (*source == index) {
      if (sends != nullptr) {
        throw fail("pairs " + pair_text(*sends) + " and " + pair_text(pair) +
                   " of perm have the same source " + std::to_string(index));
      }
      sends = &pair;
      route.destination = *destination;
    }
    if (*destination == index) {
      if (receives != nullptr) {
        throw fail("pairs " + pair_text(*receives) + " and " + pair_text(pair) +
                   " of perm have the same destination " + std::to_string(index));
      }
      receives = &pair;
      route.source = *source;
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
// Every member allocates its own result and publishes it with its x and its
// source; then each result is a copy of its source's x (Meeting::run_direct:
// a shared copy in a small group when S is small; otherwise read in place, by
// the leader for everybody when n·S is small, else by each member, which then
// departs).
// The result never shares storage with the sender's x: copy-on-write would
// not stop the sender from writing, after the collective, through a span it
// took before, and the receiver's result must not change.
// Cost: 1 meeting (small) or 2; S bytes copied per receiving member.
Array permute(Meeting& meeting, const CollectiveCall& call, const Array& x, int source) {
  Array out = source < 0 ? Array::zeros(x.shape(), x.dtype()) : Array::empty_like(x, x.dtype());
  const size_t nbytes = x.nbytes();
  meeting.publish(call, x.bytes(), out.mutable_bytes(), &source);
  meeting.run_direct(nbytes, static_cast<size_t>(meeting.size()) * nbytes, [&](int r, void* output) {
    const int from = *static_cast<const int*>(meeting.peer(r).extra);
    if (from >= 0 && nbytes > 0) std::memcpy(output, meeting.input(from), nbytes);
  });
  meeting.price([&](int r) { return r == source ? static_cast<int64_t>(nbytes) : -1; });
  return out;
}

}  // namespace

Array ppermute(DeviceContext& ctx, const Array& x, const AxisNames& axes,
               ArgSpan<std::pair<int, int>> perm) {
  Meeting meeting(ctx, axes, {}, "ppermute");
  const detail::PermRoute route =
      detail::perm_route(perm, meeting.rank(), meeting.size(), "ppermute", axes);
  // Published normalized, so (-1, 0) on one member matches (n - 1, 0) on another.
  const int n = meeting.size();
  ListParam list(2 * perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    list[2 * i] = *canonical_dimension(perm[i].first, n);
    list[2 * i + 1] = *canonical_dimension(perm[i].second, n);
  }
  CollectiveCall call("ppermute", x.dtype(), x.shape());
  call.list_name = "perm";
  call.list = list.values();
  return permute(meeting, call, x, route.source);
}

Array pshuffle(DeviceContext& ctx, const Array& x, const AxisNames& axes, ArgSpan<int> perm) {
  Meeting meeting(ctx, axes, {}, "pshuffle");
  const int size = meeting.size();
  const int rank = meeting.rank();
  const auto fail = [&](const std::string& what) {
    return InvalidPermutationError("pshuffle over " + axes.to_string() + ": perm " +
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
