#pragma once
// An MPMD pipeline with mpmd_map: two programs on two meshes of a Runtime
// run the two layers of an MLP over a stream of micro-batches,
//
//   y[b] = relu(x[b] · w1) · w2        for b = 0 .. micro_batches - 1,
//
// the first mesh (the producer) computing h = relu(x[b] · w1) and the second
// (the consumer) h · w2, both at once on different micro-batches.
//
// Words. Stage width S: both meshes have S devices; the device at position
// i of each (KernelContext::program_device_id) owns row block i of every
// micro-batch (rows / S rows). A slot is one (rows / S, hidden) block of h in
// the scratch buffer (buffering, rows / S, hidden), with its own pair of DMA
// semaphores.
// Schedule, producer i, micro-batch b, slot s = b mod buffering:
//   if b >= buffering: wait for slot s's previous send (its source may be
//   rewritten only once read) and for one free-slot credit from consumer i;
//   write h into slot s; start its DMA into slot s of consumer i.
//   After the last micro-batch: wait for the sends still in flight, then take
//   the credits not yet taken, so every semaphore ends at 0.
// Consumer i, micro-batch b: wait for slot s's DMA, y[b] rows = slot · w2,
// then signal one free-slot credit to producer i.
// At most `buffering` blocks of h are in flight per pair; every DMA carries
// rows / S · hidden floats.

#include <meshsim/meshsim.h>

namespace meshsim::examples {

// Runs the pipeline as one mpmd_map on `rt` and returns y: (micro_batches,
// rows, out) float32. x: (micro_batches, rows, in); w1: (in, hidden); w2:
// (hidden, out); all float32. `kernel` gives the kernel's name, copy mode
// and race detection; the pipeline declares its scratch and semaphores in a
// copy of it (anything it declares already stays, unused).
// Errors before any device runs: ShapeError for operands of the wrong rank
// or sizes that do not chain (naming the shapes), or rows not divisible by
// the stage width; DTypeError for an operand that is not float32;
// InvalidArgumentError for meshes of different sizes or buffering < 1;
// MeshError for meshes sharing a device. Then mpmd_map's errors.
Array mpmd_pipeline_mlp(Runtime& rt, const Mesh& producer, const Mesh& consumer, const Array& x,
                        const Array& w1, const Array& w2, int buffering,
                        const KernelSpec& kernel = KernelSpec("mpmd_pipeline_mlp"));

}  // namespace meshsim::examples
