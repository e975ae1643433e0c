#pragma once

// What app::ObjectCaches lists, scripted: every collection it reads listed
// once, as a streaming list gives it. The watch after the list finds the
// script run out and is retried after a backoff, so the caches stay as
// listed for as long as a test runs.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "app/resource_paths.h"
#include "core/kinds/target_kind.h"
#include "support/scripted_list_watch.h"

namespace gpuplacement::testing {

// `objects` by collection path (app/resource_paths.h); a collection not
// named is listed empty, a path the caches do not read fails the test.
inline ScriptedListWatchByPath scriptedCaches(
    const std::map<std::string, std::vector<nlohmann::json>>& objects) {
  // NodeOverlays too: ObjectCaches reads them once enableNodeOverlays()
  // found them served.
  std::vector<std::string> paths = {
      app::policiesPath(),         app::workloadsPath(""),     app::nodesPath(),
      app::unfinishedPodsPath(),   app::nodeOverlaysPath(),    app::autoscalersPath(""),
      app::kueueWorkloadsPath(""), app::resourceFlavorsPath(), app::admissionChecksPath()};
  for (const auto kind : core::kTargetKinds) {
    paths.push_back(app::targetsPath(kind, ""));
  }
  for (const auto& [path, listed] : objects) {
    REQUIRE_MESSAGE(std::find(paths.begin(), paths.end(), path) != paths.end(),
                    path << " is not a collection ObjectCaches reads");
  }
  ScriptedListWatchByPath lists;
  for (const auto& path : paths) {
    ScriptedListWatch::WatchScript script;
    if (const auto found = objects.find(path); found != objects.end()) {
      for (const auto& object : found->second) {
        script.lines.push_back(nlohmann::json{{"type", "ADDED"}, {"object", object}}.dump());
      }
    }
    script.lines.push_back(initialEventsEnd("9"));
    lists.paths[path].streamingLists.push_back(std::move(script));
    lists.paths[path].onExhausted = [] {};
  }
  return lists;
}

}  // namespace gpuplacement::testing
