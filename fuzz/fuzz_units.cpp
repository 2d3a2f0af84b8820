// The unit-string parser ("700 W", "3.35 TB/s", "0.12 USD/kWh"): a quantity or UnitError, nothing else.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = gpusim::fuzz::text_of(data, size);
  try {
    const gpusim::units::ParsedQuantity q = gpusim::units::parse_quantity(text);
    if (!std::isfinite(q.si)) {
      std::abort();  // a quantity that parses must be finite
    }
  } catch (const gpusim::units::UnitError&) {
  }
  return 0;
}
