#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/time_format.h"
#include "core/plan/status.h"

// What the operator does when the fields it wrote to a target are
// taken back. Once is an edit; again and again is another controller
// writing the same fields (a GitOps tool with self-heal, a `kubectl
// replace` in a loop), and putting them back each time would be a tug of
// war that rolls the target twice per round. So the operator puts
// them back a bounded number of times, then stops and says who takes them
// (status.reverts and Applied=False, reason ManagerConflict); it tries once
// more whenever the target or the GpuWorkload's spec changes, since
// that may be the fix.
namespace gpuplacement::core {

// The takings-back in a row that stop the operator: it puts the fields
// back after the first kStopAfterReverts - 1 of them.
inline constexpr int kStopAfterReverts = 3;
// A taking-back longer than this after the last one starts a new series.
inline constexpr std::chrono::hours kRevertSeriesWindow{1};

struct RevertInput {
  std::optional<RevertRecord> previous;  // as the status holds it
  // The placement in force has not changed, yet the target no longer
  // carries it: someone took fields of it back.
  bool takenBack = false;
  bool specChanged = false;  // the GpuWorkload's spec changed since the placement
  std::int64_t targetGeneration = 0;
  std::uint64_t targetTemplate = 0;  // TargetState::templateDigest
  std::vector<std::string> fields;   // what the write would put back
  Timestamp now;
};

struct RevertStep {
  std::optional<RevertRecord> record;  // for the status
  bool write = true;                   // put the fields back now
};

RevertStep nextRevertStep(const RevertInput& input);

// The condition message of a stop: the fields, the other field manager and
// the fix.
std::string describeStop(const RevertRecord& record, TargetKind kind, const std::string& name);

}  // namespace gpuplacement::core
