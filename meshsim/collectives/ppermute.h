#pragma once
// jax.lax.ppermute and jax.lax.pshuffle: move x between the members of each
// group over `axes` (one axis or several, major-to-minor) along a permutation
// of axis indices.
//
// ppermute: `perm` holds (source, destination) axis-index pairs, each index in
//   [-n, n) for axis size n (a negative one means index + n, as JAX); the member
//   at `destination` receives the `source` member's x, and a member that is no
//   pair's destination receives zeros of x's shape and dtype.
// pshuffle: the member at axis index i receives the x of axis index perm[i];
//   perm must be a permutation of range(axis_size).
//
// Every member must pass the same perm, dtype and shape, else every member
// gets CollectiveMismatchError (perms compare after normalization). A bad perm
// is an InvalidPermutationError naming the pair or entry at fault: a ppermute
// index out of [-n, n), two pairs with one source or one destination after
// normalization, a pshuffle perm of the wrong length, with an entry out of
// [0, n) (JAX's pshuffle takes no negative entries) or a repeated entry.
// Each member checks the range of every entry and the
// uniqueness of its own index, so a repeat is reported by the device whose
// index repeats (O(|perm|) work per member).
// The result is a copy in the receiver's own storage: nothing the sender does
// afterwards, through any handle or span, changes it.

#include <span>
#include <string_view>
#include <utility>

#include "meshsim/mesh/arg_span.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/exec/device_context.h"

namespace meshsim {

Array ppermute(DeviceContext& ctx, const Array& x, const AxisNames& axes,
               ArgSpan<std::pair<int, int>> perm);
Array pshuffle(DeviceContext& ctx, const Array& x, const AxisNames& axes, ArgSpan<int> perm);

namespace detail {

// Where the member at axis index `index` of a group of `size` sends to and
// receives from under ppermute's (source, destination) pairs; -1 for none.
// Throws InvalidPermutationError as ppermute, with `op` (a name such as "psend")
// and `axes` in the message, so psend / precv validate perms the same way.
struct PermRoute {
  int source = -1;
  int destination = -1;
};
PermRoute perm_route(std::span<const std::pair<int, int>> perm, int index, int size,
                     std::string_view op, const AxisNames& axes);

}  // namespace detail
}  // namespace meshsim
