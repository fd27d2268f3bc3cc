#pragma once
// The device whose code the calling thread runs right now: a device thread's
// own device (thread mode), or the device fiber a worker is running (fiber
// mode; the worker sets it around every switch). Null on any other thread and
// on a worker between fibers. How the runtime tells a device's own calls
// (DeviceContext checks, nested launches) from everyone else's.

namespace meshsim {

struct DeviceState;

namespace detail {
extern constinit thread_local DeviceState* current_device;
}  // namespace detail

inline DeviceState* current_device() { return detail::current_device; }
inline void set_current_device(DeviceState* device) { detail::current_device = device; }

}  // namespace meshsim
