#include <algorithm>
#include <array>

#include "base/json_access.h"
#include "core/kinds/adapters.h"
#include "core/kinds/pod_template_read.h"

// Kubeflow Trainer v2's TrainJob (trainer.kubeflow.org/v1alpha1): a
// training run made from a runtime (a ClusterTrainingRuntime such as
// torch-distributed: a JobSet template whose replicated job "node" runs the
// trainer) and the TrainJob's own fields, which the Trainer applies over
// that template into a JobSet of the TrainJob's name: spec.trainer
// (numNodes: the node job's parallelism; resourcesPerNode: its container
// "node"'s resources) and spec.podSpecOverrides (per target job: its pods'
// nodeSelector, tolerations, scheduling gates, merged into the runtime's
// pod spec). The runtime is shared and never written: the TrainJob holds no
// pod template, so its one pod set, the trainer's "node", is read from and
// written to those fields. The JobSet's webhook keeps its resources and
// parallelism as created; the Trainer's lets podSpecOverrides change only in
// a write that leaves the TrainJob suspended (its row: resumed apart).
namespace gpuplacement::core::kinds {
namespace {

using json = nlohmann::json;
using base::memberOf;
using base::stringMember;

// The replicated job of every runtime the Trainer ships that runs the
// trainer (constants.Node), and its container that resourcesPerNode sets.
constexpr const char* kNodeJob = "node";
// The controller that runs a TrainJob by default (spec.managedBy's
// default); MultiKueue's value runs it elsewhere.
constexpr std::string_view kTrainerController = "trainer.kubeflow.org/trainjob-controller";
// The labels the JobSet controller puts on each pod of the TrainJob's
// JobSet (named as the TrainJob).
constexpr const char* kJobSetNameLabel = "jobset.sigs.k8s.io/jobset-name";
constexpr const char* kReplicatedJobLabel = "jobset.sigs.k8s.io/replicatedjob-name";
// The fields of a podSpecOverrides entry that are a pod spec's, the same
// names: what a placement can write there.
constexpr std::array<const char*, 3> kOverrideFields = {"nodeSelector", "tolerations",
                                                        "schedulingGates"};
// Where the pod template read from the TrainJob keeps what its write
// needs of the object (PodTemplateState::raw, the template writes are made
// against): the index of the override entry that targets "node" (-1:
// none), the number of entries (-1: no list), whether that entry targets
// other jobs too, whether spec.trainer is there. The template patch leaves
// it as it is.
constexpr const char* kFacts = "trainJob";

// The podSpecOverrides entry whose targetJobs name `job`; -1 when none.
int overrideOf(const json& overrides, const std::string& job, bool& shared) {
  if (!overrides.is_array()) {
    return -1;
  }
  for (std::size_t i = 0; i < overrides.size(); ++i) {
    const auto& targets = memberOf(overrides[i], "targetJobs");
    if (!targets.is_array()) {
      continue;
    }
    const bool named = std::any_of(targets.begin(), targets.end(), [&job](const json& target) {
      return stringMember(target, "name") == job;
    });
    if (named) {
      shared = targets.size() > 1;
      return static_cast<int>(i);
    }
  }
  return -1;
}

// The trainer's pod template as the TrainJob states it: the override
// entry's scheduling fields and resourcesPerNode as the container "node".
json nodeTemplateOf(const json& spec, const std::string& name) {
  const auto& overrides = memberOf(spec, "podSpecOverrides");
  bool shared = false;
  const int index = overrideOf(overrides, kNodeJob, shared);
  json podSpec = json::object();
  if (index >= 0) {
    const auto& entry = overrides[static_cast<std::size_t>(index)];
    for (const char* field : kOverrideFields) {
      if (const auto& value = memberOf(entry, field); !value.is_null()) {
        podSpec[field] = value;
      }
    }
  }
  json container = {{"name", kNodeJob}};
  if (const auto& resources = memberOf(memberOf(spec, "trainer"), "resourcesPerNode");
      resources.is_object()) {
    container["resources"] = resources;
  }
  podSpec["containers"] = json::array({std::move(container)});
  return {{"metadata", {{"labels", {{kJobSetNameLabel, name}, {kReplicatedJobLabel, kNodeJob}}}}},
          {"spec", std::move(podSpec)},
          {kFacts,
           {{"override", index},
            {"overrides", overrides.is_array() ? static_cast<int>(overrides.size()) : -1},
            {"shared", shared},
            {"trainer", memberOf(spec, "trainer").is_object()}}}};
}

// The container lists differ in their one container's resources only.
bool onlyResourcesDiffer(const json& from, const json& to) {
  if (!from.is_array() || !to.is_array() || from.size() != 1 || to.size() != 1) {
    return false;
  }
  auto a = from[0];
  auto b = to[0];
  if (a.is_object()) {
    a.erase("resources");
  }
  if (b.is_object()) {
    b.erase("resources");
  }
  return a == b;
}

int factOf(const json& templ, const char* name) {
  const auto& value = memberOf(memberOf(templ, kFacts), name);
  return value.is_number_integer() ? value.get<int>() : -1;
}

// The index its override entry has, or will have once the write adds it.
int entryIndexOf(const json& templ) {
  const int index = factOf(templ, "override");
  return index >= 0 ? index : std::max(factOf(templ, "overrides"), 0);
}

// Its run: started once resumed (the Suspended condition turned False) or,
// created running, at its creation (the Trainer makes its JobSet running
// at once); ended by its Complete or Failed condition, which the Trainer
// copies from the JobSet's.
void readRun(const json& object, JobProgress& job) {
  const auto& status = memberOf(object, "status");
  bool everSuspended = false;
  for (const auto& condition : memberOf(status, "conditions")) {
    if (stringMember(condition, "type") == "Suspended") {
      everSuspended = true;
      if (stringMember(condition, "status") == "False") {
        job.startTime = stringMember(condition, "lastTransitionTime");
      }
    }
  }
  if (!job.suspended && !everSuspended) {
    job.startTime = stringMember(memberOf(object, "metadata"), "creationTimestamp");
  }
  readEnd(status, "Complete", job);
  // status.jobsStatus counts its Jobs where the Trainer writes it (v2.0.0
  // does not): otherwise a started run that has not ended counts as
  // running, its pods' own state (pending, unschedulable) read apart.
  std::int64_t jobs = 0;
  const auto& counts = memberOf(status, "jobsStatus");
  for (const auto& child : counts) {
    jobs += std::int64_t{countOf(memberOf(child, "active"))} + countOf(memberOf(child, "ready"));
  }
  if (counts.is_array() && !counts.empty()) {
    job.active = static_cast<std::int32_t>(std::min<std::int64_t>(jobs, INT32_MAX));
  } else {
    job.active = job.started() && job.end == JobProgress::End::Running ? 1 : 0;
  }
}

class TrainJobAdapter final : public RunOnceAdapter {
 public:
  void read(const json& object, TargetState& state) const override {
    const auto& spec = memberOf(object, "spec");
    const auto name = stringMember(memberOf(object, "metadata"), "name");
    const auto templ = nodeTemplateOf(spec, name);
    // numNodes unset: the runtime's mlPolicy.numNodes, which the TrainJob
    // does not show; taken as one, so a group across nodes asks for it.
    const auto nodes = countOf(memberOf(memberOf(spec, "trainer"), "numNodes"), 1);
    state.podSets.push_back({kNodeJob, "trainer", true, nodes,
                             "/spec/podSpecOverrides/" + std::to_string(entryIndexOf(templ))});
    state.podSetTemplates.push_back(podTemplateFrom(templ, true));
    static_cast<PodTemplateState&>(state) = state.podSetTemplates.front();
    // Its overrides take no affinity (Trainer v2.0.0's PodSpecOverride):
    // its pods' is its runtime's. Its JobSet's parallelism, numNodes,
    // cannot change once the JobSet is made.
    state.groups = {1, nodes, "spec.trainer.numNodes", {}, true, true};
    state.replicas = nodes;
    auto& job = state.job;
    readSuspension(object, job, kTrainerController);
    // Its pods are those of the JobSet the Trainer makes under its name.
    job.runsOn = name;
    readRun(object, job);
  }

