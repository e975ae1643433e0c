// A pod behind the operator's scheduling gate: its annotation
// gpuplacement.io/scheduling, its node selector and tolerations are
// anyone's to write (whoever may edit pods in the namespace). Whatever they
// hold, the release plan must remove the gate, keep the pod's own
// tolerations first and in order (a pod may only gain tolerations), never
// change a node-selector key the pod has, and a scheduling document that
// reads back must serialize to one that reads back the same.
#include <nlohmann/json.hpp>

#include "core/kinds/pod_scheduling.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplacement;
  using json = nlohmann::json;
  const auto document = json::parse(fuzz::text(data, size), nullptr, false);
  if (document.is_discarded()) {
    return 0;
  }
  if (const auto scheduling = core::parsePodScheduling(document)) {
    const auto again =
        core::parsePodScheduling(json::parse(core::serializePodScheduling(*scheduling)));
    fuzz::require(again == scheduling);
  }
  const auto pod = core::gatedPodFromJson(document);
  if (!pod) {
    return 0;
  }
  const auto release = core::planPodRelease(*pod);
  const auto& spec = release.patch["spec"];
  fuzz::require(spec["schedulingGates"] ==
                json::array({{{"$patch", "delete"}, {"name", core::kSchedulingGate}}}));
  if (spec.contains("nodeSelector")) {
    for (const auto& [key, value] : spec["nodeSelector"].items()) {
      fuzz::require(!pod->nodeSelector.count(key));
    }
  }
  if (spec.contains("tolerations")) {
    const auto& list = spec["tolerations"];
    fuzz::require(list.size() >= pod->tolerations.size());
    for (std::size_t i = 0; i < pod->tolerations.size(); ++i) {
      fuzz::require(list[i] == pod->tolerations[i]);  // sent back exactly as the pod has it
    }
  }
  return 0;
}
