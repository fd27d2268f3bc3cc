#pragma once
// The sequential reference behind `meshsim bench --check`: deterministic
// inputs, the result every device must receive, computed plainly on the host
// from all devices' inputs (element loops and memcpy, not the collectives' own
// kernels), and the count of wrong elements.
//
// Inputs hold small integers, so a correct result is bitwise equal to the
// reference in every dtype: integer sums wrap identically in any order, and
// float sums of such values are exact integers below 2^24 until the one final
// rounding to the dtype, which the collectives (float16 / bfloat16 accumulate
// in float32) and this reference (accumulates in float64) both do once.
//
// Layouts (all 1-d, tiled along dim 0, ranks as in DeviceGroups):
// all_gather: the group's inputs concatenated in rank order.
// psum_scatter: block `rank` of n equal blocks of the group's sum.
// all_to_all: block `rank` of every member's input, in sender rank order.
// ring shift (ppermute i -> i+1): the input of rank (rank - 1) mod n.
// broadcast: the input of rank `root`.
// ragged_all_to_all: sender s sends sizes[s][r] rows to rank r, taken from its
//   input in receiver order; receiver r stores them in sender order from row 0,
//   and rows it does not receive are zero.

#include <cstdint>
#include <span>
#include <vector>

#include "meshsim/collectives/internal/reduction.h"
#include "meshsim/mesh/axis_groups.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/array/dtype.h"

namespace meshsim::cli {

// Element i of mesh position p's input is v = (p * 7919 + i * 31) mod
// `modulus`, stored as v - modulus / 2 (unsigned types wrap) or, for bool, as
// v odd. kReduceModulus keeps sums small; kMoveModulus gives neighbours and
// devices distinct values, so a misplaced block is seen (values up to 125 are
// exact in every dtype).
inline constexpr int kReduceModulus = 5;
inline constexpr int kMoveModulus = 251;
Array bench_input(DType dtype, int64_t count, int position, int modulus);

// Every function returns expected[mesh position] for every position of
// `groups`; inputs[p] is position p's input. Members whose results are equal
// share one Array. No result shares storage with an input, so a collective
// that writes into the inputs cannot change what it is compared with.
std::vector<Array> expected_all_reduce(ReduceOp op, std::span<const Array> inputs,
                                       const DeviceGroups& groups);
std::vector<Array> expected_all_gather(std::span<const Array> inputs, const DeviceGroups& groups);
std::vector<Array> expected_psum_scatter(std::span<const Array> inputs, const DeviceGroups& groups);
std::vector<Array> expected_all_to_all(std::span<const Array> inputs, const DeviceGroups& groups);
std::vector<Array> expected_ring_shift(std::span<const Array> inputs, const DeviceGroups& groups);
std::vector<Array> expected_broadcast(std::span<const Array> inputs, const DeviceGroups& groups,
                                      int root);
// sizes[s][r]: rows rank s sends to rank r (see ragged_send_sizes).
std::vector<Array> expected_ragged_all_to_all(std::span<const Array> inputs,
                                              const DeviceGroups& groups,
                                              const std::vector<std::vector<int64_t>>& sizes);

// A seeded n x n matrix of non-negative row counts whose every row and every
// column sums to `rows`: each member sends its whole input and receives
// exactly `rows` rows, but how they split between peers varies.
std::vector<std::vector<int64_t>> ragged_send_sizes(int n, int64_t rows, uint64_t seed);

// The number of elements of `result` whose bits differ from `expected`'s;
// every element of `expected` when the dtypes or shapes differ.
int64_t count_wrong(const Array& result, const Array& expected);

}  // namespace meshsim::cli
