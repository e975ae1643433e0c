#pragma once

#include <cstdio>
#include <initializer_list>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "base/result.h"

namespace gpuplacement::app {

enum class LogLevel { Debug, Info, Warn, Error };
enum class LogFormat { Json, Text };

base::Result<LogLevel> parseLogLevel(const std::string& text);
base::Result<LogFormat> parseLogFormat(const std::string& text);

using LogField = std::pair<std::string_view, std::string_view>;

// Structured logs, one line each, to stderr: JSON for machines (default in
// the cluster) or key=value text for people. Callers put the object's
// namespace and name on every line about an object.
class Logger {
 public:
  Logger(LogLevel level, LogFormat format, std::FILE* out = stderr)
      : level_(level), format_(format), out_(out) {}

  void log(LogLevel level, std::string_view message, std::initializer_list<LogField> fields = {});
  void debug(std::string_view message, std::initializer_list<LogField> fields = {}) {
    log(LogLevel::Debug, message, fields);
  }
  void info(std::string_view message, std::initializer_list<LogField> fields = {}) {
    log(LogLevel::Info, message, fields);
  }
  void warn(std::string_view message, std::initializer_list<LogField> fields = {}) {
    log(LogLevel::Warn, message, fields);
  }
  void error(std::string_view message, std::initializer_list<LogField> fields = {}) {
    log(LogLevel::Error, message, fields);
  }
  bool enabled(LogLevel level) const { return level >= level_; }

 private:
  LogLevel level_;
  LogFormat format_;
  std::FILE* out_;
  std::mutex mutex_;
};

}  // namespace gpuplacement::app
