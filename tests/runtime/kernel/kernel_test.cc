// Kernels (runtime/kernel/): symmetric buffers, remote DMAs and semaphores,
// each checked against the value a sequential reading of the program gives,
// and every misuse the issue names raising its error instead of a print.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/internal/device_hooks.h"
#include "meshsim/runtime/exec/runtime.h"
#include "meshsim/runtime/kernel/run_kernel.h"
#include "support/expect_error.h"

namespace meshsim::kernel_test {
namespace {

Mesh ring_mesh(int n) { return Mesh::make({{"x", n}}); }

// Each device writes its id into a buffer and DMAs it to its right
// neighbour, which then holds its left neighbour's id.
TEST(KernelTest, RightPermuteByRemoteCopy) {
  for (int n : {1, 2, 3, 8}) {
    Runtime rt(n);
    std::vector<std::vector<int32_t>> got(n);
    rt.launch(ring_mesh(n), [&](DeviceContext& ctx) {
      KernelSpec spec("right_permute");
      const BufferRef src = spec.buffer({4}, DType::kInt32);
      const BufferRef dst = spec.buffer({4}, DType::kInt32);
      const DmaSemaphore send = spec.dma_semaphore();
      const DmaSemaphore recv = spec.dma_semaphore();
      run_kernel(ctx, spec, [&](KernelContext& k) {
        const int me = k.device_id();
        for (int32_t& v : k.write<int32_t>(src)) v = me * 10;
        AsyncCopy copy =
            k.make_async_remote_copy(src, dst, send, recv, (me + 1) % k.num_devices());
        copy.start();
        copy.wait_send();
        copy.wait_recv();
        const auto in = k.read<int32_t>(dst);
        got[me].assign(in.begin(), in.end());
      });
    });
    for (int d = 0; d < n; ++d) {
      EXPECT_EQ(got[d], std::vector<int32_t>(4, ((d + n - 1) % n) * 10)) << "n=" << n << " d=" << d;
    }
  }
}

TEST(KernelTest, BuffersStartAtZeroInEveryKernel) {
  Runtime rt(2);
  KernelSpec spec;
  const BufferRef buf = spec.buffer({3}, DType::kFloat32);
  std::atomic<int> nonzero{0};
  for (int round = 0; round < 3; ++round) {
    rt.launch(ring_mesh(2), [&](DeviceContext& ctx) {
      run_kernel(ctx, spec, [&](KernelContext& k) {
        for (float v : k.read<float>(buf)) nonzero += v != 0;
        for (float& v : k.write<float>(buf)) v = 7;
      });
    });
  }
  EXPECT_EQ(nonzero.load(), 0);
}

TEST(KernelTest, SlicesAddressRowsOfTheLeadingDimensions) {
  KernelSpec spec;
  const BufferRef buf = spec.buffer({2, 3, 4}, DType::kInt32);
  EXPECT_EQ(buf.at(1).byte_offset(), 3u * 4 * 4);
  EXPECT_EQ(buf.at(1).at(2).byte_offset(), (3u * 4 + 2 * 4) * 4);
  EXPECT_EQ(buf.at(1).at(2).shape(), (Shape{4}));
  EXPECT_EQ(buf.slice(1, 1).shape(), (Shape{1, 3, 4}));
  EXPECT_EQ(buf.at(0).slice(1, 2).byte_offset(), 4u * 4);
  EXPECT_EQ(buf.at(0).slice(1, 2).nbytes(), 2u * 4 * 4);
  EXPECT_ERROR(buf.at(2), ShapeError, "[0, 2)");
  EXPECT_ERROR(buf.at(-1), ShapeError, "at(-1)");
  EXPECT_ERROR(buf.at(0).at(0).at(0).at(0), ShapeError, "scalar");
  EXPECT_ERROR(buf.slice(1, 2), ShapeError, "slice(1, 2)");
  EXPECT_ERROR(spec.buffer({-1}, DType::kInt32), ShapeError, "-1");
  EXPECT_ERROR(spec.buffer({int64_t{1} << 46, 4}, DType::kInt32), ShapeError, "kMaxBytes");
}

// Semaphores count: a ping-pong of `rounds` signals, each wait taking one.
TEST(KernelTest, SemaphorePingPong) {
  Runtime rt(2);
  std::vector<int64_t> seen(2, -1);
  rt.launch(ring_mesh(2), [&](DeviceContext& ctx) {
    KernelSpec spec("ping_pong");
    const Semaphore sem = spec.semaphore();
    run_kernel(ctx, spec, [&](KernelContext& k) {
      const int me = k.device_id();
      for (int round = 0; round < 1000; ++round) {
        if ((round % 2) == me) {
          k.semaphore_signal(sem, 1, 1 - me);
        } else {
          k.semaphore_wait(sem, 1);
        }
      }
      seen[me] = k.semaphore_read(sem);
    });
  });
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 0}));
}

