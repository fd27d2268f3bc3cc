#include "meshsim/collectives/axis.h"

namespace meshsim {

int axis_index(const DeviceContext& ctx, AxisNames axes) { return ctx.axis_index(axes); }

int axis_size(const DeviceContext& ctx, AxisNames axes) { return ctx.axis_size(axes); }

}  // namespace meshsim
