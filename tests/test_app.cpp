// The application layer's requests (include/gpusim/app.hpp): the checks and defaults every front end
// shares, and the field a refusal names.
#include "helpers.hpp"

using namespace gpusim;

namespace {

// The field a refused request names, or "(none)" when it is not refused.
std::string refused_field(const app::RooflineRequest& r) {
  try {
    (void)app::roofline(test::catalog(), r);
  } catch (const app::RequestError& e) {
    return e.option();
  }
  return "(none)";
}

}  // namespace

TEST_CASE("a roofline highlights bf16 by default and fp16 on a GPU without bf16", "[app][roofline]") {
  app::RooflineRequest r;
  r.gpu = "h100-sxm5-80gb";
  CHECK(app::roofline(test::catalog(), r).front().highlight == DType::kBf16);
  r.gpu = "v100-sxm2-32gb";  // Volta has fp16 tensor cores and no bf16
  CHECK(app::roofline(test::catalog(), r).front().highlight == DType::kFp16);
  r.gpu = "b200";
  r.dtype = "fp4";
  CHECK(app::roofline(test::catalog(), r).front().highlight == DType::kFp4);
}

TEST_CASE("a roofline of several GPUs gives one per GPU in the request's order", "[app][roofline]") {
  app::RooflineRequest r;
  r.gpus = {"rtx4090", "v100-sxm2-32gb", "h100-sxm5-80gb"};
  const std::vector<explain::Roofline> rs = app::roofline(test::catalog(), r);
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].gpu_id == "rtx4090");
  CHECK(rs[1].gpu_id == "v100-sxm2-32gb");
  CHECK(rs[1].highlight == DType::kFp16);
  CHECK(rs[2].gpu_id == "h100-sxm5-80gb");
}

TEST_CASE("a roofline request it cannot take is refused naming the field at fault", "[app][roofline][errors]") {
  app::RooflineRequest none;
  CHECK(refused_field(none).empty());  // no GPU and no scenario: no one field
  app::RooflineRequest both;
  both.gpus = {"rtx4090"};
  both.gpu = "a100-sxm4-80gb";
  CHECK(refused_field(both) == "gpus");
  app::RooflineRequest loose;
  loose.gpu = "rtx4090";
  loose.sets = {"system.gpus=2"};
  CHECK(refused_field(loose) == "sets");  // overrides without a scenario are not ignored
  app::RooflineRequest unknown;
  unknown.gpu = "rtx4090";
  unknown.dtype = "int4";
  CHECK(refused_field(unknown) == "dtype");
  app::RooflineRequest lacking;
  lacking.gpu = "t4";
  lacking.dtype = "bf16";  // named, so no fall-back to fp16
  CHECK(refused_field(lacking).empty());
  CHECK_THROWS_AS(app::roofline(test::catalog(), lacking), app::RequestError);
  app::RooflineRequest missing;
  missing.gpu = "no-such-gpu";
  CHECK_THROWS_AS(app::roofline(test::catalog(), missing), InputError);
}