TEST(KernelTest, AWaitTakesOnlyWhatItAsksFor) {
  Runtime rt(2);
  std::vector<int64_t> after(2, -1);
  rt.launch(ring_mesh(2), [&](DeviceContext& ctx) {
    KernelSpec spec;
    const Semaphore sem = spec.semaphore();
    run_kernel(ctx, spec, [&](KernelContext& k) {
      k.semaphore_signal(sem, 5, 1 - k.device_id());
      k.semaphore_wait(sem, 3);
      after[k.device_id()] = k.semaphore_read(sem);
      k.semaphore_wait(sem, 2);
    });
  });
  EXPECT_EQ(after, (std::vector<int64_t>{2, 2}));
}

TEST(KernelTest, MeshCoordinatesAndLogicalIdsNameTheSameDevice) {
  Runtime rt(6);
  std::vector<int64_t> got(6, -1);
  rt.launch(Mesh::make({{"x", 2}, {"y", 3}}), [&](DeviceContext& ctx) {
    KernelSpec spec;
    const Semaphore sem = spec.semaphore();
    run_kernel(ctx, spec, [&](KernelContext& k) {
      // Every device signals device (1, 2) by coordinates, and device 5 by id.
      k.semaphore_signal(sem, 1, DeviceId::mesh({1, 2}));
      k.semaphore_signal(sem, 1, 5);
      if (k.device_id() == 5) {
        k.semaphore_wait(sem, 12);
        got[5] = 12;
      }
    });
  });
  EXPECT_EQ(got[5], 12);
}

// The barrier semaphore of the seed's init step: signal both neighbours,
// wait for two.
TEST(KernelTest, BarrierSemaphoreSynchronizesNeighbours) {
  Runtime rt(4);
  rt.launch(ring_mesh(4), [&](DeviceContext& ctx) {
    KernelSpec spec("neighbour_barrier");
    spec.set_collective_id(3);
    run_kernel(ctx, spec, [&](KernelContext& k) {
      const Semaphore barrier = k.barrier_semaphore();
      const int me = k.device_id(), n = k.num_devices();
      k.semaphore_signal(barrier, 1, (me + 1) % n);
      k.semaphore_signal(barrier, 1, (me + n - 1) % n);
      k.semaphore_wait(barrier, 2);
    });
  });
}

TEST(KernelTest, LocalCopySignalsItsOneSemaphoreOnce) {
  Runtime rt(1);
  std::vector<float> got;
  rt.launch(ring_mesh(1), [&](DeviceContext& ctx) {
    KernelSpec spec;
    spec.set_copy_mode(CopyMode::kEager);  // it reads the semaphore right after start()
    const BufferRef buf = spec.buffer({2, 3}, DType::kFloat32);
    const DmaSemaphore sem = spec.dma_semaphore();
    run_kernel(ctx, spec, [&](KernelContext& k) {
      auto row0 = k.write<float>(buf.at(0));
      std::iota(row0.begin(), row0.end(), 1.0f);
      AsyncCopy copy = k.make_async_copy(buf.at(0), buf.at(1), sem);
      copy.start();
      EXPECT_EQ(k.semaphore_read(sem), 12);
      copy.wait();
      EXPECT_EQ(k.semaphore_read(sem), 0);
      const auto all = k.read<float>(buf);
      got.assign(all.begin(), all.end());
    });
  });
  EXPECT_EQ(got, (std::vector<float>{1, 2, 3, 1, 2, 3}));
}

TEST(KernelTest, LoadAndStoreCopyWholeRegions) {
  Runtime rt(1);
  Array out;
  rt.launch(ring_mesh(1), [&](DeviceContext& ctx) {
    KernelSpec spec;
    const BufferRef buf = spec.buffer({2, 2}, DType::kFloat64);
    run_kernel(ctx, spec, [&](KernelContext& k) {
      k.store(buf.at(1), Array::from_values<double>({2}, {3, 4}));
      out = k.load(buf);
      EXPECT_ERROR(k.store(buf, Array::zeros({4}, DType::kFloat64)), CollectiveShapeError,
                   "float64(4) into buffer 0");
      EXPECT_ERROR(k.store(buf, Array::zeros({2, 2}, DType::kFloat32)), DTypeError, "float32");
      EXPECT_ERROR(k.read<float>(buf), DTypeError, "as float32");
    });
  });
  EXPECT_EQ(out.span<double>()[2], 3);
  EXPECT_EQ(out.span<double>()[3], 4);
  EXPECT_EQ(out.span<double>()[0], 0);
}

