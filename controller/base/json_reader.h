#pragma once

#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/enum_names.h"
#include "base/result.h"

namespace gpuplacement::base {

// Reads one JSON object field by field; every error carries the field's
// full path ("spec.model.parameters") so a person can find it.
class ObjectReader {
 public:
  using json = nlohmann::json;

  ObjectReader(const json& value, std::string path) : value_(value), path_(std::move(path)) {}

  // An error unless the value is an object (or absent/null, when allowed).
  Status requireObject(bool allowNull = false) const {
    if (value_.is_object() || (allowNull && value_.is_null())) {
      return Ok{};
    }
    return Error{path_, "must be an object"};
  }

  // Rejects keys outside `known`, which catches typos such as "onDemmand".
  Status onlyKeys(std::initializer_list<std::string_view> known) const {
    if (!value_.is_object()) {
      return Ok{};
    }
    for (const auto& item : value_.items()) {
      bool found = false;
      for (auto key : known) {
        found = found || item.key() == key;
      }
      if (!found) {
        return Error{fieldPath(item.key()), "unknown field"};
      }
    }
    return Ok{};
  }

  bool has(std::string_view key) const {
    return value_.is_object() && value_.contains(key) && !value_.at(std::string(key)).is_null();
  }
  const json& at(std::string_view key) const { return value_.at(std::string(key)); }
  std::string fieldPath(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }
  ObjectReader child(std::string_view key) const {
    static const json kNull;
    return ObjectReader(has(key) ? at(key) : kNull, fieldPath(key));
  }
  const std::string& path() const { return path_; }
  const json& value() const { return value_; }

  Result<std::string> string(std::string_view key) const {
    if (!has(key)) {
      return Error{fieldPath(key), "required"};
    }
    return optionalString(key).value().value_or("");
  }

  // An optional string with a fallback; a value of another type is an error.
  Result<std::string> stringOr(std::string_view key, std::string fallback) const {
    auto value = optionalString(key);
    if (!value) {
      return value.error();
    }
    return value->value_or(std::move(fallback));
  }

  Result<std::optional<std::string>> optionalString(std::string_view key) const {
    if (!has(key)) {
      return std::optional<std::string>();
    }
    const auto& field = at(key);
    if (!field.is_string()) {
      return Error{fieldPath(key), "must be a string"};
    }
    return std::optional<std::string>(field.get<std::string>());
  }

  // A number, or a string holding a plain decimal (prices in the API are
  // strings so no float survives a round trip through the API server).
  Result<std::optional<double>> optionalNumber(std::string_view key, double min,
                                               double max = 1e15) const;

  Result<double> number(std::string_view key, double min, double max = 1e15) const {
    if (!has(key)) {
      return Error{fieldPath(key), "required"};
    }
    auto parsed = optionalNumber(key, min, max);
    if (!parsed) {
      return parsed.error();
    }
    return **parsed;
  }

  Result<std::optional<std::int64_t>> optionalInteger(std::string_view key, std::int64_t min,
                                                      std::int64_t max) const {
    if (!has(key)) {
      return std::optional<std::int64_t>();
    }
    const auto& field = at(key);
    if (!field.is_number_integer() && !(field.is_number_float() && isWhole(field))) {
      return Error{fieldPath(key), "must be a whole number"};
    }
    const auto value = field.is_number_float() ? static_cast<std::int64_t>(field.get<double>())
                                               : field.get<std::int64_t>();
    if (value < min || value > max) {
      return Error{fieldPath(key), "must be between " + std::to_string(min) + " and " +
                                       std::to_string(max) + ", not " + std::to_string(value)};
    }
    return std::optional<std::int64_t>(value);
  }

  Result<std::int64_t> integer(std::string_view key, std::int64_t min, std::int64_t max) const {
    if (!has(key)) {
      return Error{fieldPath(key), "required"};
    }
    auto parsed = optionalInteger(key, min, max);
    if (!parsed) {
      return parsed.error();
    }
    return **parsed;
  }

  Result<std::optional<bool>> optionalBool(std::string_view key) const {
    if (!has(key)) {
      return std::optional<bool>();
    }
    if (!at(key).is_boolean()) {
      return Error{fieldPath(key), "must be true or false"};
    }
    return std::optional<bool>(at(key).get<bool>());
  }

  template <typename E>
  Result<std::optional<E>> optionalEnum(std::string_view key) const {
    auto text = optionalString(key);
    if (!text) {
      return text.error();
    }
    if (!*text) {
      return std::optional<E>();
    }
    auto parsed = parseEnum<E>(**text);
    if (!parsed) {
      return Error{fieldPath(key), parsed.error().message};
    }
    return std::optional<E>(*parsed);
  }

  Result<std::vector<std::string>> stringList(std::string_view key) const {
    std::vector<std::string> items;
    if (!has(key)) {
      return items;
    }
    const auto& field = at(key);
    if (!field.is_array()) {
      return Error{fieldPath(key), "must be a list of strings"};
    }
    for (std::size_t i = 0; i < field.size(); ++i) {
      if (!field[i].is_string()) {
        return Error{fieldPath(key) + "[" + std::to_string(i) + "]", "must be a string"};
      }
      items.push_back(field[i].get<std::string>());
    }
    return items;
  }

  template <typename E>
  Result<std::vector<E>> enumList(std::string_view key) const {
    auto names = stringList(key);
    if (!names) {
      return names.error();
    }
    std::vector<E> values;
    for (std::size_t i = 0; i < names->size(); ++i) {
      auto parsed = parseEnum<E>((*names)[i]);
      if (!parsed) {
        return Error{fieldPath(key) + "[" + std::to_string(i) + "]", parsed.error().message};
      }
      values.push_back(*parsed);
    }
    return values;
  }

 private:
  static bool isWhole(const json& field) {
    const double value = field.get<double>();
    return std::isfinite(value) && std::floor(value) == value;
  }

  const json& value_;
  std::string path_;
};

}  // namespace gpuplacement::base
