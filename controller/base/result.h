#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace gpuplacement::base {

// An expected failure, reported to a person: `field` is the path of the input
// that is wrong (e.g. "spec.model.parameters"), `message` says what is wrong
// and, where it helps, what would be accepted.
struct Error {
  std::string field;
  std::string message;

  std::string describe() const { return field.empty() ? message : field + ": " + message; }
};

// The value an Error's message is about, in double quotes. Built by
// appending: "\"" + std::string(text) inserts at the front of a temporary,
// which g++ 12 at -O3 reports falsely as overlapping (-Wrestrict, GCC bug
// 105651), failing the Release build.
inline std::string quoted(std::string_view text) {
  std::string result;
  result.reserve(text.size() + 2);
  result += '"';
  result += text;
  result += '"';
  return result;
}

// Expected failures are return values (DuckDB's rule); exceptions stay at
// the I/O edge. A small stand-in for C++23's std::expected; E defaults to
// the field-and-message Error that input validation reports.
template <typename T, typename E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}
  Result(E error) : state_(std::move(error)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const E& error() const& { return std::get<1>(state_); }
  E&& error() && { return std::get<1>(std::move(state_)); }

 private:
  std::variant<T, E> state_;
};

// For operations that return nothing but may fail.
struct Ok {};
using Status = Result<Ok>;

}  // namespace gpuplacement::base
