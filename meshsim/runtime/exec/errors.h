#pragma once
// Errors raised by the runtime. All derive from meshsim::Error (mesh/error.h);
// a launch rethrows a device's error on the caller with its device id set.

#include <exception>
#include <string>

#include "meshsim/mesh/error.h"

namespace meshsim {

// A device's function threw something that is not a meshsim::Error. The
// original exception is kept and can be rethrown with rethrow_original().
class DeviceError : public Error {
 public:
  DeviceError(std::string message, std::exception_ptr original)
      : Error(std::move(message)), original_(std::move(original)) {}
  [[noreturn]] void rethrow_original() const { std::rethrow_exception(original_); }

 private:
  std::exception_ptr original_;
};

// A wait was cancelled because another device of the same launch failed. The
// launch reports the other device's error, never this one.
class CancelledError : public Error {
 public:
  using Error::Error;
};

// The members of a group called different collectives, or the same one with a
// different dtype, shape or parameters. Every member receives the same message.
class CollectiveMismatchError : public Error {
 public:
  using Error::Error;
};

// Every device of a launch is blocked inside meshsim, so none can ever proceed.
// The message lists, per device, what it waits in.
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

// The runtime was used in a way it does not allow (a mesh device it does not
// have, a collective outside a launch, destruction during a launch).
class RuntimeUsageError : public Error {
 public:
  using Error::Error;
};

}  // namespace meshsim
