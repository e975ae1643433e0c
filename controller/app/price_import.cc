#include "app/price_import.h"

#include <charconv>
#include <map>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuplacement::app {
namespace {

using json = nlohmann::json;

// The attributes a product must have for its price to be the one a node of
// the operator's pays, on demand.
const std::map<std::string, std::string, std::less<>> kWanted = {
    {"operatingSystem", "Linux"}, {"tenancy", "Shared"},
    {"preInstalledSw", "NA"},     {"licenseModel", "No License required"},
    {"capacitystatus", "Used"},   {"operation", "RunInstances"},
};

// Follows the document's keys as a path, and keeps, of the products, the
// ones that match (SKU -> instance type) and, of the on-demand terms, the
// hourly USD price of those. Everything else passes by unkept.
class OfferFileReader : public json::json_sax_t {
 public:
  explicit OfferFileReader(std::string region) : region_(std::move(region)) {}

  bool null() override { return scalar(""); }
  bool boolean(bool) override { return scalar(""); }
  bool number_integer(number_integer_t value) override { return scalar(std::to_string(value)); }
  bool number_unsigned(number_unsigned_t value) override { return scalar(std::to_string(value)); }
  bool number_float(number_float_t, const string_t& text) override { return scalar(text); }
  bool string(string_t& value) override { return scalar(value); }
  bool binary(binary_t&) override { return scalar(""); }

  bool start_object(std::size_t) override {
    path_.push_back(pendingKey_);
    pendingKey_.clear();
    return true;
  }
  bool key(string_t& key) override {
    pendingKey_ = key;
    return true;
  }
  bool end_object() override {
    if (inProduct()) {
      finishProduct();
    } else if (inPriceDimension()) {
      finishDimension();
    }
    path_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    path_.push_back(pendingKey_);
    pendingKey_.clear();
    return true;
  }
  bool end_array() override {
    path_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& error) override {
    error_ = "not JSON at byte " + std::to_string(position) + ": " + error.what();
    return false;
  }

  const std::string& error() const { return error_; }
  const std::string& offerCode() const { return offerCode_; }
  const std::string& publicationDate() const { return publicationDate_; }
  const std::string& version() const { return version_; }
  std::size_t matchedProducts() const { return matched_.size(); }
  const std::map<std::string, double>& prices() const { return prices_; }
  const std::vector<std::string>& conflicts() const { return conflicts_; }

 private:
  // path_: "" (the document), then each enclosing key.
  bool at(std::initializer_list<std::string_view> keys) const {
    if (path_.size() != keys.size()) {
      return false;
    }
    std::size_t i = 0;
    for (auto key : keys) {
      if (!key.empty() && path_[i] != key) {
        return false;
      }
      ++i;
    }
    return true;
  }
  // {"", "products", SKU}
  bool inProduct() const { return at({"", "products", ""}); }
  // {"", "terms", "OnDemand", SKU, term, "priceDimensions", dimension}
  bool inPriceDimension() const {
    return at({"", "terms", "OnDemand", "", "", "priceDimensions", ""});
  }

  bool scalar(const std::string& value) {
    const std::string key = std::move(pendingKey_);
    pendingKey_.clear();
    if (at({""})) {
      if (key == "offerCode")
        offerCode_ = value;
      if (key == "publicationDate")
        publicationDate_ = value;
      if (key == "version")
        version_ = value;
    } else if (at({"", "products", ""})) {
      if (key == "productFamily")
        productFamily_ = value;
    } else if (at({"", "products", "", "attributes"})) {
      if (key == "instanceType" || key == "regionCode" || key == "locationType" ||
          kWanted.count(key)) {
        attributes_[key] = value;
      }
    } else if (at({"", "terms", "OnDemand", "", "", "priceDimensions", ""})) {
      if (key == "unit")
        unit_ = value;
    } else if (at({"", "terms", "OnDemand", "", "", "priceDimensions", "", "pricePerUnit"})) {
      if (key == "USD")
        usd_ = value;
    }
    return true;
  }

  void finishProduct() {
    // A Local Zone's or an Outpost's products name their own location type.
    const auto& location = attributes_["locationType"];
    bool wanted = productFamily_ == "Compute Instance" && attributes_["regionCode"] == region_ &&
                  !attributes_["instanceType"].empty() &&
                  (location.empty() || location == "AWS Region");
    for (const auto& [attribute, value] : kWanted) {
      wanted = wanted && attributes_[attribute] == value;
    }
    if (wanted) {
      matched_[path_.back()] = attributes_["instanceType"];
    }
    attributes_.clear();
    productFamily_.clear();
  }

  void finishDimension() {
    const auto sku = matched_.find(path_[3]);
    double price = 0;
    const auto parsed = std::from_chars(usd_.data(), usd_.data() + usd_.size(), price);
    if (sku != matched_.end() && unit_ == "Hrs" && parsed.ec == std::errc() &&
        parsed.ptr == usd_.data() + usd_.size() && price > 0) {
      const auto [it, added] = prices_.emplace(sku->second, price);
      if (!added && it->second != price) {
        conflicts_.push_back(sku->second);
      }
    }
    unit_.clear();
    usd_.clear();
  }

  std::string region_;
  std::vector<std::string> path_;
  std::string pendingKey_;
  std::string error_;
  std::string offerCode_, publicationDate_, version_;
  std::string productFamily_;
  std::map<std::string, std::string, std::less<>> attributes_;
  std::unordered_map<std::string, std::string> matched_;  // SKU -> instance type
  std::string unit_, usd_;
  std::map<std::string, double> prices_;
  std::vector<std::string> conflicts_;
};

}  // namespace

base::Result<core::PriceList> importEc2OfferFile(std::istream& in, const std::string& region,
                                                 const std::string& fileName) {
  OfferFileReader reader(region);
  if (!json::sax_parse(in, &reader) || !reader.error().empty()) {
    return base::Error{fileName, reader.error().empty() ? "not JSON" : reader.error()};
  }
  if (reader.offerCode() != "AmazonEC2") {
    return base::Error{fileName + ": offerCode",
                       "is \"" + reader.offerCode() + "\", not AmazonEC2: not EC2's offer file"};
  }
  if (reader.prices().empty()) {
    return base::Error{fileName, "has no on-demand Linux price for " + region + " (" +
                                     std::to_string(reader.matchedProducts()) +
                                     " products matched): is it that region's offer file?"};
  }
  if (!reader.conflicts().empty()) {
    return base::Error{fileName, "states two on-demand prices for " + reader.conflicts().front()};
  }
  core::PriceList list;
  list.region = region;
  list.asOf = reader.publicationDate().substr(0, 10);
  list.source = "AWS Price List, EC2 offer file version " + reader.version() + " (published " +
                reader.publicationDate() +
                "): on-demand, Linux, shared tenancy, no pre-installed software";
  list.onDemand = reader.prices();
  return list;
}

}  // namespace gpuplacement::app
