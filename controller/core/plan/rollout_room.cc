#include "core/plan/rollout_room.h"

#include <string>

namespace gpuplacement::core {
namespace {

std::string podsText(int count) {
  return std::to_string(count) + (count == 1 ? " pod" : " pods");
}

}  // namespace

std::optional<std::string> rolloutStall(const RolloutRoomInput& input) {
  const TargetState* target = input.target;
  const Placement* wanted = input.wanted;
  if (!target || !wanted || !input.view || !input.catalog ||
      target->kind != TargetKind::Deployment || target->recreate || target->unavailable > 0 ||
      target->replicas <= 0 || wanted->tier == Tier::CPU ||
      input.view->capacity.source != CapacitySource::Nodes) {
    return std::nullopt;
  }
  const int instance = input.catalog->indexOf(wanted->instanceType);
  const Offer* offer = input.view->capacity.offer(instance, wanted->capacityType);
  // No node of the type at all is the decision's to weigh (it would not be
  // chosen); a NodePool that may launch one launches it for the surge.
  if (instance < 0 || !offer || offer->nodes == 0 || !offer->nodesOnly()) {
    return std::nullopt;
  }
  const auto replica = replicaRequestsOf(wanted->acceleratorCount, input.podCpu, wanted->cpuRequest,
                                         input.podMemoryGiB, wanted->memoryRequestGiB,
                                         wanted->migProfile, wanted->timeSlices > 0);
  // The old pods keep what they hold until their replacements are ready:
  // nothing of theirs is given back.
  if (offer->replicasWithRoom(replica, 1) >= 1) {
    return std::nullopt;
  }
  const std::string type = wanted->instanceType;
  std::string message = "a rollout of Deployment " + input.targetName + " would not finish: ";
  message += "its maxSurge lets " + podsText(target->surge) + " start beside the " +
             podsText(target->replicas) +
             " running and its maxUnavailable 0 takes none down first, ";
  message += "and no node of " + type + " has room for one (" + std::to_string(offer->nodes) +
             (offer->nodes == 1 ? " node, " : " nodes, ") + std::to_string(offer->largestIdle) +
             " device" + (offer->largestIdle == 1 ? "" : "s") + " free on any one): ";
  message += "the change is not written, so no pod waits Pending beside the one serving. ";
  message += "It goes through with a node more of " + type +
             ", with maxUnavailable: 1 (one replica down while it rolls), or with strategy "
             "Recreate";
  return message;
}

}  // namespace gpuplacement::core
