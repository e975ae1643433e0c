#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cache.h"
#include "runtime/controller_set.h"

namespace gpuplacement::runtime {

// A reconciler's wiring in one expression, as controller-runtime's builder
// and kube-rs's Controller::new().watches() give it:
//
//   ControllerBuilder(controllers, "gpuworkload")
//       .forKind(workloads, specChanged)
//       .watches(targets, workloadsOfTarget)
//       .workers(4)
//       .complete(reconcile);
//
// complete() creates the work queue and the controller, adds it to the set
// (which runs it and tells its metrics) and connects the watches.
class ControllerBuilder {
 public:
  using Controller = QueuedController<ObjectKey>;

  ControllerBuilder(ControllerSet& controllers, std::string name)
      : controllers_(controllers), name_(std::move(name)) {}

  // The default predicate: every addition, update and deletion. Public
  // because a default argument is checked where the call is (clang).
  template <typename T>
  static bool everyChange(const T*, const T*) {
    return true;
  }

  // Reconciles the objects of this cache, on every change or only when
  // `changed(previous, current)` says (controller-runtime's predicates);
  // previous is null for an addition, current for a deletion.
  template <typename T, typename Changed = bool (*)(const T*, const T*)>
  ControllerBuilder& forKind(Cache<T>& cache, Changed changed = everyChange<T>) {
    bindings_.push_back([&cache, changed](Controller& controller) {
      cache.addHandler(
          [&controller, changed](const std::string& key, const T* previous, const T* current) {
            if (changed(previous, current)) {
              controller.enqueue(ObjectKey::parse(key));
            }
          });
    });
    return *this;
  }

  // Reconciles what `map` names when the source (a Cache or an
  // EventSource) tells of a change: map takes the source's arguments and
  // returns the keys to reconcile ("ns/name" strings or ObjectKeys), none
  // when the change does not matter.
  template <typename Source, typename Map>
  ControllerBuilder& watches(Source& source, Map map) {
    bindings_.push_back([&source, map](Controller& controller) {
      source.addHandler([&controller, map](const auto&... args) {
        for (const auto& key : map(args...)) {
          enqueue(controller, key);
        }
      });
    });
    return *this;
  }

  // Reconciles at once (1 unless said).
  ControllerBuilder& workers(int count) {
    workers_ = count;
    return *this;
  }

  Controller& complete(Controller::Reconcile reconcile) {
    auto& controller = controllers_.add(name_, workers_, std::move(reconcile));
    for (const auto& bind : bindings_) {
      bind(controller);
    }
    return controller;
  }

 private:
  static void enqueue(Controller& controller, const ObjectKey& key) { controller.enqueue(key); }
  static void enqueue(Controller& controller, const std::string& key) {
    controller.enqueue(ObjectKey::parse(key));
  }

  ControllerSet& controllers_;
  std::string name_;
  int workers_ = 1;
  std::vector<std::function<void(Controller&)>> bindings_;
};

}  // namespace gpuplacement::runtime
