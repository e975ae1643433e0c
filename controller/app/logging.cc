#include "app/logging.h"

#include <chrono>

#include <nlohmann/json.hpp>

#include "base/time_format.h"

namespace gpuplacement::app {
namespace {

const char* levelName(LogLevel level) {
  switch (level) {
    case LogLevel::Debug:
      return "debug";
    case LogLevel::Info:
      return "info";
    case LogLevel::Warn:
      return "warn";
    case LogLevel::Error:
      return "error";
  }
  return "info";
}

std::string timestamp() {
  const auto now = std::chrono::system_clock::now();
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::string text = base::formatRfc3339(now);
  char fraction[8];
  std::snprintf(fraction, sizeof fraction, ".%03d", static_cast<int>(millis));
  text.insert(text.size() - 1, fraction);
  return text;
}

bool needsQuotes(std::string_view value) {
  return value.empty() || value.find_first_of(" \"=\t\n") != std::string_view::npos;
}

}  // namespace

base::Result<LogLevel> parseLogLevel(const std::string& text) {
  for (auto level : {LogLevel::Debug, LogLevel::Info, LogLevel::Warn, LogLevel::Error}) {
    if (text == levelName(level)) {
      return level;
    }
  }
  return base::Error{"--log-level",
                     "\"" + text + "\" is not a log level (use debug, info, warn or error)"};
}

base::Result<LogFormat> parseLogFormat(const std::string& text) {
  if (text == "json") {
    return LogFormat::Json;
  }
  if (text == "text") {
    return LogFormat::Text;
  }
  return base::Error{"--log-format", "\"" + text + "\" is not a log format (use json or text)"};
}

void Logger::log(LogLevel level, std::string_view message, std::initializer_list<LogField> fields) {
  if (!enabled(level)) {
    return;
  }
  std::string line;
  if (format_ == LogFormat::Json) {
    nlohmann::ordered_json entry = {
        {"ts", timestamp()}, {"level", levelName(level)}, {"msg", message}};
    for (const auto& [key, value] : fields) {
      entry[std::string(key)] = value;
    }
    line = entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } else {
    line = timestamp() + " " + levelName(level) + " " + std::string(message);
    for (const auto& [key, value] : fields) {
      line += ' ';
      line += key;
      line += '=';
      line += needsQuotes(value) ? nlohmann::json(value).dump() : std::string(value);
    }
  }
  line.push_back('\n');
  std::lock_guard lock(mutex_);
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fflush(out_);
}

}  // namespace gpuplacement::app
