#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/queued_controller.h"
#include "runtime/signal.h"

namespace gpuplacement::runtime {

// The controllers a manager runs (controller-runtime's manager.Add): each
// is added by a ControllerBuilder, told to whoever observes them (metrics),
// run together and stopped together.
class ControllerSet {
 public:
  using Added = std::function<void(QueuedController<ObjectKey>&)>;

  ControllerSet(asio::any_io_executor executor, const Clock& clock, Added onAdded = {})
      : executor_(std::move(executor)), clock_(clock), onAdded_(std::move(onAdded)) {}

  QueuedController<ObjectKey>& add(std::string name, int workers,
                                   QueuedController<ObjectKey>::Reconcile reconcile) {
    auto& added = *controllers_.emplace_back(std::make_unique<QueuedController<ObjectKey>>(
        executor_, std::move(name), workers, std::move(reconcile), clock_));
    if (onAdded_) {
      onAdded_(added);
    }
    return added;
  }

  // Every controller's workers, until stop() and the last reconcile in
  // flight has ended.
  asio::awaitable<void> run() {
    std::size_t running = controllers_.size();
    Signal finished;
    for (const auto& controller : controllers_) {
      asio::co_spawn(executor_, controller->run(), [&](const std::exception_ptr&) {
        --running;
        finished.notifyAll();
      });
    }
    while (running > 0) {
      co_await finished.wait();
    }
  }
  void stop() {
    for (const auto& controller : controllers_) {
      controller->stop();
    }
  }
  std::size_t size() const { return controllers_.size(); }

 private:
  asio::any_io_executor executor_;
  const Clock& clock_;
  Added onAdded_;
  std::vector<std::unique_ptr<QueuedController<ObjectKey>>> controllers_;
};

}  // namespace gpuplacement::runtime
