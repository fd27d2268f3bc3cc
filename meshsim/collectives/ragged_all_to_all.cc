#include "meshsim/collectives/ragged_all_to_all.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "meshsim/collectives/algorithms/internal/run_algorithm.h"
#include "meshsim/collectives/internal/meeting.h"
#include "meshsim/mesh/error.h"
#include "meshsim/mesh/internal/format.h"

namespace meshsim {
namespace {

// An int32 or int64 index array read as int64; the dtype is resolved once,
// not per element.
class IndexView {
  using Reader = int64_t (*)(const void*, int64_t);

 public:
  explicit IndexView(const Array& array)
      : data_(array.bytes()),
        read_(visit_dtype(array.dtype(), []<class T>(std::type_identity<T>) -> Reader {
          if constexpr (kIsIntegralType<T>) {
            return [](const void* data, int64_t i) -> int64_t {
              return static_cast<int64_t>(static_cast<const T*>(data)[i]);
            };
          } else {
            return nullptr;
          }
        })) {}
  int64_t operator[](int64_t i) const { return read_(data_, i); }

 private:
  const void* data_;
  Reader read_;
};

// What a member publishes (Slot::extra) for its receivers to read.
struct Sends {
  IndexView input_offsets;
  IndexView send_sizes;
  IndexView output_offsets;
};

std::string prefix(const AxisNames& axes) {
  return "ragged_all_to_all over " + axes.to_string() + ": ";
}

// Dtype and rank of one index array; lengths are compared by the caller.
void check_index_array(const Array& array, const char* name, const AxisNames& axes) {
  if (array.dtype() != DType::kInt32 && array.dtype() != DType::kInt64) {
    throw DTypeError(prefix(axes) + name + " must be int32 or int64, got " +
                     std::string(dtype_name(array.dtype())));
  }
  if (array.rank() != 1) {
    throw CollectiveShapeError(prefix(axes) + name + " must have rank 1, got shape " +
                     shape_to_string(array.shape()));
  }
}

void check_arrays(const Array& operand, const Array& output,
                  std::span<const std::pair<const char*, const Array*>> indices, int group_size,
                  const AxisNames& axes) {
  if (operand.dtype() != output.dtype()) {
    throw DTypeError(prefix(axes) + "operand is " + std::string(dtype_name(operand.dtype())) +
                     " but output is " + std::string(dtype_name(output.dtype())));
  }
  const auto& in = operand.shape();
  const auto& out = output.shape();
  if (in.empty() || out.size() != in.size() ||
      !std::equal(in.begin() + 1, in.end(), out.begin() + 1)) {
    throw CollectiveShapeError(prefix(axes) + "operand " + shape_to_string(in) + " and output " +
                     shape_to_string(out) + " must have rank >= 1 and the same dims after dim 0");
  }
  for (const auto& [name, array] : indices) check_index_array(*array, name, axes);
  const int64_t entries = indices[0].second->size();
  for (const auto& [name, array] : indices) {
    if (array->size() != entries) {
      throw CollectiveShapeError(prefix(axes) + name + " has " + std::to_string(array->size()) +
                       " entries but " + indices[0].first + " has " + std::to_string(entries));
    }
  }
  if (entries == 0 || entries % group_size != 0) {
    throw CollectiveShapeError(prefix(axes) + "the index arrays have " + std::to_string(entries) +
                     " entries, not a positive multiple of the group size " +
                     std::to_string(group_size));
  }
}

}  // namespace

// The front-end: checks every argument, then runs the direct ragged
// all-to-all below or a chosen algorithm (algorithms/builtin/ragged_all_to_all/),
// which reports the sizes it received so the front-end can check recv_sizes
// the same way.
//
// The direct ragged all-to-all.
//
// Words: n = group size; spd = slices per peer; a row is one dim-0 slice of
// operand or output (R bytes).
// Steps: every member checks its own index arrays, copies `output` into its
// result (copy-on-write), publishes its operand, result and index arrays, and
// meets. Then each member pulls, from every sender in rank order, the slices
// addressed to it, straight from the sender's operand into its own result,
// checking recv_sizes on the way, and meets again (departure) so that no
// sender frees its operand while a receiver still reads it.
// Cost: 2 barriers; a member reads and writes R times the rows it receives
// and writes nothing else, so there is no write race.
Array ragged_all_to_all(DeviceContext& ctx, const Array& operand, const Array& output,
                        const Array& input_offsets, const Array& send_sizes,
                        const Array& output_offsets, const Array& recv_sizes, const AxisNames& axes,
                        const AxisIndexGroups& axis_index_groups, std::string_view algorithm) {
  Meeting meeting(ctx, axes, axis_index_groups, "ragged_all_to_all");
  const int n = meeting.size();
  const int rank = meeting.rank();
  if (!meeting.group_set().equal_sizes) {
    std::string groups;
    for (const auto& group : axis_index_groups) {
      groups += (groups.empty() ? "" : ", ") + format_ints<int>(group);
    }
    throw GroupError(prefix(axes) + "axis_index_groups [" + groups +
                     "] must all have the same size");
  }
  const std::pair<const char*, const Array*> indices[] = {{"input_offsets", &input_offsets},
                                                          {"send_sizes", &send_sizes},
                                                          {"output_offsets", &output_offsets},
                                                          {"recv_sizes", &recv_sizes}};
  check_arrays(operand, output, indices, n, axes);

  const int64_t entries = input_offsets.size();
  const int64_t per_peer = entries / n;
  const int64_t operand_rows = operand.dim(0);
  const int64_t output_rows = output.dim(0);
  const Sends mine{IndexView(input_offsets), IndexView(send_sizes), IndexView(output_offsets)};
  const IndexView recv(recv_sizes);
  const auto peer = [&](int64_t r) {
    return "peer " + std::to_string(r) + " (device " +
           std::to_string(meeting.rendezvous().device_ids()[r]) + ")";
  };
  const auto value = [](const char* name, int64_t e, int64_t v) {
    return std::string(name) + "[" + std::to_string(e) + "] = " + std::to_string(v);
  };
  for (int64_t e = 0; e < entries; ++e) {
    const auto fail = [&](const std::string& what, const char* direction = "to") {
      return InvalidArgumentError(prefix(axes) + "entry " + std::to_string(e) + " (" + direction +
                                  " " + peer(e / per_peer) + "): " + what);
    };
    const int64_t in = mine.input_offsets[e], size = mine.send_sizes[e];
    const int64_t out = mine.output_offsets[e];
    if (in < 0) throw fail(value("input_offsets", e, in) + " is negative");
    if (size < 0) throw fail(value("send_sizes", e, size) + " is negative");
    if (out < 0) throw fail(value("output_offsets", e, out) + " is negative");
    if (recv[e] < 0) throw fail(value("recv_sizes", e, recv[e]) + " is negative", "from");
    if (in > operand_rows || size > operand_rows - in) {
      throw fail(value("input_offsets", e, in) + " plus " + value("send_sizes", e, size) +
                 " exceeds the operand's " + std::to_string(operand_rows) + " rows");
    }
    if (out > output_rows || size > output_rows - out) {
      throw fail(value("output_offsets", e, out) + " plus " + value("send_sizes", e, size) +
                 " exceeds the receiver's " + std::to_string(output_rows) + " output rows");
    }
  }

  Array result = output;
  std::byte* const dst = result.mutable_bytes();
  const int64_t row_bytes = num_elements(std::span<const int64_t>(operand.shape()).subspan(1)) *
                            static_cast<int64_t>(dtype_size(operand.dtype()));
  // Slice t from sender s: the first one whose size disagrees with recv_sizes.
  std::optional<std::string> mismatch;
  const auto check_received = [&](int s, int64_t t, int64_t size) {
    const int64_t e = rank * per_peer + t;  // the sender's entry for this member
    const int64_t i = s * per_peer + t;     // this member's entry for the sender
    if (recv[i] != size && !mismatch) {
      mismatch = value("recv_sizes", i, recv[i]) + " on " + peer(rank) + " but " + peer(s) +
                 " sends it " + value("send_sizes", e, size);
    }
  };
  const AlgorithmChoice choice =
      choose_algorithm(ctx, "ragged_all_to_all", axes,
                       call_shape(meeting, Collective::kRaggedAllToAll, operand.nbytes(), entries),
                       algorithm);
  CollectiveCall call("ragged_all_to_all", operand.dtype(), operand.shape());
  call.param("output_rows", output_rows).param("entries", entries);
  call.algorithm = choice.name;

  if (!choice.is_direct()) {
    // Algorithms take the index arrays as int64, and report what they received.
    std::vector<int64_t> index(4 * entries), received(entries);
    for (int64_t e = 0; e < entries; ++e) {
      index[e] = mine.input_offsets[e];
      index[entries + e] = mine.send_sizes[e];
      index[2 * entries + e] = mine.output_offsets[e];
      index[3 * entries + e] = recv[e];
    }
    run_algorithm(meeting, choice, Collective::kRaggedAllToAll, call,
                  RaggedAllToAllArgs{.in = operand.bytes(),
                                     .out = dst,
                                     .row_bytes = static_cast<size_t>(row_bytes),
                                     .slices_per_peer = per_peer,
                                     .input_offsets = index.data(),
                                     .send_sizes = index.data() + entries,
                                     .output_offsets = index.data() + 2 * entries,
                                     .recv_sizes = index.data() + 3 * entries,
                                     .received_sizes = received.data()});
    for (int s = 0; s < n; ++s) {
      for (int64_t t = 0; t < per_peer; ++t) check_received(s, t, received[s * per_peer + t]);
    }
    if (mismatch) throw InvalidArgumentError(prefix(axes) + *mismatch);
    return result;
  }

  meeting.publish(call, operand.bytes(), dst, &mine);
  meeting.meet();
  meeting.price([&](int s) {
    const Sends& from = *static_cast<const Sends*>(meeting.peer(s).extra);
    int64_t rows = 0;
    for (int64_t t = 0; t < per_peer; ++t) rows += std::max<int64_t>(from.send_sizes[rank * per_peer + t], 0);
    return rows > 0 ? rows * row_bytes : -1;  // a sender of nothing is not waited for
  });
  for (int s = 0; s < n; ++s) {
    const Sends& from = *static_cast<const Sends*>(meeting.peer(s).extra);
    const auto* src = static_cast<const std::byte*>(meeting.peer(s).input);
    for (int64_t t = 0; t < per_peer; ++t) {
      const int64_t e = rank * per_peer + t;  // the sender's entry for this member
      const int64_t size = from.send_sizes[e];
      check_received(s, t, size);
      if (size * row_bytes > 0) {
        std::memcpy(dst + from.output_offsets[e] * row_bytes,
                    src + from.input_offsets[e] * row_bytes, size * row_bytes);
      }
    }
  }
  meeting.arrive();  // departure: every receiver is done with our operand
  if (mismatch) throw InvalidArgumentError(prefix(axes) + *mismatch);
  return result;
}

}  // namespace meshsim