// A kernel inside a kernel (the inner one's context is another object) and
// a meeting of the kernel's group from kernel code.
TEST(KernelTest, NestedKernelsAndCollectivesInsideAKernel) {
  Runtime rt(4);
  std::vector<int64_t> got(4, -1);
  rt.launch(ring_mesh(4), [&](DeviceContext& ctx) {
    KernelSpec outer("outer");
    const Semaphore sem = outer.semaphore();
    run_kernel(ctx, outer, [&](KernelContext& k) {
      KernelSpec inner("inner");
      const Semaphore inner_sem = inner.semaphore();
      run_kernel(ctx, inner, [&](KernelContext& j) {
        EXPECT_NE(&j, &k);
        j.semaphore_signal(inner_sem, 1, (j.device_id() + 1) % 4);
        j.semaphore_wait(inner_sem);
      });
      // A barrier (as collectives meet) on the group the kernel met in.
      const GroupRef g = DeviceHooks::group(ctx, "x");
      const OpScope scope(ctx, "barrier", g);
      const CollectiveCall call("barrier", DType::kFloat32, {});
      g.rendezvous->slot(g.rank).publish(call, nullptr, nullptr);
      g.rendezvous->meet(g.rank, DeviceHooks::waiter(ctx));
      k.semaphore_signal(sem, k.device_id() + 1, 0);
      if (k.device_id() == 0) {
        k.semaphore_wait(sem, 1 + 2 + 3 + 4);
        got[0] = 10;
      }
    });
  });
  EXPECT_EQ(got[0], 10);
}

// The scale path: 4096 devices on fibers, each DMAing to its right
// neighbour after a barrier-semaphore handshake with both neighbours.
TEST(KernelScaleTest, RightPermuteOn4096FiberDevices) {
  constexpr int n = 4096;
  RuntimeOptions options;
  options.execution = ExecutionMode::kFibers;
  Runtime rt(n, options);
  std::atomic<int> wrong{0};
  rt.launch(ring_mesh(n), [&](DeviceContext& ctx) {
    KernelSpec spec("permute_4096");
    spec.set_collective_id(1);
    const BufferRef buf = spec.buffer({2}, DType::kInt32);
    const BufferRef in = spec.buffer({2}, DType::kInt32);
    const DmaSemaphore send = spec.dma_semaphore();
    const DmaSemaphore recv = spec.dma_semaphore();
    run_kernel(ctx, spec, [&](KernelContext& k) {
      const int me = k.device_id();
      const Semaphore barrier = k.barrier_semaphore();
      k.semaphore_signal(barrier, 1, (me + 1) % n);
      k.semaphore_signal(barrier, 1, (me + n - 1) % n);
      k.semaphore_wait(barrier, 2);
      for (int32_t& v : k.write<int32_t>(buf)) v = me;
      AsyncCopy copy = k.make_async_remote_copy(buf, in, send, recv, (me + 1) % n);
      copy.start();
      copy.wait_recv();
      copy.wait_send();
      if (k.read<int32_t>(in)[1] != (me + n - 1) % n) wrong.fetch_add(1);
    });
  });
  EXPECT_EQ(wrong.load(), 0);
}

// --- errors ---

TEST(KernelErrorTest, ASemaphoreLeftNonZeroIsAnError) {
  Runtime rt(2);
  EXPECT_ERROR(rt.launch(ring_mesh(2),
                         [&](DeviceContext& ctx) {
                           KernelSpec spec("leaky");
                           const Semaphore a = spec.semaphore();
                           const Semaphore b = spec.semaphore();
                           run_kernel(ctx, spec, [&](KernelContext& k) {
                             if (k.device_id() == 0) k.semaphore_signal(b, 3, 1);
                             (void)a;
                           });
                         }),
               SemaphoreError, "kernel 'leaky' on Mesh(x=2) exited with semaphores of device 1 not back at 0: semaphore 1 holds 3");
}

TEST(KernelErrorTest, ACopyNeverWaitedForIsAnError) {
  Runtime rt(2);
  EXPECT_ERROR(rt.launch(ring_mesh(2),
                         [&](DeviceContext& ctx) {
                           KernelSpec spec;
                           const BufferRef src = spec.buffer({16}, DType::kUInt8);
                           const BufferRef dst = spec.buffer({16}, DType::kUInt8);
                           const DmaSemaphore send = spec.dma_semaphore();
                           const DmaSemaphore recv = spec.dma_semaphore();
                           run_kernel(ctx, spec, [&](KernelContext& k) {
                             AsyncCopy c = k.make_async_remote_copy(src, dst, send, recv,
                                                                    1 - k.device_id());
                             c.start();
                             c.wait_send();
                           });
                         }),
               SemaphoreError, "DMA semaphore 1 holds 16");
}

