#pragma once
// Errors raised by the runtime. All derive from meshsim::Error (mesh/error.h);
// a launch rethrows a device's error on the caller with its device id set.

#include <exception>
#include <string>

#include "meshsim/mesh/error.h"

namespace meshsim {

// A device's function threw something that is not a meshsim::Error.
// what() reads "device 2: std::runtime_error: boom": the device, the
// exception's type (demangled) and its what(). The original exception is kept
// and can be rethrown with rethrow_original().
class DeviceError : public Error {
 public:
  DeviceError(int device, std::string type_name, const std::string& message,
              std::exception_ptr original)
      : Error(message.empty() ? type_name : type_name + ": " + message),
        type_name_(std::move(type_name)),
        original_(std::move(original)) {
    set_device(device);
  }
  // Copied, also where moved from: a moved-from error would have no original
  // exception to rethrow.
  DeviceError(const DeviceError&) = default;
  DeviceError& operator=(const DeviceError&) = default;
  ~DeviceError() override = default;
  // The original exception's type, e.g. "std::runtime_error".
  const std::string& type_name() const noexcept { return type_name_; }
  [[noreturn]] void rethrow_original() const { std::rethrow_exception(original_); }

 private:
  std::string type_name_;
  std::exception_ptr original_;
};

// A wait was cancelled because the launch failed: another device's error, a
// deadlock or a timeout (so also on a launch of one device). The launch
// reports that error, never this one. (A CancelledError
// that a device's own code throws is that device's error.)
class CancelledError : public Error {
 public:
  using Error::Error;
};

// The members of a group called different collectives, or the same one with a
// different dtype, shape or parameters (every member receives the same
// message); or devices called the same collective over different axes or
// axis_index_groups and wait in different groups for each other (the message
// names both sides).
class CollectiveMismatchError : public Error {
 public:
  using Error::Error;
};

// Every device of a launch is blocked inside meshsim, so none can ever proceed.
// The message says, per set of devices in the same state, what they wait in.
class DeadlockError : public Error {
 public:
  using Error::Error;
};

// A launch finished with psend messages that no precv took.
class UnreceivedMessageError : public Error {
 public:
  using Error::Error;
};

// A launch ran longer than its configured timeout.
class TimeoutError : public Error {
 public:
  using Error::Error;
};

// The runtime was used in a way it does not allow (a mesh device beyond its
// limit, a DeviceContext used outside its launch, a launch from a device body
// on a device its own launch holds, a launch during destruction).
class RuntimeUsageError : public Error {
 public:
  using Error::Error;
};

// The system refused the runtime a resource it needed to run a launch (a
// fiber stack's mapping, a worker thread). The message names the resource and
// the setting that governs it.
class ResourceError : public Error {
 public:
  using Error::Error;
};

// Kernels (kernel/): a semaphore left non-zero when its kernel exits, or
// signalled past KernelContext::kMaxSemaphoreValue; a DMA too large for its
// semaphores to count. The message names the kernel, the device, the
// semaphore and its value.
class SemaphoreError : public Error {
 public:
  using Error::Error;
};

// Kernels with race detection on (KernelSpec::set_race_detection): two
// conflicting accesses to a buffer region that happens-before does not order
// (a read of a copy's destination before waiting for the copy, a write of its
// source before its send completed, a DMA into a region its owner still
// reads). The message names both accesses: devices, buffer, bytes, operations.
class DataRaceError : public Error {
 public:
  using Error::Error;
};

// Kernels: a device id outside the kernel's mesh (a logical id out of range,
// mesh coordinates of the wrong length or out of range).
class DeviceIdError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};

// Kernels: a barrier semaphore asked for by a kernel without a collective
// id, or a collective id another kernel of the same Runtime holds.
class CollectiveIdError : public Error {
 public:
  using Error::Error;
};

}  // namespace meshsim
