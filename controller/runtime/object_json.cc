#include "runtime/object_json.h"

namespace gpuplacement::runtime {
namespace {

using json = nlohmann::json;
using Event = json::parse_event_t;

// For a parser callback: false for the key "managedFields" drops the key
// and its whole value before any of it is built.
bool keepKey(const json& key) {
  return key.get_ref<const std::string&>() != "managedFields";
}

}  // namespace

json parseObject(std::string_view text, Keep keep) {
  switch (keep) {
    case Keep::All:
      return json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    case Keep::StatusOnly: {
      // The object's own keys are at depth 1.
      const json::parser_callback_t statusOnly = [](int depth, Event event, json& parsed) {
        return event != Event::key || depth != 1 ||
               parsed.get_ref<const std::string&>() == "status";
      };
      return json::parse(text.begin(), text.end(), statusOnly, /*allow_exceptions=*/false);
    }
    case Keep::AllButManagedFields:
      break;
  }
  const json::parser_callback_t skipManagedFields = [](int, Event event, json& parsed) {
    return event != Event::key || keepKey(parsed);
  };
  return json::parse(text.begin(), text.end(), skipManagedFields, /*allow_exceptions=*/false);
}

json parseList(std::string_view text, const ListItemSink& onItem) {
  // Depths as nlohmann counts them: the list's own keys at 1, the end of
  // each element of its "items" array at 2.
  bool inItems = false;
  const json::parser_callback_t visit = [&](int depth, Event event, json& parsed) {
    if (event == Event::key) {
      if (depth == 1) {
        inItems = parsed.get_ref<const std::string&>() == "items";
      }
      return keepKey(parsed);
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
