#pragma once

#include <exception>
#include <optional>

#include "runtime/asio.h"

namespace gpuplacement::runtime {

// Runs one coroutine to completion on the caller's io_context (restarted for
// the run) and returns its value: for command-line tools and tests, never
// inside the operator's own loop. Exceptions are rethrown here.
template <typename T>
T runSync(asio::io_context& context, asio::awaitable<T> task) {
  std::optional<T> result;
  std::exception_ptr failure;
  // asio's own future support needs a default-constructible T; Result is not.
  asio::co_spawn(
      context,
      [&result, task = std::move(task)]() mutable -> asio::awaitable<void> {
        result.emplace(co_await std::move(task));
      },
      [&failure, &context](std::exception_ptr error) {
        failure = error;
        context.stop();  // other work on the context (a server, say) waits for the next run
      });
  context.restart();
  context.run();
  if (failure) {
    std::rethrow_exception(failure);
  }
  return std::move(*result);
}

namespace detail {
inline asio::awaitable<bool> completed(asio::awaitable<void> task) {
  co_await std::move(task);
  co_return true;
}
}  // namespace detail

inline void runSync(asio::io_context& context, asio::awaitable<void> task) {
  runSync(context, detail::completed(std::move(task)));
}

}  // namespace gpuplacement::runtime
