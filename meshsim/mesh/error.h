#pragma once
// The meshsim error family. The base class lives in mesh/ (the bottom layer)
// so that every layer can throw it; runtime-only errors are in runtime/errors.h.
//
// Every error may carry the id of the device it was raised on. The runtime
// sets it when it rethrows a device's error on the launching thread, so the
// dynamic type survives (tests can EXPECT_THROW a precise class) and what()
// starts with "device N: ".

#include <optional>
#include <stdexcept>
#include <string>

namespace meshsim {

class Error : public std::exception {
 public:
  explicit Error(std::string message) : message_(std::move(message)) { compose(); }

  const char* what() const noexcept override { return what_.c_str(); }
  // The message without the "device N: " prefix.
  const std::string& message() const noexcept { return message_; }
  std::optional<int> device() const noexcept { return device_; }
  // Records the device the error was raised on (first call wins).
  void set_device(int device) {
    if (!device_) {
      device_ = device;
      compose();
    }
  }

 private:
  void compose() {
    what_ = device_ ? "device " + std::to_string(*device_) + ": " + message_ : message_;
  }
  std::string message_;
  std::optional<int> device_;
  std::string what_;
};

// A caller passed something invalid: the message names the argument and value.
class InvalidArgumentError : public Error {
 public:
  using Error::Error;
};
// An axis name that the mesh does not have, or an axis used twice.
class AxisError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};
// A partition spec that does not fit the mesh or the array it is applied to.
class SpecError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};
// A shape that does not fit: wrong rank, wrong size, not divisible.
class ShapeError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};
// An element type that an operation does not accept or that does not match.
class DTypeError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};
// axis_index_groups that do not cover each index exactly once, or are uneven.
class GroupError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};
// A mesh that cannot exist: empty, zero-sized axis, duplicate device ids.
class MeshError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};

}  // namespace meshsim