TEST(KernelErrorTest, WaitsThatCanNeverCompleteAreADeadlockNamingTheSemaphores) {
  Runtime rt(2);
  EXPECT_ERROR(rt.launch(ring_mesh(2),
                         [&](DeviceContext& ctx) {
                           KernelSpec spec;
                           const Semaphore sem = spec.semaphore();
                           const BufferRef buf = spec.buffer({8}, DType::kUInt8);
                           const DmaSemaphore send = spec.dma_semaphore();
                           const DmaSemaphore recv = spec.dma_semaphore();
                           run_kernel(ctx, spec, [&](KernelContext& k) {
                             if (k.device_id() == 0) {
                               k.semaphore_signal(sem, 1);
                               k.semaphore_wait(sem, 2);
                             } else {
                               k.make_async_remote_copy(buf, buf, send, recv, 0).wait_recv();
                             }
                           });
                         }),
               DeadlockError,
               "device 0: waiting in semaphore_wait for semaphore 0 to reach 2 (it holds 1)");
  EXPECT_ERROR(rt.launch(ring_mesh(2),
                         [&](DeviceContext& ctx) {
                           KernelSpec spec;
                           const BufferRef buf = spec.buffer({8}, DType::kUInt8);
                           const DmaSemaphore send = spec.dma_semaphore();
                           const DmaSemaphore recv = spec.dma_semaphore();
                           run_kernel(ctx, spec, [&](KernelContext& k) {
                             k.make_async_remote_copy(buf, buf, send, recv, 0).wait_recv();
                           });
                         }),
               DeadlockError,
               "waiting in AsyncCopy::wait_recv for DMA semaphore 1 to reach 8 (it holds 0)");
}

// A body that catches its cancelled wait learns the launch failed, without
// being told of another device: on one device the cause is the deadlock,
// which the launch reports.
TEST(KernelErrorTest, ACancelledWaitOnOneDeviceDoesNotBlameAnotherDevice) {
  Runtime rt(1);
  std::string caught;
  EXPECT_ERROR(rt.launch(ring_mesh(1),
                         [&](DeviceContext& ctx) {
                           KernelSpec spec;
                           const Semaphore sem = spec.semaphore();
                           run_kernel(ctx, spec, [&](KernelContext& k) {
                             try {
                               k.semaphore_wait(sem, 1);
                             } catch (const CancelledError& e) {
                               caught = e.what();
                               throw;
                             }
                           });
                         }),
               DeadlockError, "waiting in semaphore_wait for semaphore 0 to reach 1 (it holds 0)");
  EXPECT_NE(caught.find("cancelled: the launch failed"), std::string::npos) << caught;
  EXPECT_NE(caught.find("a deadlock"), std::string::npos) << caught;
}

// A device that polls a semaphore without ever waiting (nor yielding)
// stops at its next kernel call once a peer failed: the launch reports the
// peer's error instead of hanging. Device 1 tells device 0 it is about to
// poll, and device 0 fails only then, so the poll is what gets cancelled.
// Two fiber workers: on fibers, the devices run side by side as threads do.
TEST(KernelErrorTest, ADevicePollingASemaphoreStopsWhenAPeerFails) {
  Runtime rt(2, {.fiber_workers = 2});
  EXPECT_ERROR(rt.launch(ring_mesh(2),
                         [&](DeviceContext& ctx) {
                           KernelSpec spec;
                           const Semaphore polling = spec.semaphore();
                           const Semaphore never = spec.semaphore();
                           run_kernel(ctx, spec, [&](KernelContext& k) {
                             if (k.device_id() == 0) {
                               k.semaphore_wait(polling, 1);
                               throw std::runtime_error("boom");
                             }
                             k.semaphore_signal(polling, 1, 0);
                             while (k.semaphore_read(never) == 0) {
                             }
                           });
                         }),
               DeviceError, "boom");
}

TEST(KernelErrorTest, ADeviceThatNeverEntersLeavesTheOthersInADeadlock) {
  Runtime rt(3);
  EXPECT_ERROR(rt.launch(ring_mesh(3),
                         [&](DeviceContext& ctx) {
                           if (ctx.position() == 2) return;
                           run_kernel(ctx, KernelSpec("lonely"), [](KernelContext&) {});
                         }),
               DeadlockError, "waiting in run_kernel (entry)");
}

