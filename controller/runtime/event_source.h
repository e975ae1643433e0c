#pragma once

#include <functional>
#include <utility>
#include <vector>

namespace gpuplacement::runtime {

// Something that happened, told to every handler: what a controller can
// watch beside a cache (controller-runtime's source.Channel). Handlers must
// not suspend; they enqueue work.
template <typename... Args>
class EventSource {
 public:
  using Handler = std::function<void(Args...)>;

  void addHandler(Handler handler) { handlers_.push_back(std::move(handler)); }
  void notify(Args... args) const {
    for (const auto& handler : handlers_) {
      handler(args...);
    }
  }

 private:
  std::vector<Handler> handlers_;
};

}  // namespace gpuplacement::runtime
