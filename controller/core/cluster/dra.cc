#include "core/cluster/dra.h"

#include <cstdio>

#include "base/hash.h"
#include "base/json_access.h"

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;
using base::memberOf;
using base::stringMember;

// A device attribute's string value, named with or without the driver's
// domain (the API accepts both; drivers publish the short form).
std::string attributeOf(const json& attributes, const std::string& driver, const char* name) {
  for (const std::string& key : {std::string(name), driver + "/" + name}) {
    const auto& value = memberOf(memberOf(attributes, key.c_str()), "string");
    if (value.is_string()) {
      return value.get<std::string>();
    }
  }
  return "";
}

// What one device counts as; nothing for a driver placement does not know.
Devices countOf(const std::string& driver, const json& device) {
  Devices devices;
  const auto& attributes = memberOf(device, "attributes");
  if (driver == kNvidiaDriver) {
    const auto type = attributeOf(attributes, driver, "type");
    if (type == "mig") {
      const auto profile = attributeOf(attributes, driver, "profile");
      if (!profile.empty()) {
        devices.mig.emplace_back(profile, 1);
      }
    } else if (type.empty() || type == "gpu") {
      devices.gpus = 1;
    }
  } else if (driver == kNeuronDriver) {
    devices.neuronDevices = 1;
  }
  return devices;
}

// CEL's string literal: single-quoted, with quotes and backslashes escaped.
std::string celString(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'' || c == '\\') {
      quoted += '\\';
    }
    quoted += c;
  }
  return quoted + "'";
}

}  // namespace

ResourceSliceView resourceSliceFromJson(const json& object) {
  ResourceSliceView slice;
  const auto& spec = memberOf(object, "spec");
  slice.node = stringMember(spec, "nodeName");
  const auto driver = stringMember(spec, "driver");
  const auto pool = stringMember(memberOf(spec, "pool"), "name");
  const auto& devices = memberOf(spec, "devices");
  if (slice.node.empty() || !devices.is_array()) {
    return slice;
  }
  for (const auto& device : devices) {
    auto counted = countOf(driver, device);
    if (counted == Devices{}) {
      continue;
    }
    slice.devices += counted;
    slice.each.emplace_back(DeviceRef{driver, pool, stringMember(device, "name")},
                            std::move(counted));
  }
  return slice;
}

ClaimAllocation claimAllocationFromJson(const json& object) {
  ClaimAllocation allocation;
  const auto& results =
      memberOf(memberOf(memberOf(memberOf(object, "status"), "allocation"), "devices"), "results");
  if (!results.is_array()) {
    return allocation;
  }
  for (const auto& result : results) {
    allocation.devices.emplace_back(stringMember(result, "driver"), stringMember(result, "pool"),
                                    stringMember(result, "device"));
  }
  return allocation;
}

DeviceClaim deviceClaimFor(const AcceleratorSpec& accelerator, Tier tier, int count,
                           const std::string& migProfile) {
  DeviceClaim claim;
  claim.count = std::max(count, 1);
  const std::string attributes = "device.attributes['" + std::string(kNvidiaDriver) + "'].";
  if (tier == Tier::Trainium || tier == Tier::Inferentia) {
    claim.deviceClassName = kNeuronDeviceClass;  // the node's type selects the model
  } else if (!migProfile.empty()) {
    claim.deviceClassName = kMigDeviceClass;
    claim.selector = attributes + "profile == " + celString(migProfile);
  } else {
    claim.deviceClassName = kGpuDeviceClass;
    if (!accelerator.productName.empty()) {
      claim.selector = attributes + "productName == " + celString(accelerator.productName);
    }
  }
  return claim;
}

std::string deviceClassResourceName(const std::string& deviceClass) {
  return "deviceclass.resource.kubernetes.io/" + deviceClass;
}

std::string claimTemplateName(const std::string& workload, const DeviceClaim& claim) {
  const auto digest = base::stableHash(claim.deviceClassName + "\n" + claim.selector + "\n" +
                                       std::to_string(claim.count));
  char suffix[9];
  std::snprintf(suffix, sizeof suffix, "%08llx",
                static_cast<unsigned long long>(digest & 0xffffffffULL));
  // A DNS subdomain: at most 253 characters, the workload's name already one.
  return workload.substr(0, 253 - 10) + "-" + suffix;
}

json claimTemplateObject(const std::string& ns, const std::string& name,
                         const std::string& workload, const std::string& ownerUid,
                         const DeviceClaim& claim) {
  json exactly = {{"deviceClassName", claim.deviceClassName},
                  {"allocationMode", "ExactCount"},
                  {"count", claim.count}};
  if (!claim.selector.empty()) {
    exactly["selectors"] = json::array({{{"cel", {{"expression", claim.selector}}}}});
  }
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaimTemplate"},
          {"metadata",
           {{"name", name},
            {"namespace", ns},
            {"labels",
             {{kClaimTemplateLabel, workload},
              {"app.kubernetes.io/managed-by", "gpu-placement-operator"}}},
            {"ownerReferences",
             {{{"apiVersion", "gpuplacement.io/v1alpha1"},
               {"kind", "GpuWorkload"},
               {"name", workload},
               {"uid", ownerUid}}}}}},
          {"spec",
           {{"spec",
             {{"devices",
               {{"requests", json::array({{{"name", "devices"}, {"exactly", exactly}}})}}}}}}}};
}

}  // namespace gpuplacement::core
