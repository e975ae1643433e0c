// A region's on-demand prices from AWS's Price List offer file for EC2, read
// from a small file in AWS's exact format (tests/fixtures/price-list), and
// the command line that writes and reads them.
#include "app/price_import.h"

#include <filesystem>
#include <map>
#include <sstream>
#include <vector>

#include <doctest/doctest.h>

#include "base/io/yaml_json.h"
#include "support/command.h"
#include "support/paths.h"
#include "support/temp_dir.h"

namespace gpuplacement::app::price_import_tests {
namespace {

using json = nlohmann::json;

std::string offerFile() {
  return testing::repoRoot() + "/tests/fixtures/price-list/ec2-offer-eu-central-1.json";
}

base::Result<core::PriceList> importText(const std::string& text, const std::string& region) {
  std::istringstream in(text);
  return importEc2OfferFile(in, region, "offer.json");
}

base::Result<core::PriceList> importFixture(const std::string& region) {
  auto text = base::readTextFile(offerFile());
  REQUIRE(text.ok());
  return importText(*text, region);
}

std::string gpuPlacement(const std::string& arguments) {
  return testing::operatorBinary() + " " + arguments;
}

}  // namespace

TEST_CASE("only Linux, shared, no software, Used, RunInstances, in the region, on demand") {
  const auto list = importFixture("eu-central-1");
  REQUIRE_MESSAGE(list.ok(), list.error().describe());
  // Windows, dedicated, a reservation's unused capacity, SQL Server, RHEL,
  // a Dedicated Host, a Local Zone, another region and the Reserved terms
  // are left out.
  CHECK(list->onDemand == std::map<std::string, double>{
                              {"g5.xlarge", 1.258}, {"g6.xlarge", 1.019}, {"m5.xlarge", 0.23}});
  CHECK(list->region == "eu-central-1");
  CHECK(list->asOf == "2026-11-20");
  CHECK(list->source.find("version 20261120183043") != std::string::npos);
  CHECK(list->source.find("published 2026-11-20T18:30:43Z") != std::string::npos);

  const auto virginia = importFixture("us-east-1");
  REQUIRE(virginia.ok());
  CHECK(virginia->onDemand == std::map<std::string, double>{{"p5.48xlarge", 55.04}});
}

TEST_CASE("a file that is not EC2's offer file, or not this region's, says so") {
  const auto none = importFixture("ap-south-1");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().describe().find("no on-demand Linux price for ap-south-1") !=
        std::string::npos);

  const auto s3 =
      importText(R"({"offerCode": "AmazonS3", "products": {}, "terms": {}})", "eu-central-1");
  REQUIRE_FALSE(s3.ok());
  CHECK(s3.error().field == "offer.json: offerCode");

  auto text = base::readTextFile(offerFile());
  REQUIRE(text.ok());
  const auto cut = importText(text->substr(0, text->size() / 2), "eu-central-1");
  REQUIRE_FALSE(cut.ok());
  CHECK(cut.error().message.find("not JSON at byte") != std::string::npos);

  // One SKU's on-demand term stated twice with two prices: which is meant
  // is not known, so nothing is written.
  auto twice = json::parse(*text);
  auto& terms = twice["terms"]["OnDemand"];
  terms["A9DUPLICATE000099"] = terms["A1G5LINUXSHARED01"];
  twice["products"]["A9DUPLICATE000099"] = twice["products"]["A1G5LINUXSHARED01"];
  for (auto& [code, term] : terms["A9DUPLICATE000099"].items()) {
    for (auto& [dimension, price] : term["priceDimensions"].items()) {
      price["pricePerUnit"]["USD"] = "1.3000000000";
    }
  }
  const auto conflicting = importText(twice.dump(), "eu-central-1");
  REQUIRE_FALSE(conflicting.ok());
  CHECK(conflicting.error().message.find("two on-demand prices for g5.xlarge") !=
        std::string::npos);
}

