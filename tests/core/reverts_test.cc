#include "core/plan/reverts.h"

#include <doctest/doctest.h>

namespace gpuplacement::core {
namespace {

Timestamp at(const char* text) {
  return *base::parseRfc3339(text);
}

const std::vector<std::string> kFields = {"spec.template.spec.tolerations"};

// `generation` stands for the pod template too: a new generation, a new
// template (a new commit), unless said otherwise.
RevertInput takenBack(std::optional<RevertRecord> previous, const char* now,
                      std::int64_t generation = 10) {
  return {std::move(previous),
          true,
          false,
          generation,
          static_cast<std::uint64_t>(generation * 1000),
          kFields,
          at(now)};
}

}  // namespace

TEST_CASE("fields taken back are put back twice, and the third time the operator stops") {
  auto first = nextRevertStep(takenBack(std::nullopt, "2026-11-25T10:00:00Z", 10));
  CHECK(first.write);
  REQUIRE(first.record);
  CHECK(first.record->count == 1);
  CHECK(first.record->since == "2026-11-25T10:00:00Z");
  CHECK(first.record->fields == kFields);
  CHECK_FALSE(first.record->stopped());

  auto second = nextRevertStep(takenBack(first.record, "2026-11-25T10:00:20Z", 12));
  CHECK(second.write);
  CHECK(second.record->count == 2);
  CHECK(second.record->since == "2026-11-25T10:00:00Z");

  auto third = nextRevertStep(takenBack(second.record, "2026-11-25T10:00:40Z", 14));
  CHECK_FALSE(third.write);
  CHECK(third.record->count == kStopAfterReverts);
  CHECK(third.record->stoppedAtGeneration == 14);
  CHECK(third.record->stoppedAtTemplate == 14000);
  CHECK(third.record->last == "2026-11-25T10:00:40Z");

  SUBCASE("stopped, nothing changes: no write, for as long as it lasts") {
    const auto held = nextRevertStep(takenBack(third.record, "2026-11-25T18:00:00Z", 14));
    CHECK_FALSE(held.write);
    CHECK(held.record == third.record);
  }
  SUBCASE("stopped, the same manifest replaced again: a new generation, the same template") {
    auto replaced = takenBack(third.record, "2026-11-25T18:00:00Z", 15);
    replaced.targetTemplate = 14000;
    const auto held = nextRevertStep(replaced);
    CHECK_FALSE(held.write);
  }
  SUBCASE("the Deployment changed since the stop: one more try, then stopped again") {
    const auto retry = nextRevertStep(takenBack(third.record, "2026-11-25T18:00:00Z", 15));
    CHECK(retry.write);
    CHECK_FALSE(retry.record->stopped());
    const auto again = nextRevertStep(takenBack(retry.record, "2026-11-25T18:00:05Z", 17));
    CHECK_FALSE(again.write);
    CHECK(again.record->stoppedAtGeneration == 17);
  }
  SUBCASE("someone gave the fields back: the series ends") {
    RevertInput quiet{third.record, false, false, 14, 14000, {}, at("2026-11-25T11:00:00Z")};
    CHECK_FALSE(nextRevertStep(quiet).record);
  }
  SUBCASE("a new spec starts afresh, writing") {
    auto changed = takenBack(third.record, "2026-11-25T11:00:00Z", 14);
    changed.specChanged = true;
    const auto step = nextRevertStep(changed);
    CHECK(step.write);
    CHECK_FALSE(step.record);
  }
}

TEST_CASE("takings-back more than an hour apart are edits, not a fight") {
  const auto first = nextRevertStep(takenBack(std::nullopt, "2026-11-25T10:00:00Z"));
  const auto later = nextRevertStep(takenBack(first.record, "2026-11-25T11:00:01Z"));
  CHECK(later.write);
  CHECK(later.record->count == 1);
  CHECK(later.record->since == "2026-11-25T11:00:01Z");
  // Within the hour the series stands, also between takings-back.
  RevertInput quiet{first.record, false, false, 10, 10000, {}, at("2026-11-25T10:30:00Z")};
  CHECK(nextRevertStep(quiet).record == first.record);
  quiet.now = at("2026-11-25T11:30:00Z");
  CHECK_FALSE(nextRevertStep(quiet).record);
}

TEST_CASE("the stop names the fields, the other field manager and the fix") {
  RevertRecord record;
  record.count = 3;
  record.since = "2026-11-25T10:00:00Z";
  record.fields = {"spec.template.spec.nodeSelector", "spec.template.spec.tolerations"};
  record.fieldManager = "kustomize-controller (Apply)";
  const auto message = describeStop(record, TargetKind::Deployment, "llama-chat");
  for (const char* part :
       {"spec.template.spec.nodeSelector, spec.template.spec.tolerations of Deployment llama-chat",
        "taken back 3 times", "field manager kustomize-controller (Apply)",
        "managedFieldsManagers [gpu-placement-operator]", "RespectIgnoreDifferences=true",
        "placeAt: Pods", "kubectl rollout restart deployment/llama-chat"}) {
    CAPTURE(part);
    CHECK(message.find(part) != std::string::npos);
  }
  record.fieldManager.clear();
  CHECK(describeStop(record, TargetKind::Deployment, "x").find("last by another writer") !=
        std::string::npos);
}

}  // namespace gpuplacement::core
