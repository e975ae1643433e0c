#include "core/catalog/catalog.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "base/json_reader.h"
#include "core/catalog/quantity.h"

namespace gpuplacement::core {

using base::ObjectReader;
namespace {

using json = nlohmann::json;

Result<EnumSet<Precision>> parsePrecisions(const ObjectReader& entry) {
  auto list = entry.enumList<Precision>("precisions");
  if (!list) {
    return list.error();
  }
  if (list->empty()) {
    return Error{entry.fieldPath("precisions"),
                 "required: the precisions it runs natively (" + allowedValues<Precision>() + ")"};
  }
  EnumSet<Precision> set;
  for (Precision precision : *list) {
    set.insert(precision);
  }
  return set;
}

// migProfiles: each profile's name and fractions, smallest first. The
// fractions are checked against what MIG can cut (eighths of memory,
// sevenths of SMs) so that a typo cannot offer more GPU than there is.
Result<std::vector<MigProfile>> parseMigProfiles(const ObjectReader& entry) {
  std::vector<MigProfile> profiles;
  if (!entry.has("migProfiles")) {
    return profiles;
  }
  const auto& list = entry.at("migProfiles");
  if (!list.is_array()) {
    return Error{entry.fieldPath("migProfiles"), "must be a list of profiles"};
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    ObjectReader item(list[i], entry.fieldPath("migProfiles") + "[" + std::to_string(i) + "]");
    if (auto ok = item.requireObject(); !ok) {
      return ok.error();
    }
    if (auto ok = item.onlyKeys({"name", "memoryEighths", "computeSevenths", "perGpu"}); !ok) {
      return ok.error();
    }
    auto name = item.string("name");
    auto memory = item.integer("memoryEighths", 1, 8);
    auto compute = item.integer("computeSevenths", 1, 7);
    auto perGpu = item.integer("perGpu", 1, 7);
    for (const Error* error :
         {name ? nullptr : &name.error(), memory ? nullptr : &memory.error(),
          compute ? nullptr : &compute.error(), perGpu ? nullptr : &perGpu.error()}) {
      if (error) {
        return *error;
      }
    }
    if (*compute * *perGpu > 7 || *memory * *perGpu > 8) {
      return Error{item.fieldPath("perGpu"),
                   "more instances than one GPU's 7 compute and 8 memory slices hold"};
    }
    if (name->find_first_of(" /") != std::string::npos || name->empty()) {
      return Error{item.fieldPath("name"), "must be a profile name like 1g.10gb"};
    }
    if (!profiles.empty() && *memory < profiles.back().memoryEighths) {
      return Error{item.fieldPath("memoryEighths"), "profiles are listed smallest first"};
    }
    profiles.push_back(
        {*name, static_cast<int>(*memory), static_cast<int>(*compute), static_cast<int>(*perGpu)});
  }
  return profiles;
}

Result<AcceleratorSpec> parseAccelerator(const json& value, std::size_t index) {
  ObjectReader reader(value, "accelerators[" + std::to_string(index) + "]");
  if (auto ok = reader.requireObject(); !ok) {
    return ok.error();
  }
  auto name = reader.string("name");
  if (!name) {
    return name.error();
  }
  // From here on, errors name the accelerator rather than its position.
  ObjectReader entry(value, "accelerators[" + *name + "]");
  if (auto ok = entry.onlyKeys({"name", "vendor", "generation", "memoryGiB", "ec2MemoryMiB",
                                "fp16Tflops", "fp32Tflops", "fp8Tflops", "memoryBandwidthGBs",
                                "precisions", "fractional", "karpenterName", "gpuProduct",
                                "productName", "migProfiles", "sources"});
      !ok) {
    return ok.error();
  }
  AcceleratorSpec spec;
  spec.name = *name;
  auto vendor = entry.string("vendor");
  auto generation = entry.optionalString("generation");
  auto memory = entry.number("memoryGiB", 0.5, 4096);
  auto ec2Memory = entry.optionalInteger("ec2MemoryMiB", 512, 4'194'304);
  auto tflops = entry.number("fp16Tflops", 0.001, 1e6);
  auto fp32 = entry.optionalNumber("fp32Tflops", 0.001, 1e6);
  auto fp8 = entry.optionalNumber("fp8Tflops", 0.001, 1e6);
  auto bandwidth = entry.number("memoryBandwidthGBs", 1, 1e6);
  auto precisions = parsePrecisions(entry);
  auto fractional = entry.optionalBool("fractional");
  auto karpenter = entry.optionalString("karpenterName");
  auto product = entry.optionalString("gpuProduct");
  auto productName = entry.optionalString("productName");
  auto mig = parseMigProfiles(entry);
  for (const Error* error :
       {vendor ? nullptr : &vendor.error(), generation ? nullptr : &generation.error(),
        memory ? nullptr : &memory.error(), ec2Memory ? nullptr : &ec2Memory.error(),
        tflops ? nullptr : &tflops.error(), fp32 ? nullptr : &fp32.error(),
        fp8 ? nullptr : &fp8.error(), bandwidth ? nullptr : &bandwidth.error(),
        precisions ? nullptr : &precisions.error(), fractional ? nullptr : &fractional.error(),
        karpenter ? nullptr : &karpenter.error(), product ? nullptr : &product.error(),
        mig ? nullptr : &mig.error(), productName ? nullptr : &productName.error()}) {
    if (error) {
      return *error;
    }
  }
  spec.vendor = *vendor;
  spec.generation = generation->value_or("");
  spec.memoryGiB = *memory;
  spec.ec2MemoryMiB = static_cast<int>(ec2Memory->value_or(0));
  spec.fp16Tflops = *tflops;
  spec.fp32Tflops = fp32->value_or(0);
  spec.fp8Tflops = *fp8;
  spec.memoryBandwidthGBs = *bandwidth;
  spec.precisions = *precisions;
  spec.fractional = fractional->value_or(false);
  spec.karpenterName = karpenter->value_or("");
  spec.gpuProduct = product->value_or("");
  spec.productName = productName->value_or("");
  spec.migProfiles = std::move(*mig);
  return spec;
}

// Powers of two up to `count`: how NVIDIA tensor parallelism splits a model.
std::vector<int> powersOfTwoUpTo(int count) {
  std::vector<int> counts;
  for (int n = 1; n <= count; n *= 2) {
    counts.push_back(n);
  }
  return counts;
}

Result<std::vector<int>> parseAllowedCounts(const ObjectReader& entry, int acceleratorCount) {
  if (!entry.has("allowedAcceleratorCounts")) {
    return powersOfTwoUpTo(acceleratorCount);
  }
  const auto& counts = entry.at("allowedAcceleratorCounts");
  if (!counts.is_array() || counts.empty()) {
    return Error{entry.fieldPath("allowedAcceleratorCounts"), "must be a list of counts"};
  }
  std::vector<int> allowed;
  for (const auto& item : counts) {
    if (!item.is_number_integer() || item.get<int>() < 1 || item.get<int>() > acceleratorCount) {
      return Error{entry.fieldPath("allowedAcceleratorCounts"),
                   "each count must be between 1 and acceleratorCount (" +
                       std::to_string(acceleratorCount) + ")"};
    }
    allowed.push_back(item.get<int>());
  }
  std::sort(allowed.begin(), allowed.end());
  allowed.erase(std::unique(allowed.begin(), allowed.end()), allowed.end());
  return allowed;
}

// Prices: a number, or null for "not sold that way"; the key is required
// so a forgotten price is an error, not a free instance.
Status parsePrices(const ObjectReader& entry, InstanceType& instance) {
  for (const char* key : {"onDemand", "spot"}) {
    if (!entry.value().contains(key)) {
      return Error{entry.fieldPath(key), "required (a price per instance-hour, or null)"};
    }
    auto price = entry.optionalNumber(key, 0, 10'000);
    if (!price) {
      return price.error();
    }
    (std::string_view(key) == "onDemand" ? instance.onDemand : instance.spot) = *price;
  }
  return Ok{};
}

// A CPU instance's whole-instance estimates.
Status parseCpu(const ObjectReader& entry, InstanceType& instance) {
  if (entry.has("accelerator") || entry.has("acceleratorCount")) {
    return Error{entry.fieldPath("accelerator"), "a CPU instance has no accelerator"};
  }
  auto tflops = entry.number("fp16Tflops", 0.001, 1e4);
  auto bandwidth = entry.number("memoryBandwidthGBs", 0.1, 1e5);
  if (!tflops) {
    return tflops.error();
  }
  if (!bandwidth) {
    return bandwidth.error();
  }
  instance.cpuTflops = *tflops;
  instance.cpuMemoryBandwidthGBs = *bandwidth;
  return Ok{};
}

// An accelerated instance's accelerator, its count and the split counts.
Status parseAccelerated(const ObjectReader& entry, const Catalog& catalog, InstanceType& instance) {
  auto acceleratorName = entry.string("accelerator");
  if (!acceleratorName) {
    return acceleratorName.error();
  }
  instance.accelerator = catalog.acceleratorIndex(*acceleratorName);
  if (instance.accelerator < 0) {
    return Error{entry.fieldPath("accelerator"),
                 "\"" + *acceleratorName + "\" is not in the accelerators list"};
  }
  const bool awsChip = catalog.accelerators[instance.accelerator].vendor == "AWS";
  if (awsChip != (instance.tier == Tier::Trainium || instance.tier == Tier::Inferentia)) {
    return Error{entry.fieldPath("tier"), "tier " + std::string(nameOf(instance.tier)) +
                                              " does not match accelerator " + *acceleratorName};
  }
  auto count = entry.optionalInteger("acceleratorCount", 1, 64);
  if (!count || !*count) {
    return count ? Error{entry.fieldPath("acceleratorCount"), "required"} : count.error();
  }
  instance.acceleratorCount = static_cast<int>(**count);
  auto allowed = parseAllowedCounts(entry, instance.acceleratorCount);
  if (!allowed) {
    return allowed.error();
  }
  instance.allowedAcceleratorCounts = std::move(allowed).value();
  return Ok{};
}

// The type, its tier, vCPUs and memory (and what pods can request of them).
Status parseShape(const ObjectReader& entry, const std::string& type, InstanceType& instance) {
  instance.type = type;
  const auto dot = type.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == type.size()) {
    return Error{entry.fieldPath("type"),
                 "\"" + type + "\" is not an instance type like g5.xlarge"};
  }
  instance.family = type.substr(0, dot);
  auto tier = entry.optionalEnum<Tier>("tier");
  if (!tier) {
    return tier.error();
  }
  if (!*tier) {
    return Error{entry.fieldPath("tier"), "required (use " + allowedValues<Tier>() + ")"};
  }
  instance.tier = **tier;
  auto vcpus = entry.optionalInteger("vcpus", 1, 4096);
  if (!vcpus || !*vcpus) {
    return vcpus ? Error{entry.fieldPath("vcpus"), "required"} : vcpus.error();
  }
  instance.vcpus = static_cast<int>(**vcpus);
  auto memory = entry.number("memoryGiB", 0.25, 1e5);
  if (!memory) {
    return memory.error();
  }
  instance.memoryGiB = *memory;
  const auto allocatable = allocatableOf(instance.vcpus, instance.memoryGiB);
  instance.allocatableCpu = allocatable.cpu;
  instance.allocatableMemoryGiB = allocatable.memoryGiB;
  return Ok{};
}

// efa: {interfaces, networkGbps}: absent, the type has none.
Status parseEfa(const ObjectReader& entry, InstanceType& instance) {
  if (!entry.has("efa")) {
    return Ok{};
  }
  const ObjectReader efa = entry.child("efa");
  if (auto ok = efa.requireObject(); !ok) {
    return ok.error();
  }
  if (auto ok = efa.onlyKeys({"interfaces", "networkGbps"}); !ok) {
    return ok.error();
  }
  auto interfaces = efa.optionalInteger("interfaces", 1, 64);
  if (!interfaces || !*interfaces) {
    return interfaces ? Error{efa.fieldPath("interfaces"), "required"} : interfaces.error();
  }
  auto gbps = efa.number("networkGbps", 1, 1e5);
  if (!gbps) {
    return gbps.error();
  }
  instance.efaInterfaces = static_cast<int>(**interfaces);
  instance.networkGbps = *gbps;
  return Ok{};
}

Result<InstanceType> parseInstance(const json& value, std::size_t index, const Catalog& catalog) {
  ObjectReader reader(value, "instances[" + std::to_string(index) + "]");
  if (auto ok = reader.requireObject(); !ok) {
    return ok.error();
  }
  auto type = reader.string("type");
  if (!type) {
    return type.error();
  }
  ObjectReader entry(value, "instances[" + *type + "]");
  if (auto ok =
          entry.onlyKeys({"type", "tier", "accelerator", "acceleratorCount",
                          "allowedAcceleratorCounts", "interconnect", "efa", "vcpus", "memoryGiB",
                          "onDemand", "spot", "fp16Tflops", "memoryBandwidthGBs", "sources"});
      !ok) {
    return ok.error();
  }
  InstanceType instance;
  if (auto shape = parseShape(entry, *type, instance); !shape) {
    return shape.error();
  }
  if (auto prices = parsePrices(entry, instance); !prices) {
    return prices.error();
  }
  auto shaped = instance.tier == Tier::CPU ? parseCpu(entry, instance)
                                           : parseAccelerated(entry, catalog, instance);
  if (!shaped) {
    return shaped.error();
  }
  // Unset on a multi-device type: PCIe, the slowest link such a type has.
  auto link = entry.optionalEnum<Interconnect>("interconnect");
  if (!link) {
    return link.error();
  }
  instance.interconnect =
      link->value_or(instance.acceleratorCount > 1 ? Interconnect::PCIe : Interconnect::None);
  if (auto efa = parseEfa(entry, instance); !efa) {
    return efa.error();
  }
  return instance;
}

}  // namespace

double denseTflops(const AcceleratorSpec& spec, Precision precision) {
  switch (precision) {
    case Precision::FP32:
      return spec.fp32Tflops > 0 ? spec.fp32Tflops : spec.fp16Tflops;
    case Precision::FP8:
      return spec.fp8Tflops.value_or(spec.fp16Tflops);
    case Precision::FP16:
    case Precision::BF16:
    case Precision::INT8:
    case Precision::INT4:
      break;
  }
  return spec.fp16Tflops;
}

Allocatable allocatableOf(int vcpus, double memoryGiB) {
  // kube-reserved CPU in millicores: 60 for the first core, 10 for the
  // second, 5 each for the third and fourth, 2.5 for each one after.
  double reservedMilli = 0;
  for (int core = 1; core <= vcpus; ++core) {
    reservedMilli += core == 1 ? 60 : core == 2 ? 10 : core <= 4 ? 5 : 2.5;
  }
  // Pods per node follow the ENI limits; by size they are close to these
  // (Karpenter's reference: 29 on 2 vCPUs, 58 on 4-8, 234 on 16-48, 737 above).
  const int pods = vcpus <= 2 ? 29 : vcpus <= 8 ? 58 : vcpus <= 48 ? 234 : 737;
  const double memoryMiB = memoryGiB * 1024 * 0.925 - (255 + 11.0 * pods) - 100;
  return Allocatable{vcpus - reservedMilli / 1000, std::max(memoryMiB, 0.0) / 1024};
}

double migMemoryGiB(const AcceleratorSpec& spec, const MigProfile& profile) {
  return spec.memoryGiB * profile.memoryEighths / 8;
}

double migBandwidthGBs(const AcceleratorSpec& spec, const MigProfile& profile) {
  return spec.memoryBandwidthGBs * profile.memoryEighths / 8;
}

double migComputeShare(const MigProfile& profile) {
  return profile.computeSevenths / 7.0;
}

namespace {
constexpr std::string_view kMigPrefix = "nvidia.com/mig-";
}

std::string migResourceName(std::string_view profile) {
  std::string name(kMigPrefix);
  name += profile;
  return name;
}

std::string_view migProfileOf(std::string_view resource) {
  return resource.starts_with(kMigPrefix) ? resource.substr(kMigPrefix.size()) : std::string_view{};
}

int Catalog::acceleratorIndex(std::string_view name) const {
  for (std::size_t i = 0; i < accelerators.size(); ++i) {
    if (accelerators[i].name == name) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int Catalog::indexOf(std::string_view type) const {
  const auto it = std::lower_bound(
      instances.begin(), instances.end(), type,
      [](const InstanceType& instance, std::string_view key) { return instance.type < key; });
  if (it == instances.end() || it->type != type) {
    return -1;
  }
  return static_cast<int>(it - instances.begin());
}

const InstanceType* Catalog::find(std::string_view type) const {
  const int index = indexOf(type);
  return index < 0 ? nullptr : &instances[index];
}

namespace {

// pricesText without a word on NodeOverlays.
std::string basisText(const Catalog& catalog) {
  if (catalog.pricesFrom == PricesFrom::Karpenter) {
    // No time: the statuses that name it stay the same while prices move.
    return (catalog.region.empty() ? "" : catalog.region + " ") +
           "prices Karpenter pays (its offering prices, read live)";
  }
  if (catalog.region.empty() && catalog.pricesAsOf.empty()) {
    return "the catalog's (it names no region or date)";
  }
  if (catalog.pricesAsOf.empty()) {
    return catalog.region + " prices (the catalog's; it names no date)";
  }
  if (catalog.region.empty()) {
    return "prices of " + catalog.pricesAsOf + " (the catalog's; it names no region)";
  }
  if (!catalog.spotPricesRegion.empty()) {
    return catalog.region + " on-demand prices of " + catalog.pricesAsOf +
           " (an imported price list), spot the catalog's " + catalog.spotPricesRegion +
           " snapshot";
  }
  return catalog.region + " prices of " + catalog.pricesAsOf + " (the catalog's)";
}

}  // namespace

std::string pricesText(const Catalog& catalog) {
  const std::string overlays =
      catalog.nodeOverlays.offeringsPriced > 0 ? ", with Karpenter's NodeOverlays" : "";
  return basisText(catalog) + overlays;
}

namespace {

// A mixture of experts: all three fields or none, the active parameters
// fewer than all of them and more than the experts they route to.
Status readExperts(const ObjectReader& entry, ModelFamily& family) {
  const bool any =
      entry.has("experts") || entry.has("expertsPerToken") || entry.has("activeParameters");
  if (!any) {
    return Ok{};
  }
  auto experts = entry.integer("experts", 2, 1024);
  auto perToken = entry.integer("expertsPerToken", 1, 1024);
  auto active = entry.string("activeParameters");
  for (const Error* error :
       {experts ? nullptr : &experts.error(), perToken ? nullptr : &perToken.error(),
        active ? nullptr : &active.error()}) {
    if (error) {
      return *error;
    }
  }
  if (*perToken >= *experts) {
    return Error{entry.fieldPath("expertsPerToken"), "must be fewer than experts"};
  }
  auto count = parseParameterCount(*active);
  if (!count) {
    return Error{entry.fieldPath("activeParameters"), count.error().message};
  }
  // Shared weights S and E experts of e each: total = S + E e, active =
  // S + k e, so S = (E active - k total) / (E - k) must be positive.
  const double total = static_cast<double>(family.parameters);
  const double shared = (static_cast<double>(*experts) * static_cast<double>(*count) -
                         static_cast<double>(*perToken) * total) /
                        static_cast<double>(*experts - *perToken);
  if (*count >= family.parameters || shared <= 0) {
    return Error{entry.fieldPath("activeParameters"),
                 "must be fewer than parameters and more than expertsPerToken / experts of them"};
  }
  family.experts = static_cast<int>(*experts);
  family.expertsPerToken = static_cast<int>(*perToken);
  family.activeParameters = *count;
  return Ok{};
}

Result<ModelFamily> parseModelFamily(const json& item, std::size_t index) {
  ObjectReader entry(item, "modelFamilies[" + std::to_string(index) + "]");
  if (auto ok = entry.requireObject(); !ok) {
    return ok.error();
  }
  if (auto ok =
          entry.onlyKeys({"name", "parameters", "architecture", "layers", "kvHeads", "headDim",
                          "experts", "expertsPerToken", "activeParameters", "source"});
      !ok) {
    return ok.error();
  }
  auto name = entry.string("name");
  auto parameters = entry.string("parameters");
  auto architecture = entry.optionalEnum<Architecture>("architecture");
  auto source = entry.string("source");
  for (const Error* error :
       {name ? nullptr : &name.error(), parameters ? nullptr : &parameters.error(),
        architecture ? nullptr : &architecture.error(), source ? nullptr : &source.error()}) {
    if (error) {
      return *error;
    }
  }
  ModelFamily family;
  family.architecture = architecture->value_or(Architecture::Transformer);
  // A decoder's shape sizes its KV cache; other models have none to give.
  if (family.architecture == Architecture::Transformer) {
    auto layers = entry.integer("layers", 1, 1000);
    auto kvHeads = entry.integer("kvHeads", 1, 1024);
    auto headDim = entry.integer("headDim", 1, 4096);
    for (const Error* error :
         {layers ? nullptr : &layers.error(), kvHeads ? nullptr : &kvHeads.error(),
          headDim ? nullptr : &headDim.error()}) {
      if (error) {
        return *error;
      }
    }
    family.shape = {static_cast<int>(*layers), static_cast<int>(*kvHeads),
                    static_cast<int>(*headDim)};
  } else if (entry.has("layers") || entry.has("kvHeads") || entry.has("headDim") ||
             entry.has("experts")) {
    return Error{entry.fieldPath("architecture"),
                 "a decoder's shape and experts are for a Transformer family"};
  }
  auto count = parseParameterCount(*parameters);
  if (!count) {
    return Error{entry.fieldPath("parameters"), count.error().message};
  }
  family.name = std::move(name).value();
  family.parameters = *count;
  family.source = std::move(source).value();
  if (auto ok = readExperts(entry, family); !ok) {
    return ok.error();
  }
  return family;
}

}  // namespace

double ModelFamily::weightsReadShare(int sequences) const {
  if (experts == 0 || parameters == 0) {
    return 1;
  }
  const double total = static_cast<double>(parameters);
  const double k = expertsPerToken;
  const double e = experts;
  const double shared = (e * static_cast<double>(activeParameters) - k * total) / (e - k);
  // Each expert is read when any token of the step routes to it.
  const double expertsRead = 1 - std::pow(1 - k / e, std::max(sequences, 1));
  return (shared + (total - shared) * expertsRead) / total;
}

double ModelFamily::activeShare() const {
  return experts == 0 || parameters == 0
             ? 1
             : static_cast<double>(activeParameters) / static_cast<double>(parameters);
}

const ModelFamily* Catalog::modelFamily(std::string_view name) const {
  for (const auto& family : modelFamilies) {
    if (family.name == name) {
      return &family;
    }
  }
  return nullptr;
}

std::string Catalog::modelFamilyNames(bool decodersOnly) const {
  std::string names;
  for (const auto& family : modelFamilies) {
    if (!decodersOnly || family.shape.known()) {
      names += (names.empty() ? "" : ", ") + family.name;
    }
  }
  return names;
}

Result<Catalog> parseCatalog(const json& document) {
  ObjectReader root(document, "");
  if (!document.is_object()) {
    return Error{"catalog", "must be a YAML or JSON object with accelerators and instances"};
  }
  if (auto ok = root.onlyKeys({"version", "region", "pricesAsOf", "pricesSource", "accelerators",
                               "instances", "modelFamilies"});
      !ok) {
    return ok.error();
  }
  auto version = root.optionalInteger("version", 1, 1);
  if (!version) {
    return version.error();
  }
  Catalog catalog;
  using Field = std::pair<const char*, std::string*>;
  for (const auto& [key, target] :
       {Field{"region", &catalog.region}, Field{"pricesAsOf", &catalog.pricesAsOf},
        Field{"pricesSource", &catalog.pricesSource}}) {
    auto text = root.stringOr(key, "");
    if (!text) {
      return text.error();
    }
    *target = std::move(text).value();
  }

  if (!root.has("accelerators") || !root.at("accelerators").is_array()) {
    return Error{"accelerators", "required: a list of accelerator models"};
  }
  std::set<std::string> names;
  const auto& accelerators = root.at("accelerators");
  for (std::size_t i = 0; i < accelerators.size(); ++i) {
    auto spec = parseAccelerator(accelerators[i], i);
    if (!spec) {
      return spec.error();
    }
    if (!names.insert(spec->name).second) {
      return Error{"accelerators[" + spec->name + "]", "defined twice"};
    }
    catalog.accelerators.push_back(std::move(spec).value());
  }
  if (catalog.accelerators.size() > 64) {
    return Error{"accelerators", "at most 64 accelerator models"};
  }

  if (!root.has("instances") || !root.at("instances").is_array() || root.at("instances").empty()) {
    return Error{"instances", "required: a non-empty list of instance types"};
  }
  std::set<std::string> types;
  const auto& instances = root.at("instances");
  for (std::size_t i = 0; i < instances.size(); ++i) {
    auto instance = parseInstance(instances[i], i, catalog);
    if (!instance) {
      return instance.error();
    }
    if (!types.insert(instance->type).second) {
      return Error{"instances[" + instance->type + "]", "defined twice"};
    }
    catalog.instances.push_back(std::move(instance).value());
  }
  std::sort(catalog.instances.begin(), catalog.instances.end(),
            [](const InstanceType& a, const InstanceType& b) { return a.type < b.type; });
  if (root.has("modelFamilies")) {
    const auto& families = root.at("modelFamilies");
    if (!families.is_array()) {
      return Error{"modelFamilies", "must be a list of model families"};
    }
    for (std::size_t i = 0; i < families.size(); ++i) {
      auto family = parseModelFamily(families[i], i);
      if (!family) {
        return family.error();
      }
      if (catalog.modelFamily(family->name)) {
        return Error{"modelFamilies[" + family->name + "]", "defined twice"};
      }
      catalog.modelFamilies.push_back(std::move(family).value());
    }
  }
  return catalog;
}

}  // namespace gpuplacement::core
