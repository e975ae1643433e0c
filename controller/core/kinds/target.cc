#include "core/kinds/target.h"

#include "base/json_access.h"
#include "core/catalog/quantity.h"
#include "core/kinds/kind_adapter.h"

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;
using base::integerOf;
using base::memberOf;
using base::stringMember;

// Whether a managedFields entry's fieldsV1 owns anything under
// spec.template.
bool ownsTemplate(const json& entry) {
  return memberOf(memberOf(memberOf(entry, "fieldsV1"), "f:spec"), "f:template").is_object();
}

}  // namespace

bool TargetState::rolledOut() const {
  return adapterOf(kind).rolledOut(*this);
}

bool TargetState::templateMutable() const {
  return adapterOf(kind).templateMutable(*this);
}

bool groupSizeStillOurs(const TargetState& target, const OwnedGroupSize& owned) {
  const auto& groups = target.groups;
  return groups.sizePointer == owned.pointer && groups.size == owned.set &&
         (!owned.minWas || groups.bounds.min == owned.set) &&
         (!owned.maxWas || groups.bounds.max == owned.set);
}

std::int32_t teamGroupSize(const TargetState& target) {
  const auto& owned = target.ownership.fields.groupSize;
  if (target.ownership.form == OwnershipRecord::Form::Readable && owned &&
      groupSizeStillOurs(target, *owned)) {
    return owned->was;
  }
  return target.groups.size;
}

TargetState targetFromJson(TargetKind kind, const json& object) {
  TargetState state;
  state.kind = kind;
  const auto& metadata = memberOf(object, "metadata");
  state.uid = stringMember(metadata, "uid");
  state.generation = integerOf(memberOf(metadata, "generation"));
  const auto& annotations = memberOf(metadata, "annotations");
  state.annotated = annotations.is_object();
  if (const auto& owned = memberOf(annotations, kOwnedFieldsAnnotation); owned.is_string()) {
    state.ownership = readOwnership(owned.get<std::string>());
  }
  adapterOf(kind).read(object, state);
  return state;
}

std::string lastTemplateWriter(const json& object, const std::string& self) {
  const auto& entries = memberOf(memberOf(object, "metadata"), "managedFields");
  if (!entries.is_array()) {
    return "";
  }
  const json* latest = nullptr;
  for (const auto& entry : entries) {
    // RFC 3339 times of one server compare as text; the last of equals wins.
    if (stringMember(entry, "manager") != self && stringMember(entry, "subresource").empty() &&
        ownsTemplate(entry) &&
        (!latest || stringMember(entry, "time") >= stringMember(*latest, "time"))) {
      latest = &entry;
    }
  }
  if (!latest) {
    return "";
  }
  return stringMember(*latest, "manager") + " (" + stringMember(*latest, "operation") + ")";
}

PodRequests teamPodRequests(const TargetState& target) {
  PodRequests total;
  const auto& owned = target.ownership.fields.resources;
  for (const auto& container : target.containers) {
    const auto ours = owned.find(container.name);
    for (const char* resource : {"cpu", "memory"}) {
      if (ours != owned.end() && ours->second.count(resource)) {
        continue;
      }
      auto value = container.requests.find(resource);
      if (value == container.requests.end()) {
        value = container.limits.find(resource);
        if (value == container.limits.end()) {
          continue;
        }
      }
      const auto milli = parseResourceMilli(value->second);
      if (!milli) {
        continue;  // the API server refuses such a quantity; nothing to count
      }
      if (resource == std::string_view("cpu")) {
        total.cpu += static_cast<double>(*milli) / 1000;
      } else {
        total.memoryGiB += static_cast<double>(*milli) / 1000 / (1024.0 * 1024 * 1024);
      }
    }
  }
  return total;
}

}  // namespace gpuplacement::core
