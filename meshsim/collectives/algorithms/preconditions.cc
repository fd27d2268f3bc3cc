#include <string>

#include "meshsim/collectives/algorithms/algorithm.h"

namespace meshsim {
namespace {

struct Flag {
  Precondition flag;
  const char* words;
};
constexpr Flag kFlags[] = {
    {kPowerOfTwoGroup, "power of two group"},
    {kDivisibleCount, "count divisible by the group size"},
    {kCommutativeOp, "commutative op"},
    {kMultipleAxes, "group over >= 2 mesh axes without axis_index_groups"},
    {kEqualGroups, "groups of equal size"},
};

bool power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

}  // namespace

std::string describe_preconditions(uint32_t preconditions) {
  std::string out;
  for (const Flag& f : kFlags) {
    if ((preconditions & f.flag) != 0) out += (out.empty() ? "" : ", ") + std::string(f.words);
  }
  return out.empty() ? "none" : out;
}

std::string unmet_precondition(uint32_t preconditions, const CallShape& shape) {
  const std::string n = std::to_string(shape.group_size);
  if ((preconditions & kPowerOfTwoGroup) != 0 && !power_of_two(shape.group_size)) {
    return "power of two group: group size is " + n;
  }
  if ((preconditions & kDivisibleCount) != 0 && shape.group_size > 0 &&
      shape.count % shape.group_size != 0) {
    return "count divisible by the group size: count " + std::to_string(shape.count) +
           " over group size " + n;
  }
  // kCommutativeOp: every ReduceOp is commutative.
  if ((preconditions & kMultipleAxes) != 0 && (shape.num_axes < 2 || shape.index_groups)) {
    return shape.index_groups ? std::string("group over >= 2 mesh axes: axis_index_groups given")
                              : "group over >= 2 mesh axes: the group spans " +
                                    std::to_string(shape.num_axes) + " axis";
  }
  if ((preconditions & kEqualGroups) != 0 && !shape.equal_groups) {
    return "groups of equal size: the axis_index_groups differ in size";
  }
  return "";
}

}  // namespace meshsim
