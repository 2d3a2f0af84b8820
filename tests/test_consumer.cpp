// Consumer boxes against published comparisons: Lambda's BERT SQuAD fine-tuning throughput on
// RTX 3090 and RTX 4090, one and two GPUs over PCIe without peer-to-peer
// [lambdal-deeplearning-benchmark, rows G01, G02, G10, G11, G19, G21]. Ratios within 15 %.
#include "helpers.hpp"

using namespace gpusim;

namespace {

double samples_per_s(const std::string& scenario) {
  const std::string path = std::string(GPUSIM_SOURCE_DIR) + "/measurements/scenarios/" + scenario + ".toml";
  return step::evaluate(scenario::load_scenario_file(test::catalog(), path)).samples_per_s;
}

}  // namespace

TEST_CASE("RTX 4090 over RTX 3090 on BERT training is within 15 % of Lambda's 1.79 and 1.73", "[consumer]") {
  // BERT-large: 93 / 52 sequences/s (rows G02, G01); BERT-base: 297 / 172 (rows G11, G10)
  const double large = samples_per_s("lambdal-bert-large-squad-fp16-1xrtx4090") /
                       samples_per_s("lambdal-bert-large-squad-fp16-1xrtx3090");
  CHECK(large == Approx(93.0 / 52.0).epsilon(0.15));
  const double base =
      samples_per_s("lambdal-bert-base-squad-fp16-1xrtx4090") / samples_per_s("lambdal-bert-base-squad-fp16-1xrtx3090");
  CHECK(base == Approx(297.0 / 172.0).epsilon(0.15));
  // and far from the 2.3x of their dense tensor peaks (165.2 / 71 TFLOP/s)
  CHECK(large < 0.9 * 165.2 / 71.0);
}

TEST_CASE("two RTX 4090s over PCIe without P2P scale within 15 % of Lambda's 1.49x (BERT-large) and 1.82x (BERT-base)",
          "[consumer]") {
  // 139 / 93 (rows G19, G02) and 541 / 297 (rows G21, G11)
  const double large = samples_per_s("lambdal-bert-large-squad-fp16-2xrtx4090") /
                       samples_per_s("lambdal-bert-large-squad-fp16-1xrtx4090");
  CHECK(large == Approx(139.0 / 93.0).epsilon(0.15));
  const double base =
      samples_per_s("lambdal-bert-base-squad-fp16-2xrtx4090") / samples_per_s("lambdal-bert-base-squad-fp16-1xrtx4090");
  CHECK(base == Approx(541.0 / 297.0).epsilon(0.15));
}
