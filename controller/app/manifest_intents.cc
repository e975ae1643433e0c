#include "app/manifest_intents.h"

#include <unordered_map>

#include "app/target_key.h"
#include "base/io/yaml_json.h"
#include "base/json_access.h"
#include "base/json_reader.h"
#include "core/kinds/target.h"

namespace gpuplacement::app {
namespace {

using base::Error;
using json = nlohmann::json;

}  // namespace

namespace {

// A manifest's object: its namespace (empty when the manifest names none)
// and name.
runtime::ObjectKey manifestKey(const json& document) {
  const auto& metadata = base::memberOf(document, "metadata");
  return {base::stringMember(metadata, "namespace"), base::stringMember(metadata, "name")};
}

// The targets a manifest file holds next to its GpuWorkloads: what the
// operator would read from the cluster.
using ManifestTargets = std::unordered_map<TargetKey, core::TargetState>;

// A GpuWorkload document as the operator would place it: with its
// target's replicas and pod requests when the file holds the target.
base::Result<NamedIntent> intentOfManifest(const json& document, const std::string& where,
                                           const core::Catalog& catalog,
                                           std::optional<int> replicas,
                                           const ManifestTargets& targets) {
  if (base::stringMember(document, "apiVersion") != "gpuplacement.io/v1alpha1") {
    return Error{where + ": apiVersion", "expected gpuplacement.io/v1alpha1"};
  }
  const auto key = manifestKey(document);
  const std::string name = key.str();
  const auto spec = document.find("spec");
  if (spec == document.end()) {
    return Error{where + " (" + name + "): spec", "required"};
  }
  auto parsed = core::parseGpuWorkloadSpec(*spec, catalog);
  if (!parsed) {
    return Error{where + " (" + name + "): " + parsed.error().field, parsed.error().message};
  }
  // As the operator would read it: the target's replicas, surge and pod
  // requests when the file holds the target; --replicas over them.
  const auto& ref = parsed->targetRef;
  const auto target = targets.find({ref.kind, {key.ns, ref.name}});
  auto intent = core::intentOf(*parsed, target == targets.end() ? nullptr : &target->second);
  if (replicas) {
    intent.replicas = *replicas;
  }
  const auto& annotations = base::memberOf(base::memberOf(document, "metadata"), "annotations");
  if (const auto given = base::stringMember(annotations, kReplicasAnnotation); !given.empty()) {
    const auto count = std::atoi(given.c_str());
    if (count < 1 || std::to_string(count) != given) {
      return Error{where + " (" + name + "): metadata.annotations." + kReplicasAnnotation,
                   "must be a whole number of replicas, at least 1"};
    }
    intent.replicas = count;
  }
  return NamedIntent{name, std::move(intent),
                     base::stringMember(annotations, kRationaleAnnotation)};
}

}  // namespace

base::Result<std::vector<NamedIntent>> intentsFromManifests(const std::string& path,
                                                            const core::Catalog& catalog,
                                                            std::optional<int> replicas) {
  auto text = base::readTextFile(path);
  if (!text) {
    return Error{"-f", text.error().field + ": " + text.error().message};
  }
  auto documents = base::parseYamlDocuments(*text, path);
  if (!documents) {
    return documents.error();
  }
  // The targets first: a GpuWorkload may come before the Job it places.
  ManifestTargets targets;
  std::vector<std::size_t> workloads;
  for (std::size_t i = 0; i < documents->size(); ++i) {
    const auto& document = (*documents)[i];
    const std::string where = path + " document " + std::to_string(i + 1);
    if (!document.is_object()) {
      return Error{where, "is not an object"};
    }
    const auto kind = base::stringMember(document, "kind");
    const auto apiVersion = base::stringMember(document, "apiVersion");
    if (kind == "GpuWorkload") {
      workloads.push_back(i);
    } else if (const auto target = core::targetKindNamed(kind);
               target && apiVersion == core::apiVersionOf(*target)) {
      targets[{*target, manifestKey(document)}] = core::targetFromJson(*target, document);
    } else if (apiVersion.rfind("gpuplacement.io/", 0) == 0) {
      return Error{where, "is not a GpuWorkload (kind: GpuWorkload)"};
    }
    // Anything else a bundle holds (Services, ConfigMaps) is not read.
  }
  std::vector<NamedIntent> intents;
  for (const auto i : workloads) {
    auto intent = intentOfManifest((*documents)[i], path + " document " + std::to_string(i + 1),
                                   catalog, replicas, targets);
    if (!intent) {
      return intent.error();
    }
    intents.push_back(std::move(intent).value());
  }
  if (intents.empty()) {
    return Error{"-f", path + " holds no GpuWorkload"};
  }
  return intents;
}

}  // namespace gpuplacement::app
