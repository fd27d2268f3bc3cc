#include "meshsim/mesh/visualize_sharding.h"

#include <algorithm>
#include <map>
#include <utility>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/internal/format.h"

namespace meshsim {
namespace {

// The box-drawing pieces of a grid line: left end, fill, junction, right end.
struct RuleGlyphs {
  const char* left;
  const char* junction;
  const char* right;
};
constexpr RuleGlyphs kTop{"┌", "┬", "┐"};
constexpr RuleGlyphs kMiddle{"├", "┼", "┤"};
constexpr RuleGlyphs kBottom{"└", "┴", "┘"};

std::string rule(const std::vector<size_t>& widths, const RuleGlyphs& glyphs) {
  std::string line = glyphs.left;
  for (size_t c = 0; c < widths.size(); ++c) {
    if (c > 0) line += glyphs.junction;
    for (size_t i = 0; i < widths[c]; ++i) line += "─";
  }
  return line + glyphs.right + "\n";
}

// `text` centred in `width` columns (extra space on the right).
std::string centred(const std::string& text, size_t width) {
  const size_t left = (width - text.size()) / 2;
  return std::string(left, ' ') + text + std::string(width - text.size() - left, ' ');
}

}  // namespace

std::string format_device_list(std::vector<int> ids) {
  std::sort(ids.begin(), ids.end());
  std::string out;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(ids[i]);
    if (j > i) {
      // Two neighbours read better as "0,1" than as "0-1".
      out += j == i + 1 ? ',' : '-';
      out += std::to_string(ids[j]);
    }
    i = j + 1;
  }
  return out;
}

std::string visualize_sharding(const NamedSharding& sharding,
                               std::span<const int64_t> global_shape) {
  const int rank = static_cast<int>(global_shape.size());
  if (rank > 2) {
    throw ShapeError("visualize_sharding shows 1-D and 2-D arrays; got shape " +
                     format_ints(global_shape, "(", ")"));
  }
  // Validates the spec against the mesh and the shape (SpecError / ShapeError).
  (void)sharding.shard_shape(global_shape);

  // Block (row, column) -> the devices holding it. A 1-D array is one row;
  // a scalar is one block.
  std::map<std::pair<int64_t, int64_t>, std::vector<int>> holders;
  std::vector<int64_t> row_starts, column_starts;
  for (int id : sharding.mesh().device_ids()) {
    const std::vector<DimSlice> box = sharding.device_slice(global_shape, id);
    const int64_t row = rank == 2 ? box[0].start : 0;
    const int64_t column = rank == 0 ? 0 : box[rank - 1].start;
    holders[{row, column}].push_back(id);
    row_starts.push_back(row);
    column_starts.push_back(column);
  }
  for (auto* starts : {&row_starts, &column_starts}) {
    std::sort(starts->begin(), starts->end());
    starts->erase(std::unique(starts->begin(), starts->end()), starts->end());
  }

  // Every column is as wide as its widest label, plus a space on each side.
  std::map<std::pair<int64_t, int64_t>, std::string> labels;
  std::vector<size_t> widths(column_starts.size(), 0);
  for (const auto& [block, ids] : holders) {
    const std::string label = format_device_list(ids);
    const size_t c = std::lower_bound(column_starts.begin(), column_starts.end(), block.second) -
                     column_starts.begin();
    widths[c] = std::max(widths[c], label.size() + 2);
    labels[block] = label;
  }

  std::string out = rule(widths, kTop);
  for (size_t r = 0; r < row_starts.size(); ++r) {
    if (r > 0) out += rule(widths, kMiddle);
    out += "│";
    for (size_t c = 0; c < column_starts.size(); ++c) {
      out += centred(labels[{row_starts[r], column_starts[c]}], widths[c]) + "│";
    }
    out += "\n";
  }
  return out + rule(widths, kBottom);
}

}  // namespace meshsim
