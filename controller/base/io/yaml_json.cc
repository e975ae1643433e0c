#include "base/io/yaml_json.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include <yaml-cpp/yaml.h>

namespace gpuplacement::base {
namespace {

using json = nlohmann::json;

// YAML 1.2 core schema for plain scalars.
json plainScalar(const std::string& text) {
  static const std::regex nullPattern("^(~|null|Null|NULL|)$");
  static const std::regex truePattern("^(true|True|TRUE)$");
  static const std::regex falsePattern("^(false|False|FALSE)$");
  static const std::regex intPattern("^[-+]?[0-9]+$");
  static const std::regex floatPattern(R"(^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$)");
  if (std::regex_match(text, nullPattern)) {
    return nullptr;
  }
  if (std::regex_match(text, truePattern)) {
    return true;
  }
  if (std::regex_match(text, falsePattern)) {
    return false;
  }
  if (std::regex_match(text, intPattern)) {
    std::int64_t value = 0;
    const char* begin = text.data() + (text[0] == '+' ? 1 : 0);
    auto [end, ec] = std::from_chars(begin, text.data() + text.size(), value);
    if (ec == std::errc() && end == text.data() + text.size()) {
      return value;
    }
    return text;  // too large for an integer: keep the digits
  }
  if (std::regex_match(text, floatPattern)) {
    // Not std::stod: it throws on "1e999" (found by fuzz/targets/rules_yaml.cc;
    // it ended the process). Out of range, keep the text, as for integers.
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(text.c_str(), &end);
    if (errno == ERANGE || end != text.c_str() + text.size()) {
      return text;
    }
    return value;
  }
  return text;
}

// Aliases make yaml-cpp's nodes a graph, not a tree: "&a [*a]" refers to
// itself (found by fuzz/targets/rules_yaml.cc; the walk below overflowed the
// stack), and a few lines of nested aliases expand to billions of values.
// So the walk is bounded in depth and in values, and stops with an error.
constexpr int kMaxDepth = 100;

class YamlToJson {
 public:
  explicit YamlToJson(std::size_t maxValues) : remaining_(maxValues) {}

  // Empty when a bound was crossed; then error() says which.
  std::optional<json> convert(const YAML::Node& node) { return walk(node, 0); }
  const std::string& error() const { return error_; }

 private:
  std::optional<json> walk(const YAML::Node& node, int depth) {
    if (depth > kMaxDepth) {
      error_ = "nested deeper than " + std::to_string(kMaxDepth) +
               " levels (an alias that contains itself?)";
      return std::nullopt;
    }
    if (remaining_ == 0) {
      error_ = "more values than the document's size allows once aliases are expanded";
      return std::nullopt;
    }
    --remaining_;
    switch (node.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        return json(nullptr);
      case YAML::NodeType::Scalar:
        // "!" is the tag of a quoted scalar: always a string.
        return node.Tag() == "!" ? json(node.Scalar()) : plainScalar(node.Scalar());
      case YAML::NodeType::Sequence: {
        json array = json::array();
        for (const auto& item : node) {
          auto value = walk(item, depth + 1);
          if (!value) {
            return std::nullopt;
          }
          array.push_back(std::move(*value));
        }
        return array;
      }
      case YAML::NodeType::Map: {
        json object = json::object();
        for (const auto& item : node) {
          auto value = walk(item.second, depth + 1);
          if (!value) {
            return std::nullopt;
          }
          object[item.first.as<std::string>()] = std::move(*value);
        }
        return object;
      }
    }
    return json(nullptr);
  }

  std::size_t remaining_;
  std::string error_;
};

void emit(YAML::Emitter& out, const json& value) {
  switch (value.type()) {
    case json::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [key, item] : value.items()) {
        out << YAML::Key << key << YAML::Value;
        emit(out, item);
      }
      out << YAML::EndMap;
      break;
    case json::value_t::array:
      out << YAML::BeginSeq;
      for (const auto& item : value) {
        emit(out, item);
      }
      out << YAML::EndSeq;
      break;
    case json::value_t::string: {
      const auto text = value.get<std::string>();
      // Quote strings a reader would take for another type.
      const json reread = plainScalar(text);
      if (!reread.is_string()) {
        out << YAML::DoubleQuoted << text;
      } else {
        out << text;
      }
      break;
    }
    case json::value_t::null:
      out << YAML::Null;
      break;
    default:
      out << value.dump();
  }
}

// A line that starts or ends a document: "---" or "..." alone or followed
// by a space (YAML forbids either at the start of a line inside content).
bool isDocumentMarker(std::string_view line) {
  const auto marker = line.substr(0, 3);
  return (marker == "---" || marker == "...") &&
         (line.size() == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r' ||
          line[3] == '\n');
}

// The stream cut into documents. yaml-cpp 0.7's LoadAll can loop for ever
// on some malformed input (",'" reads as an endless run of empty documents,
// found by fuzz/targets/catalog_yaml.cc); YAML::Load reads one document
// and stops, so each document is handed to it alone.
std::vector<std::string> splitDocuments(const std::string& text) {
  std::vector<std::string> documents(1);
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string_view line(text.data() + start, end - start);
    if (isDocumentMarker(line)) {
      documents.emplace_back();
      if (line.substr(0, 3) == "---") {
        documents.back() += line;  // "--- value" keeps its value
      }
    } else {
      documents.back() += line;
    }
    start = end;
  }
  return documents;
}

}  // namespace

base::Result<std::vector<json>> parseYamlDocuments(const std::string& text,
                                                   const std::string& source) {
  std::vector<json> documents;
  try {
    for (const auto& document : splitDocuments(text)) {
      const auto node = YAML::Load(document);
      if (node.IsNull()) {
        continue;  // "---" with nothing after it
      }
      // Without aliases a value takes at least a byte of the text; the
      // floor leaves room for aliases a person writes on purpose.
      YamlToJson converter(std::max<std::size_t>(10'000, document.size()));
      auto value = converter.convert(node);
      if (!value) {
        return base::Error{source, "not valid YAML: " + converter.error()};
      }
      documents.push_back(std::move(*value));
    }
  } catch (const YAML::Exception& e) {
    return base::Error{source, "not valid YAML: " + std::string(e.what())};
  }
  return documents;
}

base::Result<json> parseYaml(const std::string& text, const std::string& source) {
  auto documents = parseYamlDocuments(text, source);
  if (!documents) {
    return documents.error();
  }
  if (documents->size() != 1) {
    return base::Error{source,
                       "expected one YAML document, found " + std::to_string(documents->size())};
  }
  return std::move(documents->front());
}

std::string toYaml(const json& value) {
  YAML::Emitter out;
  emit(out, value);
  return std::string(out.c_str()) + "\n";
}

base::Result<std::string> readTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return base::Error{path, "cannot read the file"};
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace gpuplacement::base
