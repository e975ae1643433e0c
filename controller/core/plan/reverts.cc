#include "core/plan/reverts.h"

#include <algorithm>
#include <cctype>

#include "core/kinds/target.h"

namespace gpuplacement::core {
namespace {

bool withinWindow(const RevertRecord& record, Timestamp now) {
  const auto last = base::parseRfc3339(record.last);
  return last && now - *last <= kRevertSeriesWindow;
}

std::string commaJoined(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) {
    text += (text.empty() ? "" : ", ") + item;
  }
  return text;
}

}  // namespace

RevertStep nextRevertStep(const RevertInput& input) {
  RevertStep step;
  const auto& previous = input.previous;
  if (input.specChanged) {
    return step;  // a new intent starts afresh
  }
  if (!input.takenBack) {
    // Nothing to put back: the series ends once stopped (someone gave the
    // fields back) and lapses after the window.
    if (previous && !previous->stopped() && withinWindow(*previous, input.now)) {
      step.record = previous;
    }
    return step;
  }
  if (previous && previous->stopped()) {
    step.record = previous;
    if (input.targetTemplate == previous->stoppedAtTemplate) {
      step.write = false;  // the same template since the stop
      return step;
    }
    // The pod template changed since the stop: perhaps the fix. One more
    // try; the next taking-back stops again.
    step.record->stoppedAtGeneration = 0;
    step.record->stoppedAtTemplate = 0;
    step.record->last = base::formatRfc3339(input.now);
    step.record->fields = input.fields;
    return step;
  }
  RevertRecord record;
  if (previous && withinWindow(*previous, input.now)) {
    record = *previous;
  } else {
    record.since = base::formatRfc3339(input.now);
  }
  ++record.count;
  record.last = base::formatRfc3339(input.now);
  record.fields = input.fields;
  if (record.count >= kStopAfterReverts) {
    record.stoppedAtGeneration = input.targetGeneration;
    record.stoppedAtTemplate = input.targetTemplate;
    step.write = false;
  }
  step.record = std::move(record);
  return step;
}

std::string describeStop(const RevertRecord& record, TargetKind kind, const std::string& name) {
  const std::string who =
      record.fieldManager.empty() ? "another writer" : "field manager " + record.fieldManager;
  std::string resource(base::nameOf(kind));
  std::transform(resource.begin(), resource.end(), resource.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return commaJoined(record.fields) + " of " + describeTarget(kind, name) + " taken back " +
         std::to_string(record.count) + " times since " + record.since + ", last by " + who +
         "; the operator stopped putting them back, so that the two do not fight. Fix: stop " +
         "that writer from setting these fields (remove them from the manifest it applies; "
         "Argo CD: ignoreDifferences with managedFieldsManagers [" +
         kFieldManager +
         "] and the sync option RespectIgnoreDifferences=true; no Replace=true), or set the "
         "PlacementPolicy's placeAt: Pods; a change of the " +
         std::string(base::nameOf(kind)) +
         "'s pod template makes the operator try once more, and a change of this spec starts "
         "afresh (" +
         (traitsOf(kind).runsOnce ? "create the " + std::string(base::nameOf(kind)) + " again"
                                  : "kubectl rollout restart " + resource + "/" + name) +
         ")";
}

}  // namespace gpuplacement::core
