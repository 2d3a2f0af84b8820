#include <catch2/catch.hpp>
#include "gpusim/units/parse.hpp"
using namespace gpusim;
TEST_CASE("decimal and binary prefixes are exact powers of ten and two", "[units]") {
  CHECK(parse_bytes("50 MB").value() == 50e6);
  CHECK(parse_bytes("50 MiB").value() == 50.0 * 1024 * 1024);
}