// The mismatch names what differs — the kernels' names, a buffer, the
// buffer count, an option — and each side's device.
TEST(KernelErrorTest, DevicesDeclaringDifferentSpecsAreAMismatch) {
  Runtime rt(2);
  EXPECT_ERROR(rt.launch(ring_mesh(2),
                         [&](DeviceContext& ctx) {
                           KernelSpec spec("k");
                           spec.buffer({8}, DType::kBFloat16);
                           spec.buffer({ctx.position() == 0 ? 4 : 5}, DType::kFloat32);
                           run_kernel(ctx, spec, [](KernelContext&) {});
                         }),
               CollectiveMismatchError,
               "collective mismatch in kernel 'k' on Mesh(x=2): device 1 declares buffer 1 as "
               "float32(5) but device 0 declares it as float32(4)");
  EXPECT_ERROR(rt.launch(ring_mesh(2),
                         [&](DeviceContext& ctx) {
                           KernelSpec spec(ctx.position() == 0 ? "attention_fwd" : "attention_bwd");
                           run_kernel(ctx, spec, [](KernelContext&) {});
                         }),
               CollectiveMismatchError,
               "device 1 declares kernel 'attention_bwd' but device 0 declares kernel "
               "'attention_fwd'");
  EXPECT_ERROR(rt.launch(ring_mesh(2),
                         [&](DeviceContext& ctx) {
                           KernelSpec spec("k");
                           for (int b = 0; b < 1 + ctx.position(); ++b) spec.buffer({2}, DType::kInt8);
                           run_kernel(ctx, spec, [](KernelContext&) {});
                         }),
               CollectiveMismatchError, "device 1 declares 2 buffers but device 0 declares 1");
  EXPECT_ERROR(rt.launch(ring_mesh(2),
                         [&](DeviceContext& ctx) {
                           KernelSpec spec("k");
                           for (int s = 0; s < 1 + ctx.position(); ++s) spec.semaphore();
                           run_kernel(ctx, spec, [](KernelContext&) {});
                         }),
               CollectiveMismatchError,
               "kernel 'k' on Mesh(x=2): device 1 declares 2 semaphores but device 0 declares 1");
  // The name first, whatever else differs.
  EXPECT_ERROR(rt.launch(ring_mesh(2),
                         [&](DeviceContext& ctx) {
                           KernelSpec spec(ctx.position() == 0 ? "d" : "e");
                           if (ctx.position() == 0) spec.semaphore();
                           run_kernel(ctx, spec, [](KernelContext&) {});
                         }),
               CollectiveMismatchError,
               "device 1 declares kernel 'e' but device 0 declares kernel 'd'");
  EXPECT_ERROR(rt.launch(ring_mesh(2),
                         [&](DeviceContext& ctx) {
                           KernelSpec spec("k");
                           spec.set_copy_mode(ctx.position() == 0 ? CopyMode::kEager
                                                                  : CopyMode::kRandom, 7);
                           run_kernel(ctx, spec, [](KernelContext&) {});
                         }),
               CollectiveMismatchError,
               "device 1 declares copy mode random:7 but device 0 declares copy mode eager");
  EXPECT_ERROR(rt.launch(ring_mesh(2),
                         [&](DeviceContext& ctx) {
                           KernelSpec spec("k");
                           spec.set_race_detection(ctx.position() == 1);
                           run_kernel(ctx, spec, [](KernelContext&) {});
                         }),
               CollectiveMismatchError,
               "device 1 declares race detection on but device 0 declares race detection off");
}

TEST(KernelErrorTest, CopiesOfDifferentSizeOrDTypeAreErrorsNamingBothRegions) {
  Runtime rt(2);
  rt.launch(ring_mesh(2), [&](DeviceContext& ctx) {
    KernelSpec spec("copies");
    const BufferRef a = spec.buffer({4}, DType::kFloat32);
    const BufferRef b = spec.buffer({8}, DType::kFloat32);
    const BufferRef c = spec.buffer({4}, DType::kInt32);
    const DmaSemaphore s = spec.dma_semaphore();
    run_kernel(ctx, spec, [&](KernelContext& k) {
      EXPECT_ERROR(k.make_async_remote_copy(a, b, s, s, 0), CollectiveShapeError,
                   "copies buffer 0 bytes [0, 16) float32(4) to buffer 1 bytes [0, 32) "
                   "float32(8): they differ in size");
      EXPECT_ERROR(k.make_async_copy(a, c, s), DTypeError, "differ in dtype");
      EXPECT_ERROR(k.make_async_remote_copy(a, a, s, s, 2), DeviceIdError,
                   "logical id 2 is outside Mesh(x=2)");
      EXPECT_ERROR(k.make_async_remote_copy(a, a, s, s, DeviceId::mesh({0, 0})), DeviceIdError,
                   "has 2 coordinates but Mesh(x=2) has 1 axes");
      EXPECT_ERROR(k.make_async_remote_copy(a, a, s, s, DeviceId::mesh({2})), DeviceIdError,
                   "axis 'x' has size 2");
      EXPECT_ERROR(k.barrier_semaphore(), CollectiveIdError, "no collective id");
    });
  });
}

