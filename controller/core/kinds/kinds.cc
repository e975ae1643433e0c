#include "core/kinds/adapters.h"

namespace gpuplacement::core {

const KindAdapter& adapterOf(TargetKind kind) {
  switch (kind) {
    case TargetKind::StatefulSet:
      return kinds::statefulSetAdapter();
    case TargetKind::Job:
      return kinds::jobAdapter();
    case TargetKind::RayCluster:
      return kinds::rayClusterAdapter();
    case TargetKind::RayService:
      return kinds::rayServiceAdapter();
    case TargetKind::LeaderWorkerSet:
      return kinds::leaderWorkerSetAdapter();
    case TargetKind::JobSet:
      return kinds::jobSetAdapter();
    case TargetKind::RayJob:
      return kinds::rayJobAdapter();
    case TargetKind::TrainJob:
      return kinds::trainJobAdapter();
    case TargetKind::Deployment:
      break;
  }
  return kinds::deploymentAdapter();
}

}  // namespace gpuplacement::core
