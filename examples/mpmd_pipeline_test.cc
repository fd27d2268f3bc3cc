// The MPMD pipeline (mpmd_pipeline.h) against a sequential reference (both
// layers on the whole batch), over stage widths, buffering depths, numbers
// of micro-batches and copy modes with race detection on; then each
// argument error it raises.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Core>

#include <random>
#include <string>
#include <vector>

#include <meshsim/meshsim.h>

#include "mpmd_pipeline.h"

namespace meshsim::mpmd_pipeline_test {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// Integers in [-3, 3]: every float32 sum of their products here is exact,
// whatever the order, so the pipeline must match the reference bit for bit.
Array small_integers(Shape shape, std::mt19937& rng) {
  Array a = Array::empty(std::move(shape), DType::kFloat32);
  for (float& v : a.mutable_span<float>()) v = static_cast<float>(static_cast<int>(rng() % 7) - 3);
  return a;
}

Array reference(const Array& x, const Array& w1, const Array& w2) {
  const int64_t batches = x.dim(0), rows = x.dim(1);
  Array y = Array::zeros({batches, rows, w2.dim(1)}, DType::kFloat32);
  const RowMatrix<float> w1m = matrix_view<float>(w1), w2m = matrix_view<float>(w2);
  for (int64_t b = 0; b < batches; ++b) {
    const Eigen::Map<const RowMatrix<float>> xb(x.span<float>().data() + b * rows * x.dim(2), rows,
                                                x.dim(2));
    Eigen::Map<RowMatrix<float>> yb(y.mutable_span<float>().data() + b * rows * w2.dim(1), rows,
                                    w2.dim(1));
    yb = (xb * w1m).cwiseMax(0.0f) * w2m;
  }
  return y;
}

Mesh stage(int first_device, int width) {
  std::vector<int> ids(width);
  for (int i = 0; i < width; ++i) ids[i] = first_device + i;
  return Mesh(AbstractMesh({{"x", width}}), std::move(ids));
}

TEST(MpmdPipelineTest, MatchesTheSequentialReference) {
  Runtime rt(8);
  std::mt19937 rng(5);
  for (int width : {1, 2, 4}) {
    for (int buffering : {1, 2, 3}) {
      for (int batches : {1, 3, 8}) {
        const Array x = small_integers({batches, 4 * width, 6}, rng);
        const Array w1 = small_integers({6, 5}, rng), w2 = small_integers({5, 3}, rng);
        const Array want = reference(x, w1, w2);
        for (CopyMode mode : {CopyMode::kEager, CopyMode::kOnWait, CopyMode::kRandom}) {
          KernelSpec kernel("pipeline");
          kernel.set_copy_mode(mode, static_cast<uint64_t>(batches * 31 + buffering));
          kernel.set_race_detection(true);
          // The consumer runs on the lower device ids: the programs' order,
          // not the devices', says who is who.
          const Array got = examples::mpmd_pipeline_mlp(rt, stage(width, width), stage(0, width), x,
                                                        w1, w2, buffering, kernel);
          EXPECT_EQ(got.span<float>().size(), want.span<float>().size());
          EXPECT_TRUE(std::equal(got.span<float>().begin(), got.span<float>().end(),
                                 want.span<float>().begin()))
              << "width " << width << ", buffering " << buffering << ", micro-batches " << batches
              << ", copy mode " << static_cast<int>(mode);
        }
      }
    }
  }
}

// 32 producers and 32 consumers: more devices than cores.
TEST(MpmdPipelineTest, SixtyFourDevices) {
  Runtime rt(64);
  std::mt19937 rng(9);
  const Array x = small_integers({6, 64, 4}, rng);
  const Array w1 = small_integers({4, 8}, rng), w2 = small_integers({8, 2}, rng);
  const Array got = examples::mpmd_pipeline_mlp(rt, stage(0, 32), stage(32, 32), x, w1, w2, 2);
  const Array want = reference(x, w1, w2);
  EXPECT_TRUE(std::equal(got.span<float>().begin(), got.span<float>().end(), want.span<float>().begin()));
}

TEST(MpmdPipelineTest, ArgumentErrors) {
  Runtime rt(4);
  std::mt19937 rng(1);
  const Array x = small_integers({2, 4, 3}, rng);
  const Array w1 = small_integers({3, 5}, rng), w2 = small_integers({5, 2}, rng);
  const Mesh a = stage(0, 2), b = stage(2, 2);
  auto run = [&](const Mesh& p, const Mesh& c, const Array& xx, const Array& ww1, const Array& ww2,
                 int buffering) { examples::mpmd_pipeline_mlp(rt, p, c, xx, ww1, ww2, buffering); };
  EXPECT_THAT([&] { run(a, b, w1, w1, w2, 2); },
              ThrowsMessage<ShapeError>(HasSubstr("x must be 3-D")));
  EXPECT_THAT([&] { run(a, b, x, w2, w2, 2); },
              ThrowsMessage<ShapeError>(HasSubstr("do not chain")));
  EXPECT_THAT([&] { run(a, b, x, w1, w2.astype(DType::kBFloat16), 2); },
              ThrowsMessage<DTypeError>(HasSubstr("w2 must be float32, got bfloat16")));
  EXPECT_THAT([&] { run(a, stage(2, 1), x, w1, w2, 2); },
              ThrowsMessage<InvalidArgumentError>(HasSubstr("must have as many devices")));
  const Array three_rows = small_integers({2, 3, 3}, rng);
  EXPECT_THAT([&] { run(a, b, three_rows, w1, w2, 2); },
              ThrowsMessage<ShapeError>(HasSubstr("3 rows, not divisible by the stage width 2")));
  EXPECT_THAT(
      [&] { run(a, b, x, w1, w2, 0); },
      ThrowsMessage<InvalidArgumentError>(HasSubstr("buffering must be at least 1, got 0")));
  EXPECT_THAT([&] { run(a, stage(1, 2), x, w1, w2, 2); },
              ThrowsMessage<MeshError>(HasSubstr("device 1 is in the producer mesh")));
}

}  // namespace
}  // namespace meshsim::mpmd_pipeline_test
