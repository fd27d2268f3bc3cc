#include "meshsim/collectives/axis.h"

#include "meshsim/mesh/error.h"

namespace meshsim {
namespace {

// Names the function in an axis error, as the collectives do.
template <class F>
int named(const char* op, const AxisNames& axes, F&& f) {
  try {
    return f();
  } catch (AxisError& e) {
    e.add_context(std::string(op) + " over " + axes.to_string());
    throw;
  }
}

}  // namespace

int axis_index(const DeviceContext& ctx, const AxisNames& axes) {
  return named("axis_index", axes, [&] { return ctx.axis_index(axes); });
}

int axis_size(const DeviceContext& ctx, const AxisNames& axes) {
  return named("axis_size", axes, [&] { return ctx.axis_size(axes); });
}

}  // namespace meshsim
