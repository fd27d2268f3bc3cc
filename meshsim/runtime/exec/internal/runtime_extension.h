#pragma once
// RuntimeExtension: state a layer above the runtime keeps per Runtime (the
// collectives' algorithm registry), owned by the runtime without the runtime
// knowing its type, so the dependency direction stays mesh <- runtime <-
// collectives.

namespace meshsim {

class RuntimeExtension {
 public:
  virtual ~RuntimeExtension() = default;
};

}  // namespace meshsim
