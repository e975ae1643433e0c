#pragma once

#include <string_view>

// What an AWS region's name looks like, for whatever names one: a price
// list, the zones Karpenter prices offerings in, the operator's --region.
// Apart from core/cluster/region.h, which reads the cluster's nodes: the prices
// check a name without reading the cluster.
namespace gpuplacement::core {

// An AWS region's name: two letters, one or more words, a number
// ("us-east-1", "us-gov-west-1", "ap-southeast-2").
bool isRegionName(std::string_view name);

}  // namespace gpuplacement::core
