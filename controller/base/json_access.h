#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace gpuplacement::base {

// Reading fields of documents someone else wrote (the API server, a user):
// a missing field or one of the wrong type reads as empty, never throws.
inline const nlohmann::json& memberOf(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kNull;
  if (!object.is_object()) {
    return kNull;
  }
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

inline std::string stringOf(const nlohmann::json& value, std::string fallback = {}) {
  return value.is_string() ? value.get<std::string>() : fallback;
}

inline std::int64_t integerOf(const nlohmann::json& value, std::int64_t fallback = 0) {
  return value.is_number_integer() ? value.get<std::int64_t>() : fallback;
}

inline std::string stringMember(const nlohmann::json& object, const char* key) {
  return stringOf(memberOf(object, key));
}

inline std::int64_t integerMember(const nlohmann::json& object, const char* key) {
  return integerOf(memberOf(object, key));
}

}  // namespace gpuplacement::base
