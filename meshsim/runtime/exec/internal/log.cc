#include "meshsim/runtime/exec/internal/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/internal/format.h"

namespace meshsim {

std::shared_ptr<spdlog::logger> make_runtime_logger() {
  auto logger = std::make_shared<spdlog::logger>(
      "meshsim", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  logger->set_pattern("[%H:%M:%S.%e] [meshsim] [%^%l%$] %v");
  const char* level = std::getenv("MESHSIM_LOG_LEVEL");
  if (level == nullptr || *level == '\0') {
    logger->set_level(spdlog::level::warn);
    return logger;
  }
  // spdlog reads any name it does not know as "off": a typo would silence
  // every warning and error.
  const spdlog::level::level_enum parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && std::string_view(level) != "off") {
    throw InvalidArgumentError("environment variable MESHSIM_LOG_LEVEL: " + quote_text(level) +
                               " is not one of trace, debug, info, warn, error, critical, off");
  }
  logger->set_level(parsed);
  return logger;
}

}  // namespace meshsim
