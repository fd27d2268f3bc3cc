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
  // Copied, also where moved from (as the standard exceptions are): a
  // moved-from error would keep its device with an empty message.
  Error(const Error&) = default;
  Error& operator=(const Error&) = default;
  ~Error() override = default;

  const char* what() const noexcept override { return what_.c_str(); }
  // The message without the "device N: " prefix.
  const std::string& message() const noexcept { return message_; }
  std::optional<int> device() const noexcept { return device_; }
  // Prepends "context: " to the message. A layer that adds what it knows
  // (the shard_map argument, the collective) catches by reference, calls
  // this and rethrows with `throw;`, so the dynamic type is kept.
  void add_context(const std::string& context) {
    message_ = context + ": " + message_;
    compose();
  }
  // Records the device the error was raised on (first call wins).
  void set_device(int device) {
    if (!device_) {
      device_ = device;
      compose();
    }
  }
  // Makes it an error of `device`, whose body it escaped from: one raised on
  // another device (of a launch that body made, perhaps on another runtime,
  // whose ids mean other devices) keeps that device in its message:
  // "device 3: device 5 of another launch: ...".
  void reattribute(int device) {
    if (device_ && *device_ != device) {
      message_ = "device " + std::to_string(*device_) + " of another launch: " + message_;
      device_.reset();
    }
    set_device(device);
  }

 private:
  void compose() {
    what_ = device_ ? "device " + std::to_string(*device_) + ": " + message_ : message_;
  }
  std::string message_;
  std::optional<int> device_;
  std::string what_;
};

// One class per kind of defect, the same wherever the defect is detected
// (a partition spec, a collective, a driver), so a test or a caller can tell
// the defects apart by type. The broad classes (AxisError, SpecError,
// ShapeError) catch a whole family.

// A caller passed something invalid: the message names the argument and value.
// Thrown as such for an invalid argument no narrower class describes (a
// pbroadcast source out of range, a negative ragged offset).
class InvalidArgumentError : public Error {
 public:
  using Error::Error;
};

// A problem with axis names (base of the two below).
class AxisError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};
// An axis name the mesh does not have (in a spec, a collective, axis_index).
class UnknownAxisError : public AxisError {
 public:
  using AxisError::AxisError;
};
// An axis named twice (in one spec, or in one collective's axes).
class DuplicateAxisError : public AxisError {
 public:
  using AxisError::AxisError;
};

// A partition spec that does not fit the array it is applied to (base).
class SpecError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};
// A partition spec with more entries than the array has dimensions.
class SpecRankError : public SpecError {
 public:
  using SpecError::SpecError;
};

// A shape that does not fit (base; thrown as such for array-level shape
// defects: a negative dim, a reshape to another size, an index out of bounds).
class ShapeError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};
// A dimension that is not divisible by the number of shards a spec cuts it in.
class IndivisibleShardError : public ShapeError {
 public:
  using ShapeError::ShapeError;
};
// A shape a collective cannot take: an axis parameter out of range for x's
// rank, a dimension that must equal or be divisible by the group size, a
// result shape whose size overflows int64, a received message of another shape.
class CollectiveShapeError : public ShapeError {
 public:
  using ShapeError::ShapeError;
};

// An element type that an operation does not accept or that does not match.
class DTypeError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};
// Invalid axis_index_groups: an index out of range, in two groups or in
// none, an empty group, or groups of unequal sizes where equal ones are needed.
class GroupError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};
// An invalid permutation (ppermute, pshuffle, psend, precv): an index out of
// [-n, n), two pairs with one source or one destination, a pshuffle perm that
// is not a permutation of range(n).
class InvalidPermutationError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};
// A mesh that cannot exist: empty, zero-sized axis, duplicate device ids.
class MeshError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};
// A network topology that cannot exist or does not fit the mesh it is bound
// to: a dimension of size < 1, a bandwidth that is not a finite number > 0, a
// negative latency, a malformed one-line spec or JSON file (unknown kind,
// number, unit or field; a field missing), sizes that do not match the mesh.
class TopologyError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};

}  // namespace meshsim
