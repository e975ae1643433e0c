#include "core/plan/group_size_patch.h"

#include <algorithm>
#include <cctype>

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;

// "spec.workerGroupSpecs[0].maxReplicas" of "/spec/workerGroupSpecs/0/maxReplicas".
std::string fieldOfPointer(const std::string& pointer) {
  std::string field;
  std::size_t start = 1;
  while (start <= pointer.size()) {
    const auto end = std::min(pointer.find('/', start), pointer.size());
    const auto segment = pointer.substr(start, end - start);
    const bool index = !segment.empty() && std::isdigit(static_cast<unsigned char>(segment[0]));
    field += index ? "[" + segment + "]" : (field.empty() ? "" : ".") + segment;
    start = end + 1;
  }
  return field;
}

void write(GroupSizePatch& plan, const std::string& pointer, std::int32_t value) {
  // "add" replaces a member that is there and adds one that is not (a
  // bound left to its default in an object not read from the server).
  plan.ops.push_back({{"op", "add"}, {"path", pointer}, {"value", value}});
  plan.fields.push_back(fieldOfPointer(pointer));
}

// One bound: moved to `wanted` where the team's would clamp it, else the
// team's (put back when the operator had moved it and it is still so).
void planBound(GroupSizePatch& plan, OwnedGroupSize& owned, std::optional<std::int32_t>& was,
               std::int32_t live, const std::string& pointer, std::int32_t previousSet,
               bool clamps) {
  if (pointer.empty()) {
    return;
  }
  const std::int32_t team = was.value_or(live);
  if (clamps) {
    was = team;
    if (live != owned.set) {
      write(plan, pointer, owned.set);
    }
    return;
  }
  if (was && live == previousSet) {
    write(plan, pointer, *was);
  }
  was.reset();
}

void putBack(GroupSizePatch& plan, const TargetState& live, const OwnedGroupSize& owned) {
  write(plan, owned.pointer, owned.was);
  const auto& bounds = live.groups.bounds;
  if (owned.minWas) {
    write(plan, bounds.minPointer, *owned.minWas);
  }
  if (owned.maxWas) {
    write(plan, bounds.maxPointer, *owned.maxWas);
  }
}

}  // namespace

GroupSizePatch planGroupSize(const TargetState& live, std::int32_t wanted) {
  GroupSizePatch plan;
  const auto& groups = live.groups;
  const auto& recorded = live.ownership.fields.groupSize;
  const bool ours = recorded && groupSizeStillOurs(live, *recorded);
  if (wanted <= 0 || groups.sizePointer.empty()) {
    if (ours) {
      putBack(plan, live, *recorded);
    }
    return plan;
  }
  const bool sameField = recorded && recorded->pointer == groups.sizePointer;
  if (!sameField && groups.size == wanted) {
    return plan;  // the team's own size: theirs, and nothing to record
  }
  if (sameField && !ours && groups.size == wanted) {
    return plan;  // someone wrote the size the placement needs: theirs now
  }
  // Ours to write, or to put back where someone took it (a revert, counted
  // and stopped as any other: core/plan/reverts.h).
  OwnedGroupSize owned = sameField ? *recorded : OwnedGroupSize{groups.sizePointer, 0, groups.size};
  const std::int32_t previousSet = owned.set;
  owned.set = wanted;
  if (groups.size != wanted) {
    write(plan, groups.sizePointer, wanted);
  }
  const auto& bounds = groups.bounds;
  const std::int32_t teamMin = owned.minWas.value_or(bounds.min);
  const std::int32_t teamMax = owned.maxWas.value_or(bounds.max);
  planBound(plan, owned, owned.minWas, bounds.min, bounds.minPointer, previousSet,
            teamMin > wanted);
  planBound(plan, owned, owned.maxWas, bounds.max, bounds.maxPointer, previousSet,
            teamMax < wanted);
  plan.owned = std::move(owned);
  return plan;
}

}  // namespace gpuplacement::core
