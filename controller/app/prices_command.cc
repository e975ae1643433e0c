#include "app/prices_command.h"

#include <cstdio>
#include <fstream>
#include <iostream>

#include "app/cli.h"
#include "app/price_import.h"
#include "base/io/yaml_json.h"
#include "core/catalog/region_name.h"

namespace gpuplacement::app {
namespace {

// Written beside `path` and renamed over it: a reader never sees half.
base::Status writeWhole(const std::string& path, const std::string& text) {
  const std::string partial = path + ".partial";
  {
    std::ofstream out(partial, std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::remove(partial.c_str());
      return base::Error{"--out", "cannot write " + partial};
    }
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    std::remove(partial.c_str());
    return base::Error{"--out", "cannot replace " + path};
  }
  return base::Ok{};
}

}  // namespace

void PricesCommand::addTo(CLI::App& cli) {
  auto* prices = cli.add_subcommand("prices", "Prices for the operator and the command line");
  prices->require_subcommand(1);
  import = prices->add_subcommand(
      "import",
      "Write a region's on-demand prices (for --price-list) from AWS's Price List offer file "
      "for EC2: https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/"
      "REGION/index.json");
  import->add_option("--offer-file", offerFile, "The offer file (JSON), as downloaded")->required();
  import->add_option("--region", region, "The region to take prices for, e.g. eu-central-1")
      ->required();
  import->add_option("--out", out, "Write the price list here (default: stdout)");
}

int PricesCommand::run() const {
  if (!core::isRegionName(region)) {
    return badInput(base::Error{"--region", "\"" + region + "\" is not an AWS region name"});
  }
  std::ifstream in(offerFile, std::ios::binary);
  if (!in) {
    return badInput(base::Error{"--offer-file", "cannot read " + offerFile});
  }
  auto list = importEc2OfferFile(in, region, offerFile);
  if (!list) {
    return badInput(list.error());
  }
  const std::string text =
      "# A region's on-demand EC2 prices for gpu-placement --price-list, written by\n"
      "# gpu-placement prices import from AWS's Price List.\n" +
      base::toYaml(core::priceListJson(*list));
  if (out.empty()) {
    std::cout << text;
  } else if (auto written = writeWhole(out, text); !written) {
    return badInput(written.error());
  }
  std::cerr << list->onDemand.size() << " on-demand prices for " << list->region << " as of "
            << list->asOf << (out.empty() ? "" : " written to " + out) << "\n";
  return kExitOk;
}

}  // namespace gpuplacement::app