TEST(KernelErrorTest, HandlesFromAnotherSpecAreCheckedAgainstThisOne) {
  KernelSpec big;
  const BufferRef far = big.buffer({64}, DType::kFloat32);
  big.semaphore();
  const Semaphore sem3 = [&] {
    big.semaphore();
    big.semaphore();
    return big.semaphore();
  }();
  const DmaSemaphore dma0 = big.dma_semaphore();
  Runtime rt(1);
  rt.launch(ring_mesh(1), [&](DeviceContext& ctx) {
    KernelSpec small("small");
    small.buffer({4}, DType::kFloat32);
    run_kernel(ctx, small, [&](KernelContext& k) {
      EXPECT_ERROR(k.read<float>(far), ShapeError,
                   "has no buffer 0 bytes [0, 256) float32(64): its buffer 0 is float32(4)");
      EXPECT_ERROR(k.semaphore_wait(sem3), InvalidArgumentError, "no semaphore 3 (its spec declares 0)");
      EXPECT_ERROR(k.semaphore_read(dma0), InvalidArgumentError, "no DMA semaphore 0");
    });
  });
}

// A BufferRef of another spec's buffer with the same index is checked
// against this kernel's declaration, not only against its byte count: it
// would reinterpret the bytes (other dtype) or address other rows.
TEST(KernelErrorTest, ABufferRefOfAnotherLayoutIsAnErrorNotAReinterpretation) {
  KernelSpec other;
  const BufferRef as_f64 = other.buffer({2}, DType::kFloat64);
  KernelSpec rows;
  const BufferRef as_rows = rows.buffer({2, 4}, DType::kFloat32);
  Runtime rt(1);
  rt.launch(ring_mesh(1), [&](DeviceContext& ctx) {
    KernelSpec spec("mine");
    const BufferRef mine = spec.buffer({4, 2}, DType::kFloat32);
    const DmaSemaphore sem = spec.dma_semaphore();
    run_kernel(ctx, spec, [&](KernelContext& k) {
      EXPECT_ERROR(k.write<double>(as_f64), DTypeError,
                   "has no buffer 0 bytes [0, 16) float64(2): its buffer 0 is float32(4, 2) "
                   "(a BufferRef of another KernelSpec?)");
      EXPECT_ERROR(k.read<float>(as_rows.at(1)), ShapeError, "its buffer 0 is float32(4, 2)");
      EXPECT_ERROR(k.make_async_copy(as_rows.at(0), mine.slice(0, 2), sem).start(), ShapeError,
                   "has no buffer 0 bytes [0, 16) float32(4): its buffer 0 is float32(4, 2)");
      // A region alike in shape, but across two rows of this spec's buffer:
      // no at() or slice() makes it.
      KernelSpec flat;
      const BufferRef eight = flat.buffer({8}, DType::kFloat32);
      EXPECT_ERROR(k.read<float>(eight.slice(1, 2)), ShapeError,
                   "has no buffer 0 bytes [4, 12) float32(2): its buffer 0 is float32(4, 2)");
      EXPECT_EQ(k.read<float>(eight.slice(2, 2)).size(), 2u);  // row 1, as mine.at(1)
      // What at() and slice() make of this spec's own buffer is accepted.
      k.write<float>(mine.at(3))[1] = 7;
      EXPECT_EQ(k.read<float>(mine.slice(2, 2))[3], 7);
      EXPECT_EQ(k.read<float>(mine)[7], 7);
    });
  });
}

TEST(KernelErrorTest, AnUnknownAxisNamesTheKernelAndDevice) {
  Runtime rt(2);
  rt.launch(ring_mesh(2), [&](DeviceContext& ctx) {
    run_kernel(ctx, KernelSpec("k"), [&](KernelContext& k) {
      EXPECT_ERROR(k.axis_index("y"), UnknownAxisError,
                   "KernelContext::axis_index: kernel 'k' on device " +
                       std::to_string(k.device_id()) + ": unknown axis 'y'");
    });
  });
}

