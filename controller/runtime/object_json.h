#pragma once

#include <functional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpuplacement::runtime {

// What a parse of an API object builds; what it leaves out is skipped as
// it is read, never built.
enum class Keep {
  // Every metadata.managedFields left out: server-side apply bookkeeping
  // that a controller never reads, often half of an object's bytes.
  AllButManagedFields,
  All,         // for the rare answer that is asked who wrote a field
  StatusOnly,  // a status write's answer: only its top-level "status"
};

// Parses an API object, a list or a watch event. Returns a discarded value
// (is_discarded()) when the text is not JSON.
nlohmann::json parseObject(std::string_view text, Keep keep = Keep::AllButManagedFields);

// Receives each object of a list as it is parsed; only one object of a
// list exists at a time.
using ListItemSink = std::function<void(nlohmann::json& object)>;

// Parses a list (`{"items": [...], "metadata": {...}}`) one item at a time:
// each item, managedFields left out, goes to `onItem` as soon as it is
// complete and is then dropped, so a page of 500 objects never exists as
// one tree. Returns the list without its items, or a discarded value when
// the text is not JSON (items seen before the error have been delivered).
nlohmann::json parseList(std::string_view text, const ListItemSink& onItem);

}  // namespace gpuplacement::runtime
