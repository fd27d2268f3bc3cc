// mpmd_map (runtime/kernel/mpmd_map.h): several (mesh, function) programs in
// one launch, talking by remote copies, semaphores and psend / precv; each
// value checked against what a sequential reading of the programs gives,
// and each misuse raising its error with the device and the program.

#include <gtest/gtest.h>

#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/runtime.h"
#include "meshsim/runtime/kernel/mpmd_map.h"
#include "support/line_mesh.h"
#include "support/expect_error.h"

namespace meshsim::mpmd_map_test {
namespace {

// What a device saw of itself.
struct Seen {
  int program = -1, num_programs = -1, device_id = -1, program_device_id = -1, x = -1;
  int32_t received = -1;
};

// Producer devices 0-2 send (index + 1) * 100 to the consumer at the same
// index along 'x'; the consumer's mesh lists its devices out of order, so
// its logical ids follow its mesh, not the device numbers.
TEST(MpmdMapTest, ProducerSendsToConsumerByRemoteCopy) {
  Runtime rt(6);
  KernelSpec spec("producer_consumer");
  const BufferRef buf = spec.buffer({4}, DType::kInt32);
  const DmaSemaphore send = spec.dma_semaphore();
  const DmaSemaphore recv = spec.dma_semaphore();
  std::vector<Seen> seen(6);
  auto record = [&](KernelContext& k) {
    Seen& s = seen[k.device().device_id()];
    s.program = k.program();
    s.num_programs = k.num_programs();
    s.device_id = k.device_id();
    s.program_device_id = k.program_device_id();
    s.x = k.axis_index("x");
  };
  const std::vector<MpmdProgram> programs{
      {line_mesh("x", {0, 1, 2}),
       [&](KernelContext& k) {
         record(k);
         for (int32_t& v : k.write<int32_t>(buf)) v = (k.axis_index("x") + 1) * 100;
         AsyncCopy copy = k.make_async_remote_copy(
             buf, buf, send, recv, k.logical_id(1, DeviceId::mesh({k.axis_index("x")})));
         copy.start();
         copy.wait_send();
       }},
      {line_mesh("x", {5, 3, 4}), [&](KernelContext& k) {
         record(k);
         k.make_async_remote_copy(buf, buf, send, recv, k.device_id()).wait_recv();
         seen[k.device().device_id()].received = k.read<int32_t>(buf)[3];
       }}};
  mpmd_map(rt, programs, spec);
  // Launch order: program 0's devices 0, 1, 2, then program 1's 5, 3, 4.
  const int logical[6] = {0, 1, 2, 4, 5, 3};
  const int x[6] = {0, 1, 2, 1, 2, 0};
  for (int d = 0; d < 6; ++d) {
    SCOPED_TRACE("device " + std::to_string(d));
    EXPECT_EQ(seen[d].program, d < 3 ? 0 : 1);
    EXPECT_EQ(seen[d].num_programs, 2);
    EXPECT_EQ(seen[d].device_id, logical[d]);
    EXPECT_EQ(seen[d].program_device_id, x[d]);
    EXPECT_EQ(seen[d].x, x[d]);
    if (d >= 3) EXPECT_EQ(seen[d].received, (x[d] + 1) * 100);
  }
}

// Meshes of different shapes sharing the axis 'y' (one size in both):
// program 0 (2x2) signals its partner across 'x' by mesh coordinates, which
// name devices of its own program, and each program 1 device signals the
// program 0 devices of its 'y' column by logical id.
TEST(MpmdMapTest, MeshCoordinatesNameTheCallersProgramAndLogicalIdsAnyProgram) {
  Runtime rt(6);
  KernelSpec spec;
  const Semaphore partner = spec.semaphore();
  const Semaphore column = spec.semaphore();
  std::mutex mu;
  std::vector<std::vector<int>> coords(6);
  const std::vector<MpmdProgram> programs{
      {Mesh(AbstractMesh({{"x", 2}, {"y", 2}}), {0, 1, 2, 3}),
       [&](KernelContext& k) {
         const int x = k.axis_index("x"), y = k.axis_index("y");
         {
           std::lock_guard lock(mu);
           coords[k.device().device_id()] = {x, y};
         }
         k.semaphore_signal(partner, 1, DeviceId::mesh({1 - x, y}));
         k.semaphore_wait(partner);
         k.semaphore_wait(column);
       }},
      {Mesh(AbstractMesh({{"y", 2}}), {4, 5}), [&](KernelContext& k) {
         const int y = k.axis_index("y");
         {
           std::lock_guard lock(mu);
           coords[k.device().device_id()] = {y};
         }
         for (int x = 0; x < 2; ++x) k.semaphore_signal(column, 1, k.logical_id(0, DeviceId::mesh({x, y})));
         EXPECT_EQ(k.logical_id(0, 3), 3);
         EXPECT_EQ(k.logical_id(1, 1), 5);
       }}};
  mpmd_map(rt, programs, spec);
  const std::vector<std::vector<int>> want{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {0}, {1}};
  EXPECT_EQ(coords, want);
}

// 32 producers stream 8 values each through 2 slots to 32 consumers (the
// consumer frees a slot by signalling its producer): 64 devices, more than
// the cores, every value accounted for.
TEST(MpmdMapTest, StreamingThroughTwoSlotsOnSixtyFourDevices) {
  constexpr int kPairs = 32, kRounds = 8, kSlots = 2;
  Runtime rt(2 * kPairs);
  KernelSpec spec("stream");
  const BufferRef slots = spec.buffer({kSlots, 1}, DType::kInt64);
  const DmaSemaphore send = spec.dma_semaphore();
  const DmaSemaphore recv = spec.dma_semaphore();
  const Semaphore free_slot = spec.semaphore();
  std::vector<int64_t> sums(kPairs, 0);
  std::vector<int> producers(kPairs), consumers(kPairs);
  for (int i = 0; i < kPairs; ++i) producers[i] = i, consumers[i] = kPairs + i;
  const std::vector<MpmdProgram> programs{
      {line_mesh("x", producers),
       [&](KernelContext& k) {
         const int i = k.axis_index("x");
         const int peer = k.logical_id(1, i);
         for (int r = 0; r < kRounds; ++r) {
           const BufferRef slot = slots.at(r % kSlots);
           if (r >= kSlots) k.semaphore_wait(free_slot);  // the consumer read it
           k.write<int64_t>(slot)[0] = int64_t{1000} * i + r;
           AsyncCopy copy = k.make_async_remote_copy(slot, slot, send, recv, peer);
           copy.start();
           copy.wait_send();
         }
         for (int r = kRounds; r < kRounds + kSlots; ++r) k.semaphore_wait(free_slot);
       }},
      {line_mesh("x", consumers), [&](KernelContext& k) {
         const int i = k.axis_index("x");
         for (int r = 0; r < kRounds; ++r) {
           const BufferRef slot = slots.at(r % kSlots);
           k.make_async_remote_copy(slot, slot, send, recv, k.device_id()).wait_recv();
           sums[i] += k.read<int64_t>(slot)[0];
           k.semaphore_signal(free_slot, 1, k.logical_id(0, i));
         }
       }}};
  for (CopyMode mode : {CopyMode::kEager, CopyMode::kOnWait, CopyMode::kRandom}) {
    spec.set_copy_mode(mode, 7);
    spec.set_race_detection(true);
    std::fill(sums.begin(), sums.end(), 0);
    mpmd_map(rt, programs, spec);
    for (int i = 0; i < kPairs; ++i) {
      EXPECT_EQ(sums[i], int64_t{1000} * i * kRounds + kRounds * (kRounds - 1) / 2)
          << "pair " << i << ", copy mode " << static_cast<int>(mode);
    }
  }
}

TEST(MpmdMapTest, RaceDetectionCoversCopiesBetweenPrograms) {
  Runtime rt(2);
  KernelSpec spec("early_read");
  const BufferRef buf = spec.buffer({2}, DType::kFloat32);
  const DmaSemaphore send = spec.dma_semaphore();
  const DmaSemaphore recv = spec.dma_semaphore();
  const Semaphore started = spec.semaphore();
  spec.set_race_detection(true);
  const std::vector<MpmdProgram> programs{
      {line_mesh("x", {0}),
       [&](KernelContext& k) {
         AsyncCopy copy = k.make_async_remote_copy(buf, buf, send, recv, 1);
         copy.start();
         k.semaphore_signal(started, 1, 1);
         copy.wait_send();
       }},
      {line_mesh("x", {1}), [&](KernelContext& k) {
         k.semaphore_wait(started);
         (void)k.read<float>(buf);  // before wait_recv: the copy may still be landing
         k.make_async_remote_copy(buf, buf, send, recv, 1).wait_recv();
       }}};
  EXPECT_ERROR(mpmd_map(rt, programs, spec), DataRaceError, "mpmd_map program 1");
}

TEST(MpmdMapErrorTest, MalformedProgramListsAreRefusedBeforeAnyDeviceRuns) {
  Runtime rt(4);
  const KernelSpec spec("k");
  auto nothing = [](KernelContext&) {};
  EXPECT_ERROR(mpmd_map(rt, {}, spec), InvalidArgumentError,
               "at least one (mesh, function) program is required");
  EXPECT_ERROR(mpmd_map(rt, {{line_mesh("x", {0}), nothing}, {line_mesh("x", {1}), nullptr}}, spec),
               InvalidArgumentError, "program 1 on Mesh");
  const std::vector<MpmdProgram> nine(9, MpmdProgram{line_mesh("x", {1}), nothing});
  EXPECT_ERROR(mpmd_map(rt, nine, spec), MeshError,
               "device 1 is in the meshes of 9 programs (0, 1, 2, 3, 4, 5, 6, 7, 8); a device runs "
               "at most 8 functions");
  EXPECT_ERROR(mpmd_map(rt, {{line_mesh("x", {0, 1}), nothing}, {line_mesh("x", {2, 3, 4}), nothing}}, spec),
               MeshError, "axis 'x' has size 2 in program 0's mesh");
  EXPECT_ERROR(mpmd_map(rt, {{line_mesh("x", {0}), nothing}, {line_mesh("y", {7}), nothing}}, spec),
               RuntimeUsageError,
               "mpmd_map of kernel 'k': program 1: mesh Mesh(y=1; devices=[7]) uses device 7 but the "
               "runtime has at most 4 devices");
}

TEST(MpmdMapErrorTest, AFailingProgramFailsTheLaunchNamingItsDeviceAndProgram) {
  Runtime rt(4);
  KernelSpec spec;
  const Semaphore sem = spec.semaphore();
  auto wait_forever = [&](KernelContext& k) { k.semaphore_wait(sem); };
  EXPECT_ERROR(mpmd_map(rt,
                        {{line_mesh("x", {0, 1}), wait_forever},
                         {line_mesh("x", {2, 3}),
                          [&](KernelContext& k) {
                            if (k.program_device_id() == 1) throw std::runtime_error("boom");
                            k.semaphore_wait(sem);
                          }}},
                        spec),
               DeviceError, "device 3: mpmd_map program 1: std::runtime_error: boom");
  // A kernel call's own error: a device id outside the program it names.
  EXPECT_ERROR(mpmd_map(rt,
                        {{line_mesh("x", {0, 1}),
                          [&](KernelContext& k) { k.semaphore_signal(sem, 1, k.logical_id(1, 2)); }},
                         {line_mesh("x", {2, 3}), wait_forever}},
                        spec),
               DeviceIdError, "mpmd_map program 0: KernelContext::logical_id");
  EXPECT_ERROR(mpmd_map(rt, {{line_mesh("x", {0}), [&](KernelContext& k) { k.logical_id(2, 0); }}}, spec),
               InvalidArgumentError, "program 2 is outside [0, 1)");
  // An error before the body runs: a buffer no device can allocate.
  KernelSpec huge("huge");
  huge.buffer({4}, DType::kUInt8);
  huge.buffer({int64_t{1} << 46}, DType::kUInt8);
  EXPECT_ERROR(mpmd_map(rt, {{line_mesh("x", {0}), [](KernelContext&) {}}}, huge), ShapeError,
               "device 0: mpmd_map program 0: kernel 'huge' buffer 1: ");
  // The runtime is usable after each failure.
  int ran = 0;
  mpmd_map(rt, {{line_mesh("x", {0}), [&](KernelContext&) { ++ran; }}}, spec);
  EXPECT_EQ(ran, 1);
}

TEST(MpmdMapErrorTest, WaitsAcrossProgramsThatCanNeverCompleteAreADeadlock) {
  Runtime rt(3);
  KernelSpec spec;
  const BufferRef buf = spec.buffer({16}, DType::kUInt8);
  const DmaSemaphore send = spec.dma_semaphore();
  const DmaSemaphore recv = spec.dma_semaphore();
  const Semaphore sem = spec.semaphore();
  // The producer signals instead of copying; the consumers wait for bytes.
  EXPECT_ERROR(mpmd_map(rt,
                        {{line_mesh("producer", {0}),
                          [&](KernelContext& k) {
                            k.semaphore_signal(sem, 1, 1);
                            k.semaphore_signal(sem, 1, 2);
                          }},
                         {line_mesh("x", {1, 2}),
                          [&](KernelContext& k) {
                            k.semaphore_wait(sem);
                            k.make_async_remote_copy(buf, buf, send, recv, k.device_id()).wait_recv();
                          }}},
                        spec),
               DeadlockError,
               "waiting in AsyncCopy::wait_recv for DMA semaphore 1 to reach 16 (it holds 0)");
}

TEST(MpmdMapErrorTest, ASemaphoreLeftNonZeroNamesTheProgramThatHoldsIt) {
  Runtime rt(2);
  KernelSpec spec("leaky");
  const Semaphore sem = spec.semaphore();
  EXPECT_ERROR(mpmd_map(rt,
                        {{line_mesh("x", {0}), [](KernelContext&) {}},
                         {line_mesh("x", {1}), [&](KernelContext& k) { k.semaphore_signal(sem, 3, 0); }}},
                        spec),
               SemaphoreError,
               "device 0: mpmd_map program 0: kernel 'leaky' on Mesh(mpmd=2) exited "
               "with semaphores of device 0 not back at 0: semaphore 0 holds 3");
}

}  // namespace
}  // namespace meshsim::mpmd_map_test
