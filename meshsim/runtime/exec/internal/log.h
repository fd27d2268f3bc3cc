#pragma once
// Logging: each Runtime owns an spdlog logger (no global logger registry is
// touched, so runtimes stay independent). The level comes from the
// MESHSIM_LOG_LEVEL environment variable (trace, debug, info, warn, error,
// critical, off; unset or empty: warn; anything else: InvalidArgumentError
// from the Runtime's constructor). Device code logs through DeviceContext::log,
// which puts the device id in every line.

#include <spdlog/logger.h>

#include <memory>

namespace meshsim {

std::shared_ptr<spdlog::logger> make_runtime_logger();

}  // namespace meshsim
