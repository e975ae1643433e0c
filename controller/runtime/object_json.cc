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

nlohmann::json parseList(std::string_view text,
                         const std::function<void(nlohmann::json& item)>& onItem) {
  using json = nlohmann::json;
  using Event = json::parse_event_t;
  // Depths as nlohmann counts them: the list's own keys at 1, the end of
  // each element of its "items" array at 2.
  bool inItems = false;
  const json::parser_callback_t visit = [&](int depth, Event event, json& parsed) {
    if (event == Event::key) {
      if (depth == 1) {
        inItems = parsed.get_ref<const std::string&>() == "items";
      }
      return parsed.get_ref<const std::string&>() != "managedFields";
    }
    if (event == Event::object_end && depth == 2 && inItems) {
      onItem(parsed);
      return false;  // handed over: not kept in the array
    }
    return true;
  };
  return json::parse(text.begin(), text.end(), visit, /*allow_exceptions=*/false);
}

}  // namespace gpuplacement::runtime
