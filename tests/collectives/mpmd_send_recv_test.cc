// mpmd_map's programs talk by psend / precv over the launch's kMpmdAxis,
// with logical ids as axis indices (the collectives layer's side of
// runtime/kernel/mpmd_map.h).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "meshsim/collectives/send_recv.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/runtime.h"
#include "meshsim/runtime/kernel/mpmd_map.h"
#include "support/expect_error.h"
#include "support/line_mesh.h"

namespace meshsim::mpmd_send_recv_test {
namespace {

// Each producer sends to the consumer at its index along 'x'.
TEST(MpmdMapTest, ProgramsTalkByPsendAndPrecv) {
  Runtime rt(4);
  std::vector<float> got(4, -1);
  const std::vector<MpmdProgram> programs{
      {line_mesh("x", {0, 1}),
       [&](KernelContext& k) {
         const int me = k.device_id();
         const Array x = Array::full({3}, DType::kFloat32, (me + 1) * 2.5);
         psend(k.device(), x, std::string(kMpmdAxis), {{me, k.logical_id(1, k.axis_index("x"))}});
       }},
      {line_mesh("x", {2, 3}), [&](KernelContext& k) {
         const int me = k.device_id();
         const Array in = precv(k.device(), Token{}, {3}, DType::kFloat32, std::string(kMpmdAxis),
                                {{k.logical_id(0, k.axis_index("x")), me}});
         got[k.device().device_id()] = in.span<float>()[2];
       }}};
  mpmd_map(rt, programs, KernelSpec());
  EXPECT_EQ(got, (std::vector<float>{-1, -1, 2.5f, 5.0f}));
}

// Two functions on one device (its cores) talk by psend / precv like any
// two devices: each sends its program index to the other, and a third
// program on another device gets both.
TEST(MpmdMapTest, FunctionsOnOneDeviceTalkByPsendAndPrecv) {
  Runtime rt(2);
  std::vector<float> got(3, -1);
  auto exchange = [&](KernelContext& k) {
    const int me = k.device_id(), other = 1 - me;
    const Array x = Array::full({2}, DType::kFloat32, 10.0 * (k.program() + 1));
    psend(k.device(), x, std::string(kMpmdAxis), {{me, other}});
    psend(k.device(), x, std::string(kMpmdAxis), {{me, 2}});
    const Array in = precv(k.device(), Token{}, {2}, DType::kFloat32, std::string(kMpmdAxis),
                           {{other, me}});
    got[me] = in.span<float>()[1];
  };
  const std::vector<MpmdProgram> programs{
      {line_mesh("x", {0}), exchange},
      {line_mesh("x", {0}), exchange},
      {line_mesh("y", {1}), [&](KernelContext& k) {
         float sum = 0;
         for (int from : {0, 1}) {
           sum += precv(k.device(), Token{}, {2}, DType::kFloat32, std::string(kMpmdAxis),
                        {{from, 2}})
                      .span<float>()[0];
         }
         got[2] = sum;
       }}};
  LaunchRecord record;
  mpmd_map(rt, programs, KernelSpec(), {.record = &record, .trace = true});
  EXPECT_EQ(got, (std::vector<float>{20, 10, 30}));
  // The trace names devices, and the core of each event.
  const auto sent = record.events_of(1, TraceKind::kTransfer, "psend");
  const auto received = record.events_of(2, TraceKind::kTransfer, "precv");
  ASSERT_EQ(sent.size(), 2u);
  ASSERT_EQ(received.size(), 2u);
  EXPECT_EQ(sent[0]->device, 0);
  EXPECT_EQ(sent[0]->core, 1);
  EXPECT_EQ(sent[0]->to, 0);  // core 0 of device 0
  EXPECT_EQ(sent[1]->to, 1);
  EXPECT_EQ(received[1]->from, 0);  // core 1 of device 0
  EXPECT_EQ(received[1]->flow_in, sent[1]->flow_out);
  // A message never received names the sending core.
  EXPECT_ERROR(mpmd_map(rt,
                        {{line_mesh("x", {0}), [](KernelContext&) {}},
                         {line_mesh("x", {0}),
                          [](KernelContext& k) {
                            psend(k.device(), Array::full({1}, DType::kFloat32, 1.0),
                                  std::string(kMpmdAxis), {{1, 0}});
                          }}},
                        KernelSpec()),
               UnreceivedMessageError,
               "launch on Mesh(mpmd=2; devices=[0, 0 core 1]) ended with messages sent by psend "
               "and never received: 1 from device 0 core 1 to device 0");
}

}  // namespace
}  // namespace meshsim::mpmd_send_recv_test
