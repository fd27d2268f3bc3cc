#include "meshsim/runtime/exec/internal/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>

namespace meshsim {

std::shared_ptr<spdlog::logger> make_runtime_logger() {
  auto logger = std::make_shared<spdlog::logger>(
      "meshsim", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  logger->set_pattern("[%H:%M:%S.%e] [meshsim] [%^%l%$] %v");
  const char* level = std::getenv("MESHSIM_LOG_LEVEL");
  logger->set_level(level != nullptr ? spdlog::level::from_str(level) : spdlog::level::warn);
  return logger;
}

}  // namespace meshsim