  // Its pods name only its JobSet (the same name, no label of the
  // Trainer's): found through JobProgress::runsOn.
  std::optional<PodOwner> ownerOf(const json& pod) const override {
    (void)pod;
    return std::nullopt;
  }

  // A change of the trainer's nodeSelector, tolerations or scheduling gates
  // goes into its podSpecOverrides entry (added when it has none), each
  // field whole; of its container's resources, into
  // spec.trainer.resourcesPerNode. The entry is the one the Trainer reads
  // for "node", and must target only it.
  std::string templateOps(const TargetState& live, std::size_t index, const json& before,
                          const json& after, json& ops) const override {
    const auto& podSet = live.podSets.at(index);
    const auto& was = memberOf(before, "spec");
    const auto& will = memberOf(after, "spec");
    if (memberOf(before, "metadata") != memberOf(after, "metadata")) {
      return "a TrainJob's spec.podSpecOverrides carry no pod labels or annotations";
    }
    json fields = json::object();  // each changed override field: its value, or null
    std::optional<json> resources;
    json names = json::array();
    for (const auto* spec : {&was, &will}) {
      for (const auto& [key, value] : spec->items()) {
        (void)value;
        names.push_back(key);
      }
    }
    for (const auto& key : names) {
      const auto field = key.get<std::string>();
      const auto& from = memberOf(was, field.c_str());
      const auto& to = memberOf(will, field.c_str());
      if (from == to) {
        continue;
      }
      if (std::any_of(kOverrideFields.begin(), kOverrideFields.end(),
                      [&field](const char* name) { return field == name; })) {
        fields[field] = to;
      } else if (field == "containers" && onlyResourcesDiffer(from, to)) {
        resources = memberOf(to[0], "resources");
      } else {
        return "a TrainJob's spec.podSpecOverrides carry no " + field +
               " (only nodeSelector, tolerations and schedulingGates)";
      }
    }
    if (!fields.empty()) {
      if (memberOf(memberOf(before, kFacts), "shared") == json(true)) {
        return "spec.podSpecOverrides[" + std::to_string(factOf(before, "override")) +
               "] targets " + podSet.name +
               " together with other jobs, which the placement would reach too: give " +
               podSet.name + " an entry of its own";
      }
      const int entry = factOf(before, "override");
      if (entry >= 0) {
        const auto at = "/spec/podSpecOverrides/" + std::to_string(entry) + "/";
        for (const auto& [field, value] : fields.items()) {
          if (value.is_null()) {
            ops.push_back({{"op", "remove"}, {"path", at + field}});
          } else {
            ops.push_back({{"op", "add"}, {"path", at + field}, {"value", value}});
          }
        }
      } else {
        json added = {{"targetJobs", json::array({{{"name", podSet.name}}})}};
        for (const auto& [field, value] : fields.items()) {
          if (!value.is_null()) {
            added[field] = value;
          }
        }
        if (added.size() > 1 && factOf(before, "overrides") >= 0) {
          ops.push_back({{"op", "add"}, {"path", "/spec/podSpecOverrides/-"}, {"value", added}});
        } else if (added.size() > 1) {
          ops.push_back({{"op", "add"},
                         {"path", "/spec/podSpecOverrides"},
                         {"value", json::array({std::move(added)})}});
        }
      }
    }
    if (resources) {
      const bool trainer = memberOf(memberOf(before, kFacts), "trainer") == json(true);
      if (resources->is_null()) {
        if (trainer) {
          ops.push_back({{"op", "remove"}, {"path", "/spec/trainer/resourcesPerNode"}});
        }
      } else if (trainer) {
        ops.push_back(
            {{"op", "add"}, {"path", "/spec/trainer/resourcesPerNode"}, {"value", *resources}});
      } else {
        ops.push_back({{"op", "add"},
                       {"path", "/spec/trainer"},
                       {"value", {{"resourcesPerNode", *resources}}}});
      }
    }
    return "";
  }

  std::string fieldOf(const TargetState& live, std::size_t index,
                      std::string_view field) const override {
    constexpr std::string_view kPodSpec = "spec.template.spec.";
    const auto entry = "spec.podSpecOverrides[" +
                       std::to_string(entryIndexOf(live.podSetTemplates.at(index).raw)) + "]";
    if (!field.starts_with(kPodSpec)) {
      return entry;  // the pods' metadata, which no entry carries
    }
    const auto name = field.substr(kPodSpec.size());
    if (name.starts_with("containers")) {
      return "spec.trainer.resourcesPerNode";
    }
    return entry + "." + std::string(name);
  }
};

}  // namespace

const KindAdapter& trainJobAdapter() {
  static const TrainJobAdapter adapter;
  return adapter;
}

}  // namespace gpuplacement::core::kinds
