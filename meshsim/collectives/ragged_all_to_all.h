#pragma once
// jax.lax.ragged_all_to_all: an all_to_all of ragged slices along dim 0 among
// the members of each group over `axes` (one axis or several, major-to-minor),
// optionally split by axis_index_groups (of equal sizes, as JAX requires).
//
// Words: n = group size; a member's "peer j" is the member of rank j in its
// group (its axis index when there are no axis_index_groups); K = the length
// of the four index arrays, a multiple of n, and spd = K / n. Entry e of a
// member's index arrays concerns peer e / spd.
// - Sending: for every entry e, rows [input_offsets[e], + send_sizes[e]) of
//   `operand` go to peer e / spd and land in that peer's result at rows
//   [output_offsets[e], + send_sizes[e]): the SENDER's output_offsets say
//   where its slice lands on the receiver.
// - Receiving: member r gets, from each sender s and t in [0, spd), the slice
//   of s's entry r * spd + t; its recv_sizes[s * spd + t] must equal that
//   slice's size (JAX: send_sizes == all_to_all(recv_sizes, tiled=True)).
// - The result is `output` with the received slices written in sender order
//   (where slices overlap, the higher sender rank wins); every other row is as
//   in `output`. The caller's `output` is not modified (copy-on-write).
// JAX's docstring example, axis of size 2:
//   index 0: operand [1, 2, 2], input_offsets [0, 1], send_sizes [1, 2],
//            output_offsets [0, 0], recv_sizes [1, 1], output [0, 0, 0, 0]
//   index 1: operand [3, 4, 0], input_offsets [0, 1], send_sizes [1, 1],
//            output_offsets [1, 2], recv_sizes [2, 1], output [0, 0, 0, 0]
//   results: index 0 [1, 3, 0, 0], index 1 [2, 2, 4, 0].
//
// Errors, each naming the parameter, the peer (rank and device) and the
// numbers; the launch adds the device that raised it:
// - DTypeError: operand and output differ in dtype; an index array is not
//   int32 or int64.
// - CollectiveShapeError: operand of rank 0; output not of operand's rank and dims after
//   dim 0; an index array not of rank 1; index arrays of different lengths, or
//   a length that is 0 or not a multiple of n.
// - GroupError: axis_index_groups of different sizes (and as
//   validate_axis_index_groups).
// - InvalidArgumentError: a negative offset or size; a slice past the end of
//   the operand, or past the end of the output (every member's output must
//   have the same rows); recv_sizes that disagree with the sender's
//   send_sizes (raised by the receiver after every member has finished
//   reading, so no buffer is freed while a peer reads it).
// - CollectiveMismatchError on every member if members pass different operand
//   shapes or dtypes, output rows, or index array lengths, or choose
//   different algorithms.
//
// `algorithm`: "" for the runtime's choice, "auto", or a name of
// algorithms/registry.h's ragged_all_to_all table (direct, pairwise, linear,
// or one a user registered). Every algorithm gives the direct result bitwise.

#include <string_view>

#include "meshsim/mesh/axis_groups.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/exec/device_context.h"

namespace meshsim {

Array ragged_all_to_all(DeviceContext& ctx, const Array& operand, const Array& output,
                        const Array& input_offsets, const Array& send_sizes,
                        const Array& output_offsets, const Array& recv_sizes, const AxisNames& axes,
                        const AxisIndexGroups& axis_index_groups = {},
                        std::string_view algorithm = {});

}  // namespace meshsim
