#pragma once

#include <string>

namespace gpuplacement::testing {

// The message of a REQUIRE_MESSAGE(result.ok(), ...). doctest evaluates the
// message when it logs the assertion, on success too (with -s), so it must
// not read the error of a result that holds a value.
template <typename ResultType>
std::string whyNot(const ResultType& result) {
  return result.ok() ? std::string("ok") : result.error().describe();
}

}  // namespace gpuplacement::testing
