// How fast `gpu-placement prices import` reads AWS's Price List offer file
// for EC2, and how much memory it keeps while it does: a synthetic file in
// the offer file's form (products, their on-demand terms, six Reserved
// terms each), of the size of a region's real one, written to a temporary
// file and streamed back. Prints figures; it passes or fails nothing.
//   build/bin/price_import_bench [products]   (default 50,000: about 300 MB)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "app/price_import.h"

namespace {

// The process's peak resident set so far (VmHWM), in MiB.
double peakMiB() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) {
      return std::stod(line.substr(6)) / 1024.0;
    }
  }
  return 0;
}

const char* const kSystems[] = {"Linux", "Windows", "RHEL", "SUSE", "Ubuntu Pro"};
const char* const kTenancies[] = {"Shared", "Dedicated", "Host"};
const char* const kCapacity[] = {"Used", "UnusedCapacityReservation",
                                 "AllocatedCapacityReservation"};

std::string sku(int i) {
  char text[32];
  std::snprintf(text, sizeof text, "SKU%013d", i);
  return text;
}

void writeProduct(std::ofstream& out, int i, bool last) {
  const std::string id = sku(i);
  out << "    \"" << id << "\" : {\n      \"sku\" : \"" << id
      << "\",\n      \"productFamily\" : \"Compute Instance\",\n      \"attributes\" : {\n"
      << "        \"servicecode\" : \"AmazonEC2\",\n        \"location\" : \"EU (Frankfurt)\",\n"
      << "        \"locationType\" : \"AWS Region\",\n        \"instanceType\" : \"type" << i % 900
      << ".xlarge\",\n        \"currentGeneration\" : \"Yes\",\n"
      << "        \"instanceFamily\" : \"General purpose\",\n        \"vcpu\" : \"4\",\n"
      << "        \"physicalProcessor\" : \"Intel Xeon Platinum 8175\",\n"
      << "        \"clockSpeed\" : \"3.1 GHz\",\n        \"memory\" : \"16 GiB\",\n"
      << "        \"storage\" : \"EBS only\",\n        \"networkPerformance\" : \"Up to 10 "
         "Gigabit\",\n"
      << "        \"processorArchitecture\" : \"64-bit\",\n        \"tenancy\" : \""
      << kTenancies[(i / 5) % 3] << "\",\n        \"operatingSystem\" : \"" << kSystems[i % 5]
      << "\",\n        \"licenseModel\" : \"No License required\",\n"
      << "        \"usagetype\" : \"EUC1-BoxUsage:type" << i % 900 << ".xlarge\",\n"
      << "        \"operation\" : \"RunInstances\",\n        \"availabilityzone\" : \"NA\",\n"
      << "        \"capacitystatus\" : \"" << kCapacity[(i / 15) % 3] << "\",\n"
      << "        \"ecu\" : \"16\",\n        \"enhancedNetworkingSupported\" : \"Yes\",\n"
      << "        \"intelAvxAvailable\" : \"Yes\",\n        \"marketoption\" : \"OnDemand\",\n"
      << "        \"normalizationSizeFactor\" : \"8\",\n        \"preInstalledSw\" : \"NA\",\n"
      << "        \"regionCode\" : \"eu-central-1\",\n"
      << "        \"servicename\" : \"Amazon Elastic Compute Cloud\",\n"
      << "        \"vpcnetworkingsupport\" : \"true\"\n      }\n    }" << (last ? "\n" : ",\n");
}

void writeTerm(std::ofstream& out, int i, const char* code, const char* price, bool last) {
  const std::string id = sku(i) + "." + code;
  out << "      \"" << id << "\" : {\n        \"offerTermCode\" : \"" << code
      << "\",\n        \"sku\" : \"" << sku(i)
      << "\",\n        \"effectiveDate\" : \"2026-11-01T00:00:00Z\",\n"
      << "        \"priceDimensions\" : {\n          \"" << id << ".6YS6EN2CT7\" : {\n"
      << "            \"rateCode\" : \"" << id << ".6YS6EN2CT7\",\n"
      << "            \"description\" : \"$" << price << " per On Demand Instance Hour\",\n"
      << "            \"beginRange\" : \"0\",\n            \"endRange\" : \"Inf\",\n"
      << "            \"unit\" : \"Hrs\",\n            \"pricePerUnit\" : {\n"
      << "              \"USD\" : \"" << price << "\"\n            },\n"
      << "            \"appliesTo\" : [ ]\n          }\n        },\n"
      << "        \"termAttributes\" : { }\n      }" << (last ? "\n" : ",\n");
}

void writeOfferFile(const std::string& path, int products) {
  std::ofstream out(path);
  out << "{\n  \"formatVersion\" : \"v1.0\",\n  \"offerCode\" : \"AmazonEC2\",\n"
      << "  \"version\" : \"20261120183043\",\n  \"publicationDate\" : \"2026-11-20T18:30:43Z\",\n"
      << "  \"products\" : {\n";
  for (int i = 0; i < products; ++i) {
    writeProduct(out, i, i + 1 == products);
  }
  out << "  },\n  \"terms\" : {\n    \"OnDemand\" : {\n";
  for (int i = 0; i < products; ++i) {
    out << "    \"" << sku(i) << "\" : {\n";
    writeTerm(out, i, "JRTCKXETXF", i % 900 == 0 ? "0.2300000000" : "0.1920000000", true);
    out << "    }" << (i + 1 == products ? "\n" : ",\n");
  }
  out << "    },\n    \"Reserved\" : {\n";
  const char* const kReserved[] = {"4NA7Y494T4", "6QCMYABX3D", "HU7G6KETJZ",
                                   "38NPMPTW36", "R5XV2EPZQZ", "VJWZNREJX2"};
  for (int i = 0; i < products; ++i) {
    out << "    \"" << sku(i) << "\" : {\n";
    for (int t = 0; t < 6; ++t) {
      writeTerm(out, i, kReserved[t], "0.1210000000", t == 5);
    }
    out << "    }" << (i + 1 == products ? "\n" : ",\n");
  }
  out << "    }\n  }\n}\n";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpuplacement;
  const int products = argc > 1 ? std::atoi(argv[1]) : 50'000;
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("price-import-bench-" + std::to_string(getpid()) + ".json"))
                               .string();
  writeOfferFile(path, products);
  const double megabytes = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  const double peakBefore = peakMiB();
  std::ifstream in(path, std::ios::binary);
  const auto start = std::chrono::steady_clock::now();
  const auto list = app::importEc2OfferFile(in, "eu-central-1", path);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::filesystem::remove(path);
  if (!list) {
    std::fprintf(stderr, "import failed: %s\n", list.error().describe().c_str());
    return 1;
  }
  std::printf(
      "price_import_bench: %d products, %.0f MB offer file: %.2f s (%.0f MB/s), %zu prices kept; "
      "peak RSS %.1f MiB before, %.1f MiB after (%.1f MiB for the import)\n",
      products, megabytes, seconds, megabytes / seconds, list->onDemand.size(), peakBefore,
      peakMiB(), peakMiB() - peakBefore);
  return 0;
}
