#pragma once

// An end-to-end suite's namespace and operator, made once for the suite's
// test cases: the namespace applied, `before` run (what must stand before
// the operator starts, such as another team's pods), then the operator
// started and ready; stopped when the suite's binary exits.
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <doctest/doctest.h>

#include "support/cluster.h"
#include "support/suite.h"

namespace gpuplacement::testing {

struct OperatorInNamespace {
  std::unique_ptr<OperatorProcess> op;

  explicit OperatorInNamespace(const std::string& ns, const std::function<void()>& before = {}) {
    cluster().apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n");
    if (before) {
      before();
    }
    op = std::make_unique<OperatorProcess>(cluster().operatorKubeconfig());
    REQUIRE_MESSAGE(op->waitReady(std::chrono::seconds(60)), op->log());
  }
  ~OperatorInNamespace() {
    if (op) {
      op->stop();
    }
  }
  OperatorInNamespace(const OperatorInNamespace&) = delete;
  OperatorInNamespace& operator=(const OperatorInNamespace&) = delete;
};

}  // namespace gpuplacement::testing
