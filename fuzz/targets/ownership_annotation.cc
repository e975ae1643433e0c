// The annotation gpuplacement.io/owned-fields: anyone with edit rights on a
// Deployment can write anything into it. A record that reads back must
// serialize to a record that reads back the same.
#include "core/kinds/target.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplacement;
  const auto record = core::readOwnership(fuzz::text(data, size));
  if (record.form != core::OwnershipRecord::Form::Readable) {
    return 0;
  }
  const auto again = core::readOwnership(core::serializeOwnedFields(record.fields));
  fuzz::require(again.form == core::OwnershipRecord::Form::Readable);
  fuzz::require(again.fields == record.fields);
  return 0;
}
