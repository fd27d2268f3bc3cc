#pragma once
// The fiber doorbell: the one futex word idle fiber workers sleep on.
//
// A worker sleeps only once every fiber it runs has announced itself on the
// word it waits for (WaitWord's fiber sleepers), so any change to one of those
// words rings the doorbell (WaitWord::advance, WaitWord::poison), and so does a
// new task for the worker. There is one doorbell per process: a ring wakes
// every sleeping worker of every runtime, and each re-checks its own fibers.
// Rings come only from words somebody sleeps on, so a busy path never rings.
//
// Memory order: ring() is a seq_cst read-modify-write; a worker reads the value
// (seq_cst) after its fibers announced and before its last check, so a change
// after that check always moves the value it sleeps on.

#include <chrono>
#include <cstdint>

namespace meshsim {

uint32_t fiber_doorbell_value();
void ring_fiber_doorbell();
// Sleeps until the doorbell moves past `seen`, or `timeout` passes (a negative
// timeout: no limit). May return early; the caller re-checks.
void sleep_on_fiber_doorbell(uint32_t seen, std::chrono::nanoseconds timeout);

}  // namespace meshsim
