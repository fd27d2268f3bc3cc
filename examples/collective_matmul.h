#pragma once
// The bidirectional all-gather collective matmul of Mosaic's TPU example
// kernel, written with meshsim's kernel API (run_kernel, remote DMAs,
// semaphores): every device of a ring computes
//
//   out = concat(lhs shards of the ring's devices, in ring order, along the
//                contraction dim) · rhs
//
// without ever gathering the whole lhs. The rhs stays put ("stationary");
// the lhs shards travel round the ring, half of them leftwards and half
// rightwards, while each device multiplies the shard it holds by the matching
// row block of its rhs.
//
// Words. A ring is a row of `rings`: logical device ids (KernelContext::
// device_id, the position in the launch's mesh), each device's neighbours
// being the ids before and after it, cyclically. Ring length L, even. A slot
// is one (n, k_shard) lhs shard in the scratch buffer (buffering, 2, n,
// k_shard): side 0 holds the shards moving left, side 1 those moving right,
// and the leading index (the version) cycles through the `buffering` copies.
// Schedule: an init step, then L/2 steps s = 0 .. L/2-1.
//   init: capacity semaphores set to buffering - 1 (free slots each neighbour
//         may fill ahead of us), barrier with both neighbours, own shard into
//         slot (0, left), DMA of it into the right neighbour's slot (0, right).
//   step s: the left slot holds the shard of ring position p + s, the right
//         slot that of p - s - 1; unless s is the last step, each is
//         forwarded to the next version of the same side on the neighbour on
//         that side (after waiting for capacity there); both are multiplied
//         into the output; then the capacity freed is signalled back. The
//         last step instead takes back the buffering - 1 initial capacity, so
//         every semaphore ends at 0.
// Cost per device: L - 1 DMAs of n·k_shard bfloat16 (one per direction per
// step, the last step none, the init step one), L products of (n, k_shard) by
// (k_shard, m), and at most buffering - 1 shards in flight per direction.
// With virtual time each product is DeviceContext::compute on the launch's
// DeviceSpec roofline (which must then be set), overlapping the DMAs in
// flight.

#include <vector>

#include <meshsim/meshsim.h>

namespace meshsim::examples {

// Call on every device of a launch (rt.launch or a shard_map body) with the
// same rhs, rings, collective_id and buffering; each passes its own lhs
// shard. Returns the device's (n, m) float32 product, accumulated in float32.
//   lhs_local: (n, k_shard) bfloat16; rhs: (L · k_shard, m) bfloat16.
//   rings: R rows of L ids; together they hold each id of the launch's mesh
//     (0 .. size-1) once. Every device takes part in its own row's ring.
//   collective_id: the kernel's barrier semaphore (KernelSpec::
//     set_collective_id): no other kernel of the Runtime may hold it at once.
//   buffering: how many versions of each slot: a power of two, at least 2.
//     (With one, every device waits for capacity its neighbour grants only
//     after its own send, so a ring of 4 or more could never start.)
// Errors, on every device before the kernel starts, checked in this order:
//   ShapeError: lhs_local or rhs not 2-D (naming the shape).
//   InvalidArgumentError: no rings, or rows of different lengths (naming the
//     row and both lengths).
//   ShapeError: rhs rows != k_shard · L (naming k_shard, L and both counts).
//   DTypeError: lhs_local or rhs not bfloat16 (naming both dtypes). The
//     output is float32 by construction.
//   InvalidArgumentError: L odd; buffering not a power of two >= 2; ids that
//     are not each of 0 .. size-1 once (naming the count or the id at fault).
// Then the kernel's: InvalidArgumentError for a negative collective_id,
// CollectiveIdError for one another kernel holds, and any device's failure.
Array bidirectional_allgather_matmul(DeviceContext& ctx, const Array& lhs_local, const Array& rhs,
                                     const std::vector<std::vector<int>>& rings, int collective_id,
                                     int buffering = 2);

}  // namespace meshsim::examples
