#pragma once

#include <istream>
#include <string>

#include "base/result.h"
#include "core/catalog/price_list.h"

namespace gpuplacement::app {

// Reads AWS's Price List bulk offer file for EC2 (the JSON of
// https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/<region>/index.json,
// hundreds of megabytes: streamed, keeping only what matches) and returns
// `region`'s on-demand hourly prices for what the operator places: Linux,
// shared tenancy, no pre-installed software, no license included, capacity
// status Used (not a reservation's unused capacity), operation
// RunInstances. Dated by the file's publicationDate. Errors say where the
// file stops being one (its byte offset) or why nothing matched.
base::Result<core::PriceList> importEc2OfferFile(std::istream& in, const std::string& region,
                                                 const std::string& fileName);

}  // namespace gpuplacement::app