TEST(KernelErrorTest, OutOfRangeCountsAreErrors) {
  Runtime rt(1);
  rt.launch(ring_mesh(1), [&](DeviceContext& ctx) {
    KernelSpec spec;
    const Semaphore sem = spec.semaphore();
    run_kernel(ctx, spec, [&](KernelContext& k) {
      EXPECT_ERROR(k.semaphore_signal(sem, 0), InvalidArgumentError, "by 0");
      EXPECT_ERROR(k.semaphore_signal(sem, -1), InvalidArgumentError, "by -1");
      EXPECT_ERROR(k.semaphore_wait(sem, 0), InvalidArgumentError, "to reach 0");
      EXPECT_ERROR(k.semaphore_wait(sem, int64_t{1} << 40), InvalidArgumentError, "to reach");
      k.semaphore_signal(sem, KernelContext::kMaxSemaphoreValue);
      EXPECT_ERROR(k.semaphore_signal(sem, 1), SemaphoreError, "past the most");
      k.semaphore_wait(sem, KernelContext::kMaxSemaphoreValue);
    });
  });
}

// An eager copy that its semaphore cannot count is refused before its bytes
// move: 7 copies of 2^27 bytes leave room for less than one more.
TEST(KernelErrorTest, AnEagerCopyPastTheSemaphoresMostMovesNothing) {
  Runtime rt(1);
  float moved = -1;
  rt.launch(ring_mesh(1), [&](DeviceContext& ctx) {
    KernelSpec spec("big");
    spec.set_copy_mode(CopyMode::kEager);
    const BufferRef buf = spec.buffer({2, int64_t{1} << 25}, DType::kFloat32);  // 2 x 128 MiB
    const DmaSemaphore sem = spec.dma_semaphore();
    run_kernel(ctx, spec, [&](KernelContext& k) {
      AsyncCopy copy = k.make_async_copy(buf.at(0), buf.at(1), sem);
      for (int i = 0; i < 7; ++i) copy.start();
      k.write<float>(buf.at(0))[0] = 5;
      EXPECT_ERROR(copy.start(), SemaphoreError,
                   "adds 134217728 to DMA semaphore 0 of device 0, which holds 939524096: past "
                   "the most a semaphore holds, 1073741823");
      moved = k.read<float>(buf.at(1))[0];
      for (int i = 0; i < 7; ++i) copy.wait();
    });
  });
  EXPECT_EQ(moved, 0);
}

TEST(KernelErrorTest, ABarrierSemaphoreNeedsACollectiveId) {
  Runtime rt(1);
  // A barrier handle from a kernel that has an id, used in one that has none.
  std::optional<Semaphore> barrier;
  rt.launch(ring_mesh(1), [&](DeviceContext& ctx) {
    KernelSpec with_id("with_id");
    with_id.set_collective_id(8);
    run_kernel(ctx, with_id, [&](KernelContext& k) { barrier = k.barrier_semaphore(); });
    run_kernel(ctx, KernelSpec("without"), [&](KernelContext& k) {
      EXPECT_ERROR(k.semaphore_signal(*barrier, 1), CollectiveIdError,
                   "kernel 'without' on device 0 uses a barrier semaphore but has no collective id");
    });
  });
  EXPECT_ERROR(rt.launch(ring_mesh(1),
                         [&](DeviceContext& ctx) {
                           run_kernel(ctx, KernelSpec("nobarrier"),
                                      [&](KernelContext& k) { k.barrier_semaphore(); });
                         }),
               CollectiveIdError, "kernel 'nobarrier' on device 0 has no collective id");
  EXPECT_ERROR(KernelSpec().set_collective_id(-1), InvalidArgumentError, "negative");
}

TEST(KernelErrorTest, TwoKernelsMayNotHoldOneCollectiveIdAtOnce) {
  Runtime rt(2);
  // The outer kernel on device 0 holds id 5 while an inner launch on device 1
  // claims it too.
  EXPECT_ERROR(rt.launch(ring_mesh(1),
                         [&](DeviceContext& ctx) {
                           KernelSpec spec("outer");
                           spec.set_collective_id(5);
                           run_kernel(ctx, spec, [&](KernelContext&) {
                             rt.launch(Mesh(AbstractMesh({{"x", 1}}), {1}),
                                       [&](DeviceContext& inner) {
                                         KernelSpec other("inner");
                                         other.set_collective_id(5);
                                         run_kernel(inner, other, [](KernelContext&) {});
                                       });
                           });
                         }),
               CollectiveIdError, "kernel 'inner' on Mesh(x=1; devices=[1]) claims collective id 5, which kernel 'outer' on Mesh(x=1) holds");
  // Released afterwards, also after the failure.
  rt.launch(ring_mesh(2), [&](DeviceContext& ctx) {
    KernelSpec spec("again");
    spec.set_collective_id(5);
    run_kernel(ctx, spec, [](KernelContext&) {});
  });
}

