// The MPMD pipeline: validation, then the two programs as mpmd_pipeline.h
// describes them.

#include "mpmd_pipeline.h"

#include <Eigen/Core>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <meshsim/meshsim.h>

namespace meshsim::examples {
namespace {

void check_operand(const Array& a, int rank, const char* name) {
  if (a.rank() != rank) {
    throw ShapeError(std::string(name) + " must be " + std::to_string(rank) + "-D, got shape " +
                     shape_to_string(a.shape()));
  }
  if (a.dtype() != DType::kFloat32) {
    throw DTypeError(std::string(name) + " must be float32, got " + std::string(dtype_name(a.dtype())));
  }
}

void validate(const Mesh& producer, const Mesh& consumer, const Array& x, const Array& w1,
              const Array& w2, int buffering) {
  check_operand(x, 3, "x");
  check_operand(w1, 2, "w1");
  check_operand(w2, 2, "w2");
  if (x.dim(2) != w1.dim(0) || w1.dim(1) != w2.dim(0)) {
    throw ShapeError("x " + shape_to_string(x.shape()) + ", w1 " + shape_to_string(w1.shape()) +
                     " and w2 " + shape_to_string(w2.shape()) + " do not chain");
  }
  if (producer.size() != consumer.size()) {
    throw InvalidArgumentError("the producer mesh " + producer.to_string() + " and the consumer mesh " +
                               consumer.to_string() + " must have as many devices");
  }
  // A device's functions share its memory: a stage's slots would be the
  // other's.
  for (int id : producer.device_ids()) {
    const std::vector<int>& theirs = consumer.device_ids();
    if (std::find(theirs.begin(), theirs.end(), id) != theirs.end()) {
      throw MeshError("device " + std::to_string(id) + " is in the producer mesh " +
                      producer.to_string() + " and in the consumer mesh " + consumer.to_string() +
                      "; the stages must not share a device (its functions would share its slots)");
    }
  }
  if (x.dim(1) % producer.size() != 0) {
    throw ShapeError("x has " + std::to_string(x.dim(1)) + " rows, not divisible by the stage width " +
                     std::to_string(producer.size()));
  }
  if (buffering < 1) {
    throw InvalidArgumentError("buffering must be at least 1, got " + std::to_string(buffering));
  }
}

// The scratch and semaphores both programs declare (mpmd_map shares them).
struct PipelineDecls {
  BufferRef slots;  // (buffering, rows / S, hidden)
  std::vector<DmaSemaphore> sent, arrived;  // per slot
  Semaphore free_slot;                      // on the producer, from its consumer
};

}  // namespace

Array mpmd_pipeline_mlp(Runtime& rt, const Mesh& producer, const Mesh& consumer, const Array& x,
                        const Array& w1, const Array& w2, int buffering, const KernelSpec& kernel) {
  validate(producer, consumer, x, w1, w2, buffering);
  const int64_t batches = x.dim(0), block = x.dim(1) / producer.size();
  const int64_t in = x.dim(2), hidden = w1.dim(1), out = w2.dim(1);
  KernelSpec spec = kernel;
  PipelineDecls d{spec.buffer({buffering, block, hidden}, DType::kFloat32), {}, {}, spec.semaphore()};
  for (int s = 0; s < buffering; ++s) {
    d.sent.push_back(spec.dma_semaphore());
    d.arrived.push_back(spec.dma_semaphore());
  }
  Array y = Array::zeros({batches, x.dim(1), out}, DType::kFloat32);
  const MatrixView<float> w1_view = matrix_view<float>(w1), w2_view = matrix_view<float>(w2);
  const float* x_data = x.span<float>().data();
  float* y_data = y.mutable_span<float>().data();

  auto produce = [&](KernelContext& k) {
    const int i = k.program_device_id();
    const int peer = k.logical_id(1, i);
    std::vector<std::optional<AsyncCopy>> in_flight(buffering);
    for (int64_t b = 0; b < batches; ++b) {
      const int s = static_cast<int>(b % buffering);
      if (b >= buffering) {
        in_flight[s]->wait_send();
        k.semaphore_wait(d.free_slot);
      }
      const BufferRef slot = d.slots.at(s);
      const Eigen::Map<const RowMatrix<float>> rows(x_data + (b * x.dim(1) + i * block) * in, block, in);
      Eigen::Map<RowMatrix<float>> h(k.write<float>(slot).data(), block, hidden);
      h.noalias() = (rows * w1_view).cwiseMax(0.0f);
      in_flight[s] = k.make_async_remote_copy(slot, slot, d.sent[s], d.arrived[s], peer);
      in_flight[s]->start();
    }
    for (auto& copy : in_flight) {
      if (copy) copy->wait_send();
    }
    const int64_t credits_left = std::min<int64_t>(batches, buffering);
    if (credits_left > 0) k.semaphore_wait(d.free_slot, credits_left);
  };

  auto consume = [&](KernelContext& k) {
    const int i = k.program_device_id();
    const int peer = k.logical_id(0, i);
    for (int64_t b = 0; b < batches; ++b) {
      const int s = static_cast<int>(b % buffering);
      const BufferRef slot = d.slots.at(s);
      k.make_async_remote_copy(slot, slot, d.sent[s], d.arrived[s], k.device_id()).wait_recv();
      const Eigen::Map<const RowMatrix<float>> h(k.read<float>(slot).data(), block, hidden);
      Eigen::Map<RowMatrix<float>> rows(y_data + (b * x.dim(1) + i * block) * out, block, out);
      rows.noalias() = h * w2_view;
      k.semaphore_signal(d.free_slot, 1, peer);
    }
  };

  mpmd_map(rt, {{producer, produce}, {consumer, consume}}, spec);
  return y;
}

}  // namespace meshsim::examples
