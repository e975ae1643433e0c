#include "base/prometheus_text.h"

#include <algorithm>
#include <charconv>

namespace gpuplacement::base {

std::string_view PrometheusSample::label(std::string_view key) const {
  for (const auto& [name, value] : labels) {
    if (name == key) {
      return value;
    }
  }
  return {};
}

namespace {

bool nameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}

bool nameChar(char c) {
  return nameStart(c) || (c >= '0' && c <= '9');
}

bool blank(char c) {
  return c == ' ' || c == '\t';
}

// One sample line, consumed from the front; `problem` says what is wrong.
class LineReader {
 public:
  explicit LineReader(std::string_view line) : rest_(line) {}

  std::string_view name() {
    std::size_t end = 0;
    while (end < rest_.size() && nameChar(rest_[end])) {
      ++end;
    }
    const auto name = rest_.substr(0, end);
    rest_.remove_prefix(end);
    return name;
  }

  bool labels(std::vector<std::pair<std::string, std::string>>& out, std::string& problem) {
    if (rest_.empty() || rest_.front() != '{') {
      return true;
    }
    rest_.remove_prefix(1);
    for (;;) {
      skipBlanks();
      if (!rest_.empty() && rest_.front() == '}') {
        rest_.remove_prefix(1);
        return true;
      }
      const auto key = name();
      if (key.empty() || !nameStart(key.front())) {
        problem = "a label name is missing or malformed";
        return false;
      }
      skipBlanks();
      if (rest_.size() < 2 || rest_[0] != '=' || rest_[1] != '"') {
        problem = "label " + std::string(key) + " has no quoted value";
        return false;
      }
      rest_.remove_prefix(2);
      std::string value;
      if (!quotedValue(value)) {
        problem = "label " + std::string(key) + "'s value is not closed";
        return false;
      }
      out.emplace_back(std::string(key), std::move(value));
      skipBlanks();
      if (!rest_.empty() && rest_.front() == ',') {
        rest_.remove_prefix(1);
      } else if (rest_.empty() || rest_.front() != '}') {
        problem = "labels are not separated by commas or closed by }";
        return false;
      }
    }
  }

  bool value(double& out, std::string& problem) {
    if (rest_.empty() || !blank(rest_.front())) {
      problem = "no value after the name";
      return false;
    }
    skipBlanks();
    std::size_t end = 0;
    while (end < rest_.size() && !blank(rest_[end])) {
      ++end;
    }
    auto text = rest_.substr(0, end);
    rest_.remove_prefix(end);
    if (!text.empty() && text.front() == '+') {
      text.remove_prefix(1);  // "+Inf"; from_chars takes no plus sign
    }
    const auto [at, error] = std::from_chars(text.data(), text.data() + text.size(), out);
    if (text.empty() || error != std::errc{} || at != text.data() + text.size()) {
      problem = "the value is not a number";
      return false;
    }
    skipBlanks();
    // An optional timestamp (milliseconds) may follow; the operator reads
    // the value as of the scrape.
    return true;
  }

 private:
  void skipBlanks() {
    while (!rest_.empty() && blank(rest_.front())) {
      rest_.remove_prefix(1);
    }
  }

  bool quotedValue(std::string& value) {
    for (std::size_t i = 0; i < rest_.size(); ++i) {
      const char c = rest_[i];
      if (c == '"') {
        rest_.remove_prefix(i + 1);
        return true;
      }
      if (c == '\\' && i + 1 < rest_.size()) {
        const char escaped = rest_[++i];
        value += escaped == 'n' ? '\n' : escaped;
        continue;
      }
      value += c;
    }
    return false;
  }

  std::string_view rest_;
};

}  // namespace

Result<Ok> readPrometheusText(std::string_view text, std::initializer_list<std::string_view> names,
                              const std::function<void(const PrometheusSample&)>& onSample) {
  PrometheusSample sample;
  std::size_t number = 0;
  while (!text.empty()) {
    ++number;
    const auto newline = text.find('\n');
    auto line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    std::size_t start = 0;
    while (start < line.size() && blank(line[start])) {
      ++start;
    }
    if (start == line.size() || line[start] == '#') {
      continue;
    }
    LineReader reader(line.substr(start));
    sample.name = reader.name();
    if (std::find(names.begin(), names.end(), sample.name) == names.end()) {
      continue;
    }
    sample.labels.clear();
    std::string problem;
    if (!reader.labels(sample.labels, problem) || !reader.value(sample.value, problem)) {
      return Error{"line " + std::to_string(number), std::string(sample.name) + ": " + problem};
    }
    onSample(sample);
  }
  return Ok{};
}

}  // namespace gpuplacement::base