TEST(KernelErrorTest, AFailingBodyFailsTheLaunchAndReleasesTheOthers) {
  Runtime rt(4);
  EXPECT_ERROR(rt.launch(ring_mesh(4),
                         [&](DeviceContext& ctx) {
                           KernelSpec spec;
                           const Semaphore sem = spec.semaphore();
                           run_kernel(ctx, spec, [&](KernelContext& k) {
                             if (k.device_id() == 2) throw std::runtime_error("boom");
                             k.semaphore_wait(sem);  // never signalled
                           });
                         }),
               DeviceError, "device 2: std::runtime_error: boom");
}

// A body that catches its cancelled wait and goes on touching peers (whose
// buffers may be gone) gets CancelledError from every further call.
TEST(KernelErrorTest, ABodyThatCatchesTheCancellationCannotGoOn) {
  Runtime rt(2);
  std::atomic<int> refused{0};
  EXPECT_ERROR(rt.launch(ring_mesh(2),
                         [&](DeviceContext& ctx) {
                           KernelSpec spec;
                           const Semaphore sem = spec.semaphore();
                           const Semaphore entered = spec.semaphore();
                           const BufferRef buf = spec.buffer({4}, DType::kFloat32);
                           const DmaSemaphore s = spec.dma_semaphore();
                           run_kernel(ctx, spec, [&](KernelContext& k) {
                             // Device 1 fails only once device 0 is in the
                             // body (not still leaving the entry meeting).
                             if (k.device_id() == 1) {
                               k.semaphore_wait(entered);
                               throw std::runtime_error("boom");
                             }
                             k.semaphore_signal(entered, 1, 1);
                             try {
                               k.semaphore_wait(sem);
                             } catch (const CancelledError&) {
                             }
                             try {
                               k.make_async_remote_copy(buf, buf, s, s, 1).start();
                             } catch (const CancelledError&) {
                               refused.fetch_add(1);
                               throw;
                             }
                           });
                         }),
               DeviceError, "device 1: std::runtime_error: boom");
  EXPECT_EQ(refused.load(), 1);
}

TEST(KernelErrorTest, RunKernelOutsideItsLaunchIsAnError) {
  Runtime rt(1);
  DeviceContext* kept = nullptr;
  rt.launch(ring_mesh(1), [&](DeviceContext& ctx) { kept = &ctx; });
  EXPECT_ERROR(run_kernel(*kept, KernelSpec(), [](KernelContext&) {}), RuntimeUsageError,
               "run_kernel");
}

TEST(KernelErrorTest, AContextOrCopyKeptPastItsKernelFailsCleanly) {
  Runtime rt(1);
  KernelContext* kept = nullptr;
  std::vector<AsyncCopy> copies;
  KernelSpec spec;
  const BufferRef buf = spec.buffer({4}, DType::kFloat32);
  const DmaSemaphore sem = spec.dma_semaphore();
  rt.launch(ring_mesh(1), [&](DeviceContext& ctx) {
    run_kernel(ctx, spec, [&](KernelContext& k) {
      kept = &k;
      copies.push_back(k.make_async_copy(buf, buf, sem));
    });
    EXPECT_ERROR(kept->semaphore_read(sem), RuntimeUsageError, "has returned");
    EXPECT_ERROR(copies[0].start(), RuntimeUsageError, "has returned");
    run_kernel(ctx, spec, [&](KernelContext& k) {
      EXPECT_EQ(&k, kept);  // the same object (documented), serving the new kernel
      EXPECT_ERROR(copies[0].start(), RuntimeUsageError, "made in an earlier kernel");
    });
  });
  EXPECT_ERROR(kept->device_id(), RuntimeUsageError, "device_id");
}

TEST(KernelErrorTest, AKernelContextFromAnotherThreadIsAnError) {
  Runtime rt(2);
  KernelContext* zero = nullptr;
  std::atomic<bool> published{false}, checked{false};
  rt.launch(ring_mesh(2), [&](DeviceContext& ctx) {
    KernelSpec spec;
    run_kernel(ctx, spec, [&](KernelContext& k) {
      if (k.device_id() == 0) {
        zero = &k;
        published = true;
        while (!checked) ctx.yield();
      } else {
        while (!published) ctx.yield();
        EXPECT_ERROR(zero->num_devices(), RuntimeUsageError, "num_devices");
        checked = true;
      }
    });
  });
}

}  // namespace
}  // namespace meshsim::kernel_test
