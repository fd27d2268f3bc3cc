#pragma once
// meshsim: a mesh of simulated accelerator devices in one process, with the
// semantics of jax.shard_map and the jax.lax parallel collectives.
// This header brings in the whole public API: #include <meshsim/meshsim.h>.

#include "meshsim/mesh/abstract_mesh.h"              // IWYU pragma: export
#include "meshsim/mesh/arg_span.h"                   // IWYU pragma: export
#include "meshsim/mesh/axis_groups.h"                // IWYU pragma: export
#include "meshsim/mesh/error.h"                      // IWYU pragma: export
#include "meshsim/mesh/mesh.h"                       // IWYU pragma: export
#include "meshsim/mesh/partition_spec.h"             // IWYU pragma: export
#include "meshsim/mesh/sharding.h"                   // IWYU pragma: export
#include "meshsim/mesh/topology/topology.h"          // IWYU pragma: export
#include "meshsim/mesh/topology/topology_json.h"     // IWYU pragma: export
#include "meshsim/mesh/topology/topology_mapping.h"  // IWYU pragma: export
#include "meshsim/mesh/topology/topology_spec.h"     // IWYU pragma: export
#include "meshsim/runtime/array/array.h"             // IWYU pragma: export
#include "meshsim/runtime/array/array_ops.h"         // IWYU pragma: export
#include "meshsim/runtime/array/array_shape_ops.h"   // IWYU pragma: export
#include "meshsim/runtime/array/array_views.h"       // IWYU pragma: export
#include "meshsim/runtime/array/dtype.h"             // IWYU pragma: export
#include "meshsim/runtime/comm/axis_names.h"         // IWYU pragma: export
#include "meshsim/runtime/drivers/plan.h"            // IWYU pragma: export
#include "meshsim/runtime/drivers/pmap.h"            // IWYU pragma: export
#include "meshsim/runtime/drivers/shard_map.h"       // IWYU pragma: export
#include "meshsim/runtime/drivers/sharded_array.h"   // IWYU pragma: export
#include "meshsim/runtime/exec/device_context.h"     // IWYU pragma: export
#include "meshsim/runtime/exec/errors.h"             // IWYU pragma: export
#include "meshsim/runtime/exec/launch_record.h"      // IWYU pragma: export
#include "meshsim/runtime/exec/runtime.h"            // IWYU pragma: export
#include "meshsim/runtime/exec/wait_policy.h"        // IWYU pragma: export
#include "meshsim/runtime/kernel/device_id.h"        // IWYU pragma: export
#include "meshsim/runtime/kernel/kernel_context.h"   // IWYU pragma: export
#include "meshsim/runtime/kernel/kernel_spec.h"      // IWYU pragma: export
#include "meshsim/runtime/kernel/mpmd_map.h"         // IWYU pragma: export
#include "meshsim/runtime/kernel/run_kernel.h"       // IWYU pragma: export
#include "meshsim/runtime/time/callback_model.h"     // IWYU pragma: export
#include "meshsim/runtime/time/congestion_aware_model.h"    // IWYU pragma: export
#include "meshsim/runtime/time/congestion_unaware_model.h"  // IWYU pragma: export
#include "meshsim/runtime/time/network_model.h"      // IWYU pragma: export
#include "meshsim/runtime/time/virtual_time.h"       // IWYU pragma: export
#include "meshsim/runtime/trace/chrome_trace.h"      // IWYU pragma: export
#include "meshsim/runtime/trace/trace_event.h"       // IWYU pragma: export
#include "meshsim/collectives/algorithms/registry.h"  // IWYU pragma: export
#include "meshsim/collectives/all_gather.h"          // IWYU pragma: export
#include "meshsim/collectives/all_to_all.h"          // IWYU pragma: export
#include "meshsim/collectives/argreduce.h"           // IWYU pragma: export
#include "meshsim/collectives/async.h"               // IWYU pragma: export
#include "meshsim/collectives/axis.h"                // IWYU pragma: export
#include "meshsim/collectives/barrier.h"             // IWYU pragma: export
#include "meshsim/collectives/pbroadcast.h"          // IWYU pragma: export
#include "meshsim/collectives/ppermute.h"            // IWYU pragma: export
#include "meshsim/collectives/psum_scatter.h"        // IWYU pragma: export
#include "meshsim/collectives/ragged_all_to_all.h"   // IWYU pragma: export
#include "meshsim/collectives/reduce_op.h"           // IWYU pragma: export
#include "meshsim/collectives/reductions.h"          // IWYU pragma: export
#include "meshsim/collectives/send_recv.h"           // IWYU pragma: export
