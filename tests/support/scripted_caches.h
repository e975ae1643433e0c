#pragma once

// What app::ObjectCaches lists, scripted: every collection it reads listed
// once, as a streaming list gives it. The watch after the list finds the
// script run out and is retried after a backoff, so the caches stay as
// listed for as long as a test runs.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/resource_paths.h"
#include "core/target_kind.h"
#include "support/scripted_list_watch.h"

namespace gpuplacement::testing {

// `objects` by collection path (app/resource_paths.h); a collection not
// named is listed empty.
inline ScriptedListWatchByPath scriptedCaches(
    const std::map<std::string, std::vector<nlohmann::json>>& objects) {
  std::vector<std::string> paths = {app::policiesPath(), app::workloadsPath(""), app::nodesPath(),
                                    app::unfinishedPodsPath()};
  for (const auto kind : core::kTargetKinds) {
    paths.push_back(app::targetsPath(kind, ""));
  }
  ScriptedListWatchByPath lists;
  for (const auto& path : paths) {
    ScriptedListWatch::WatchScript listed;
    if (const auto found = objects.find(path); found != objects.end()) {
      for (const auto& object : found->second) {
        listed.lines.push_back(nlohmann::json{{"type", "ADDED"}, {"object", object}}.dump());
      }
    }
    listed.lines.push_back(nlohmann::json{
        {"type", "BOOKMARK"},
        {"object",
         {{"metadata",
           {{"resourceVersion", "9"}, {"annotations", {{"k8s.io/initial-events-end", "true"}}}}}}}}
                               .dump());
    auto& script = lists.paths[path];
    script.streamingLists.push_back(std::move(listed));
    script.onExhausted = [] {};
  }
  return lists;
}

}  // namespace gpuplacement::testing