TEST_CASE("prices import writes the list; --price-list prices the catalog by it") {
  testing::TempDir dir;
  const std::string list = dir.path() + "/eu-central-1.yaml";
  const auto imported = testing::runCommand(gpuPlacement(
      "prices import --offer-file " + offerFile() + " --region eu-central-1 --out " + list));
  CAPTURE(imported.err);
  REQUIRE(imported.exitCode == 0);
  CHECK(imported.err.find("3 on-demand prices for eu-central-1 as of 2026-11-20") !=
        std::string::npos);

  const auto listed = testing::runCommand(gpuPlacement("catalog -o json --price-list " + list));
  CAPTURE(listed.err);
  REQUIRE(listed.exitCode == 0);
  const auto catalog = json::parse(listed.out);
  CHECK(catalog["prices"]["region"] == "eu-central-1");
  CHECK(catalog["prices"]["asOf"] == "2026-11-20");
  CHECK(catalog["prices"]["spotRegion"] == "us-east-1");
  for (const auto& row : catalog["instances"]) {
    const std::string type = row["instanceType"];
    CAPTURE(type);
    if (type == "g5.xlarge") {
      CHECK(row["onDemand"] == 1.258);
    } else if (type == "g6.xlarge") {
      CHECK(row["onDemand"] == 1.019);
    } else if (type != "m5.xlarge") {
      // Not priced in the list: no on-demand price there, never
      // us-east-1's shown as this region's.
      CHECK(row["onDemand"].is_null());
    }
  }
  const auto answer =
      testing::runCommand(gpuPlacement("recommend --kind Inference --params 7B --capacity "
                                       "on-demand --tiers NVIDIA --price-list " +
                                       list));
  CAPTURE(answer.err);
  REQUIRE(answer.exitCode == 0);
  CHECK(answer.out.find(
            "eu-central-1 on-demand prices of 2026-11-20 (an imported price list), spot the "
            "catalog's us-east-1 snapshot") != std::string::npos);
  CHECK((answer.out.find("g6.xlarge") != std::string::npos ||
         answer.out.find("g5.xlarge") != std::string::npos));
}

TEST_CASE("prices import refuses what it cannot use, writing nothing") {
  testing::TempDir dir;
  const std::string out = dir.path() + "/list.yaml";
  struct Case {
    std::string arguments;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"prices import --offer-file " + offerFile() + " --region eu-central --out " + out,
       "--region: \"eu-central\" is not an AWS region name"},
      {"prices import --offer-file /nonexistent.json --region eu-central-1 --out " + out,
       "--offer-file: cannot read /nonexistent.json"},
      {"prices import --offer-file " + offerFile() + " --region ap-south-1 --out " + out,
       "no on-demand Linux price for ap-south-1"},
      {"prices import --region eu-central-1", "--offer-file is required"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.arguments);
    const auto result = testing::runCommand(gpuPlacement(c.arguments));
    CAPTURE(result.err);
    CHECK(result.exitCode == 2);
    CHECK(result.err.find(c.says) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(out));
  }
  const auto bad = dir.write("bad.yaml",
                             "region: eu-central-1\nasOf: \"2026-11-20\"\nsource: x\n"
                             "prices:\n- instanceType: g5.xlarge\n  onDemand: cheap\n");
  const auto refused = testing::runCommand(gpuPlacement("catalog --price-list " + bad));
  CHECK(refused.exitCode == 2);
  CHECK(refused.err.find("prices[0].onDemand") != std::string::npos);
  // A list none of whose types the catalog has would leave nothing to
  // place on demand: refused, not taken.
  const auto foreign = dir.write("foreign.yaml",
                                 "region: eu-central-1\nasOf: \"2026-11-20\"\n"
                                 "source: x\nprices:\n- instanceType: db.r5.large\n"
                                 "  onDemand: \"0.3\"\n");
  const auto none = testing::runCommand(gpuPlacement("catalog --price-list " + foreign));
  CHECK(none.exitCode == 2);
  CHECK(none.err.find("price none of the catalog's instance types") != std::string::npos);
}

}  // namespace gpuplacement::app::price_import_tests
