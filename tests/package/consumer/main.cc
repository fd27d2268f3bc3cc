// Built against the installed package by tests/package/consumer_test.cmake:
// the public API through <meshsim/meshsim.h> only, checked against a known
// answer. Exits non-zero on a wrong result.

#include <meshsim/meshsim.h>

#include <cstdio>

// Internals are not installed, and public headers need neither spdlog nor fmt.
#if __has_include(<meshsim/runtime/exec/internal/launch.h>)
#error "an internal header was installed"
#endif
#if defined(SPDLOG_VERSION) || defined(FMT_VERSION)
#error "a public meshsim header pulled in spdlog or fmt"
#endif

int main() {
  using namespace meshsim;
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 4}});
  const Array x = Array::iota({8}, DType::kFloat32);  // 0..7, two per device
  // psum over x of each device's (2) shard: element j is the sum of x[2d + j].
  const std::vector<Array> out = shard_map(
      rt, mesh, [](DeviceContext& ctx, std::span<const Array> in) { return psum(ctx, in[0], "x"); },
      {P{"x"}}, {P{}}, {x});
  const std::span<const float> got = out[0].span<float>();
  const bool ok = out[0].shape() == Shape{2} && got[0] == 0 + 2 + 4 + 6 && got[1] == 1 + 3 + 5 + 7;
  std::printf("consumer: psum over 4 devices gave [%g, %g]: %s\n", got[0], got[1],
              ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
