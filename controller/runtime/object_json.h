#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace gpuplacement::runtime {

// Parses an API object, a list or a watch event, leaving out every
// metadata.managedFields on the way: server-side apply bookkeeping that a
// controller never reads, often half of an object's bytes. Returns a
// discarded value (is_discarded()) when the text is not JSON.
nlohmann::json parseObject(std::string_view text);

}  // namespace gpuplacement::runtime
