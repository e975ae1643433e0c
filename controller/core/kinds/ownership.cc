#include "core/kinds/ownership.h"

#include <nlohmann/json.hpp>

#include "base/hash.h"
#include "base/json_access.h"
#include "core/catalog/quantity.h"

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;
using base::memberOf;
using base::stringMember;

std::optional<std::int32_t> sizeOf(const json& value) {
  if (!value.is_number_integer() || value.get<std::int64_t>() < 0 ||
      value.get<std::int64_t>() > INT32_MAX) {
    return std::nullopt;
  }
  return static_cast<std::int32_t>(value.get<std::int64_t>());
}

std::optional<OwnedGroupSize> groupSizeFromJson(const json& document) {
  if (!document.is_object() || !memberOf(document, "pointer").is_string()) {
    return std::nullopt;
  }
  OwnedGroupSize size;
  size.pointer = stringMember(document, "pointer");
  const auto set = sizeOf(memberOf(document, "set"));
  const auto was = sizeOf(memberOf(document, "was"));
  if (!set || !was) {
    return std::nullopt;
  }
  size.set = *set;
  size.was = *was;
  for (auto [key, into] : {std::pair{"minWas", &size.minWas}, std::pair{"maxWas", &size.maxWas}}) {
    if (const auto& value = memberOf(document, key); !value.is_null()) {
      *into = sizeOf(value);
      if (!*into) {
        return std::nullopt;
      }
    }
  }
  return size;
}

std::optional<OwnedFields> ownedFieldsFromJson(const json& document) {
  OwnedFields owned;
  if (!document.is_object()) {
    return std::nullopt;
  }
  owned.workload = stringMember(document, "workload");
  if (const auto& selector = memberOf(document, "nodeSelector"); selector.is_object()) {
    for (const auto& [key, value] : selector.items()) {
      if (!value.is_string()) {
        return std::nullopt;
      }
      owned.nodeSelector[key] = value.get<std::string>();
    }
  }
  if (const auto& tolerations = memberOf(document, "tolerations"); tolerations.is_array()) {
    for (const auto& item : tolerations) {
      if (!item.is_object()) {
        return std::nullopt;
      }
      owned.tolerations.push_back(tolerationFromJson(item));
    }
  }
  if (const auto& resources = memberOf(document, "resources"); resources.is_object()) {
    for (const auto& [container, names] : resources.items()) {
      if (!names.is_object()) {
        return std::nullopt;
      }
      for (const auto& [name, value] : names.items()) {
        owned.resources[container][name] = quantityTextOf(value);
      }
    }
  }
  if (const auto& pods = memberOf(document, "pods"); !pods.is_null()) {
    owned.pods = parsePodScheduling(pods);
    if (!owned.pods) {
      return std::nullopt;
    }
  }
  for (auto [key, into] :
       {std::pair{"spreadKey", &owned.spreadKey}, std::pair{"zoneMember", &owned.zoneGroup.member},
        std::pair{"zoneGroup", &owned.zoneGroup.group},
        std::pair{"networkDomainKey", &owned.networkDomainKey},
        std::pair{"claimTemplate", &owned.claimTemplate},
        std::pair{"claimContainer", &owned.claimContainer}}) {
    if (const auto& value = memberOf(document, key); !value.is_null()) {
      if (!value.is_string()) {
        return std::nullopt;
      }
      *into = value.get<std::string>();
    }
  }
  if (const auto& podSets = memberOf(document, "podSets"); !podSets.is_null()) {
    if (!podSets.is_array()) {
      return std::nullopt;
    }
    for (const auto& name : podSets) {
      if (!name.is_string()) {
        return std::nullopt;
      }
      owned.podSets.push_back(name.get<std::string>());
    }
  }
  if (const auto& size = memberOf(document, "groupSize"); !size.is_null()) {
    auto read = groupSizeFromJson(size);
    if (!read) {
      return std::nullopt;
    }
    owned.groupSize = std::move(read);
  }
  return owned;
}

}  // namespace

OwnershipRecord readOwnership(const std::optional<std::string>& annotation) {
  OwnershipRecord record;
  if (!annotation || annotation->empty()) {
    return record;  // an empty annotation records nothing
  }
  record.digest = base::stableHash(*annotation);
  auto fields = ownedFieldsFromJson(json::parse(*annotation, nullptr, /*allow_exceptions=*/false));
  record.form = fields ? OwnershipRecord::Form::Readable : OwnershipRecord::Form::Unreadable;
  if (fields) {
    record.fields = std::move(fields).value();
  }
  return record;
}

std::string serializeOwnedFields(const OwnedFields& owned) {
  json document = {{"workload", owned.workload}};
  if (!owned.nodeSelector.empty()) {
    document["nodeSelector"] = owned.nodeSelector;
  }
  if (!owned.tolerations.empty()) {
    json list = json::array();
    for (const auto& toleration : owned.tolerations) {
      list.push_back(tolerationToJson(toleration));
    }
    document["tolerations"] = std::move(list);
  }
  if (!owned.resources.empty()) {
    document["resources"] = owned.resources;
  }
  if (!owned.spreadKey.empty()) {
    document["spreadKey"] = owned.spreadKey;
  }
  if (!owned.zoneGroup.empty()) {
    document["zoneMember"] = owned.zoneGroup.member;
    document["zoneGroup"] = owned.zoneGroup.group;
  }
  if (!owned.networkDomainKey.empty()) {
    document["networkDomainKey"] = owned.networkDomainKey;
  }
  if (owned.pods) {
    document["pods"] = json::parse(serializePodScheduling(*owned.pods));
  }
  if (!owned.claimTemplate.empty()) {
    document["claimTemplate"] = owned.claimTemplate;
    document["claimContainer"] = owned.claimContainer;
  }
  if (!owned.podSets.empty()) {
    document["podSets"] = owned.podSets;
  }
  if (const auto& size = owned.groupSize) {
    json record = {{"pointer", size->pointer}, {"set", size->set}, {"was", size->was}};
    if (size->minWas) {
      record["minWas"] = *size->minWas;
    }
    if (size->maxWas) {
      record["maxWas"] = *size->maxWas;
    }
    document["groupSize"] = std::move(record);
  }
  return document.dump();
}

}  // namespace gpuplacement::core
