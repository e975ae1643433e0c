#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace gpuplacement::app {

// `gpu-placement prices import`: a region's on-demand prices from AWS's
// Price List offer file for EC2, written as the price list `--price-list`
// reads (to --out, whole or not at all, or to stdout).
struct PricesCommand {
  CLI::App* import = nullptr;
  std::string offerFile;
  std::string region;
  std::string out;

  void addTo(CLI::App& cli);
  int run() const;
};

}  // namespace gpuplacement::app
