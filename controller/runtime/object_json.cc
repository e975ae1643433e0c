#include "runtime/object_json.h"

namespace gpuplacement::runtime {

nlohmann::json parseObject(std::string_view text) {
  using json = nlohmann::json;
  // Returning false for a key drops the key and its whole value before any
  // of it is built.
  const json::parser_callback_t skipManagedFields = [](int, json::parse_event_t event,
                                                       json& parsed) {
    return event != json::parse_event_t::key ||
           parsed.get_ref<const std::string&>() != "managedFields";
  };
  return json::parse(text.begin(), text.end(), skipManagedFields, /*allow_exceptions=*/false);
}

}  // namespace gpuplacement::runtime
