#pragma once

#include <string>

#include "runtime/async_work_queue.h"
#include "runtime/controller.h"
#include "runtime/work_queue.h"

namespace gpuplacement::runtime {

// A controller with its own rate-limited work queue, as controller-runtime's
// controller owns its workqueue: what each reconciler is made of. Its name
// labels its metrics (controller="gpuworkload").
template <typename Key = ObjectKey>
class QueuedController {
 public:
  using Reconcile = typename Controller<Key>::Reconcile;

  QueuedController(asio::any_io_executor executor, std::string name, int workers,
                   Reconcile reconcile, const Clock& clock)
      : name_(std::move(name)),
        queue_(clock),
        async_(queue_),
        controller_(std::move(executor), async_, workers, std::move(reconcile), clock) {}
  QueuedController(const QueuedController&) = delete;
  QueuedController& operator=(const QueuedController&) = delete;

  const std::string& name() const { return name_; }
  void enqueue(const Key& key) { async_.add(key); }
  // The workers, until stop() and the last reconcile in flight has ended.
  asio::awaitable<void> run() { co_await controller_.run(); }
  void stop() { async_.shutDown(); }

  const WorkQueue<Key>& queue() const { return queue_; }
  Controller<Key>& controller() { return controller_; }

 private:
  std::string name_;
  WorkQueue<Key> queue_;
  AsyncWorkQueue<Key> async_;
  Controller<Key> controller_;
};

}  // namespace gpuplacement::runtime
