// ViT family: torchvision's parameter counts, the patch projection and class-token classifier that
// replace the transformer's embedding and logits, images as sequences of patch tokens, spec rules.
#include <algorithm>

#include "helpers.hpp"

using namespace gpusim;
using gpusim::test::diagnostics_of;
using lowering::Op;
using lowering::Phase;

namespace {

const Op* find_op(const std::vector<Op>& ops, const std::string& name, Phase phase) {
  auto it = std::find_if(ops.begin(), ops.end(), [&](const Op& op) { return op.name == name && op.phase == phase; });
  return it == ops.end() ? nullptr : &*it;
}

bool has_key(const std::vector<Diagnostic>& ds, const std::string& key) {
  return std::any_of(ds.begin(), ds.end(), [&](const Diagnostic& d) { return d.key == key; });
}

const char* kVitTraining = R"(name = "vit"
[system]
gpu = "rtx3090"
gpus = 1
[model]
preset = "vit-b16"
[training]
images = 1e6
global_batch = 64
micro_batch = 64
precision = "fp16"
optimizer = "sgd"
)";

}  // namespace

TEST_CASE("vit-b16 and vit-l16 have torchvision's 86,567,656 and 304,326,632 parameters", "[vit]") {
  const workload::ModelShape b = test::catalog().model("vit-b16");
  const workload::ModelShape l = test::catalog().model("vit-l16");
  REQUIRE(b.family == workload::Family::kVit);
  CHECK(b.vit.patches() == 196);
  CHECK(b.max_seq == 197);
  CHECK(workload::total_params(b) == 86'567'656.0);
  CHECK(workload::total_params(l) == 304'326'632.0);
}

TEST_CASE("a vit embeds patches with a GEMM and classifies the class token only", "[vit]") {
  const Scenario sc = test::scenario(kVitTraining);
  const workload::ModelShape& m = sc.job.model;
  const double images = 64;
  const auto ops = lowering::lower_training(m, *sc.job.training, sc.layout, sc.runtime);
  const Op* patch = find_op(ops, "patch_embed", Phase::kForward);
  REQUIRE(patch != nullptr);
  // a 16x16/16 convolution: M = images x 196 patches, N = hidden, K = 3 x 16 x 16
  CHECK(patch->m == images * 196);
  CHECK(patch->n == 768);
  CHECK(patch->k == 3 * 16 * 16);
  const Op* cls = find_op(ops, "classifier", Phase::kForward);
  REQUIRE(cls != nullptr);
  CHECK(cls->m == images);  // the class token's row of each image, not all 197
  CHECK(cls->n == 1000);
  CHECK(find_op(ops, "patch_embed.wgrad", Phase::kBackward) != nullptr);
  CHECK(find_op(ops, "patch_embed.dgrad", Phase::kBackward) == nullptr);  // the image needs no gradient
  CHECK(find_op(ops, "logits", Phase::kForward) == nullptr);
  CHECK(find_op(ops, "embedding", Phase::kForward) == nullptr);
  // The blocks run over 197 tokens per image: the QKV projection's M.
  const Op* qkv = find_op(ops, "qkv", Phase::kForward);
  REQUIRE(qkv != nullptr);
  CHECK(qkv->m == images * 197);
  // Inference: the same ends, and no KV cache written.
  workload::Inference inf;
  const auto fwd = lowering::lower_forward(m, inf, sc.runtime, 1, images, 197, 197);
  CHECK(find_op(fwd, "kv_cache.write", Phase::kForward) == nullptr);
  REQUIRE(find_op(fwd, "classifier", Phase::kForward) != nullptr);
  CHECK(find_op(fwd, "classifier", Phase::kForward)->m == images);
}

TEST_CASE("a vit trains on images of 197 tokens and reports images per second", "[vit]") {
  const Scenario sc = test::scenario(kVitTraining);
  CHECK(sc.job.training->seq_len == 197);
  CHECK(sc.job.training->tokens == Approx(1e6 * 197));
  const step::Evaluation e = step::evaluate(sc);
  CHECK(e.samples_per_s == Approx(64.0 / e.step.time.value()));
  CHECK(e.tokens_per_s == Approx(197.0 * e.samples_per_s));
  const Scenario inf = test::scenario(R"(name = "vit inference"
[system]
gpu = "rtx4090"
gpus = 1
[model]
preset = "vit-b16"
[inference]
batch = 32
)");
  CHECK(inf.runtime.id == "pytorch-eager");
  const step::Evaluation ie = step::evaluate(inf);
  CHECK(ie.samples_per_s == Approx(32.0 / ie.step.time.value()));
}

TEST_CASE("a vit spec ties max_seq to the patches and refuses causal attention", "[vit][errors]") {
  Catalog c = test::catalog();
  c.add_file(SpecKind::kModel, "bad-vit", catalog::SpecFile{"specs/models/bad-vit.toml", R"(base = "vit-b16"
name = "bad"
patch = 15
max_seq = 257
causal = true
)"});
  const auto ds = diagnostics_of([&] { (void)c.model("bad-vit"); });
  CHECK(has_key(ds, "patch"));    // 15 does not divide 224
  CHECK(has_key(ds, "max_seq"));  // (224 / 15)^2 + 1 = 197 tokens, not 257
  CHECK(has_key(ds, "causal"));
}

TEST_CASE("a vit's inference pass counts the FLOPs of its compute-bound kernels, so the diagnosis knows their rate",
          "[vit][explain]") {
  // 4 x H200 at batch 32: the GEMMs are compute-bound, and the compute bottleneck states the share
  // of the peak they reach (FLOPs of the compute-bound kernels over their time over the peak).
  const answer::Estimate e = answer::estimate(test::scenario(R"(name = "vit inference"
[system]
gpu = "h200-sxm"
gpus = 4
[model]
preset = "vit-b16"
[inference]
batch = 32
weight_precision = "bf16"
)"));
  const step::StepBreakdown& s = e.eval.step;
  REQUIRE(s.gemm.value() > 0);
  CHECK(s.gemm_flops.value() > 0);
  CHECK(e.diagnosis.peak_fraction == Approx((s.gemm_flops / s.gemm) / e.eval.peak));
  CHECK(e.diagnosis.peak_fraction > 0.1);
  CHECK(e.diagnosis.peak_fraction < 1.0);
}
