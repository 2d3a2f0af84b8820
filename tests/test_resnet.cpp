// ResNet family: the layer list, parameter and MAC counts against torchvision's published figures,
// the implicit-GEMM lowering's FLOPs, the image-model scenario rules and images/s in inference.
#include <algorithm>
#include <numeric>

#include "helpers.hpp"

using namespace gpusim;
using gpusim::test::diagnostics_of;
using lowering::Op;
using lowering::OpKind;
using lowering::Phase;

namespace {

const workload::ModelShape& resnet50() {
  static const workload::ModelShape m = test::catalog().model("resnet50");
  return m;
}

std::vector<Diagnostic> errors_of(const std::string& toml) {
  return diagnostics_of([&] { (void)test::scenario(toml); });
}

bool has_key(const std::vector<Diagnostic>& ds, const std::string& key) {
  return std::any_of(ds.begin(), ds.end(), [&](const Diagnostic& d) { return d.key == key; });
}

double flops_of(const std::vector<Op>& ops, Phase phase) {
  double f = 0;
  for (const Op& op : ops) {
    if (op.kind == OpKind::kGemm && op.phase == phase) {
      f += op.flops.value() * op.count;
    }
  }
  return f;
}

const char* kTraining = R"(name = "r50"
[system]
gpu = "a100-sxm4-80gb"
gpus = 1
[model]
preset = "resnet50"
[training]
images = 1.28e6
global_batch = 256
micro_batch = 256
precision = "fp16"
optimizer = "sgd"
)";

}  // namespace

TEST_CASE("resnet50 has torchvision's 25,557,032 parameters and 4.09 GMACs per 224 x 224 image", "[resnet]") {
  const workload::ModelShape& m = resnet50();
  REQUIRE(m.family == workload::Family::kResNet);
  // torchvision ResNet50_Weights: num_params 25,557,032; GFLOPS 4.09 (multiply-accumulates).
  CHECK(workload::total_params(m) == 25'557'032.0);
  CHECK(workload::resnet_macs(m.resnet) == Approx(4.09e9).epsilon(0.005));
  // 53 convolutions (stem, 16 blocks of three, 4 projections): 3 tensors each (weight, BN scale,
  // BN shift) plus the classifier's weight and bias.
  CHECK(workload::resnet_convs(m.resnet).size() == 53);
  CHECK(workload::resnet_param_tensors(m.resnet) == 161.0);
}

TEST_CASE("resnet v1.5 downsamples in the 3x3 convolution of each stage's first block", "[resnet]") {
  const auto convs = workload::resnet_convs(resnet50().resnet);
  CHECK(convs.front().out_hw == 112);  // 7x7/2 stem on 224
  std::vector<std::int64_t> stage_out;
  for (const auto& c : convs) {
    if (c.name.find("conv3x3") != std::string::npos && c.stride == 2) {
      CHECK(c.in_hw == 2 * c.out_hw);
      stage_out.push_back(c.out_hw);
    }
    if (c.name.find("conv1x1.reduce") != std::string::npos) {
      CHECK(c.stride == 1);  // v1 would put the stride here
    }
  }
  CHECK(stage_out == std::vector<std::int64_t>{28, 14, 7});
  CHECK(workload::resnet_features(resnet50().resnet) == 2048);
  workload::ResNet v1 = resnet50().resnet;
  v1.stride_in_3x3 = false;
  const auto v1_convs = workload::resnet_convs(v1);
  // Same parameters, fewer MACs: the 3x3 of each downsampling block runs on the smaller map.
  CHECK(workload::resnet_params(v1) == workload::resnet_params(resnet50().resnet));
  CHECK(workload::resnet_macs(v1) < workload::resnet_macs(resnet50().resnet));
}

TEST_CASE("convolutions lower to implicit GEMMs of M = N*Ho*Wo, N = Cout, K = Cin*R*S", "[resnet]") {
  const double images = 32;
  const auto ops = lowering::lower_resnet(resnet50(), DType::kFp16, images, true, true);
  const auto it = std::find_if(ops.begin(), ops.end(), [](const Op& op) { return op.name == "stage2.conv3x3"; });
  REQUIRE(it != ops.end());
  // stage 2's first 3x3: 128 -> 128 channels, stride 2, 56 -> 28
  CHECK(it->m == images * 28 * 28);
  CHECK(it->n == 128);
  CHECK(it->k == 128 * 3 * 3);
  // Implicit GEMM: input, filter and output once each, not the 9-fold im2col matrix.
  CHECK(it->bytes.value() == Approx((images * 56 * 56 * 128 + 128 * 128 * 9 + images * 28 * 28 * 128) * 2.0));
}

TEST_CASE("training FLOPs are forward plus dgrad plus wgrad, with no data gradient for the image", "[resnet]") {
  const workload::ModelShape& m = resnet50();
  const double images = 64;
  const auto ops = lowering::lower_resnet(m, DType::kFp16, images, true, true);
  const double fwd = 2.0 * workload::resnet_macs(m.resnet) * images;  // 2·MACs per image
  const auto stem = workload::resnet_convs(m.resnet).front();
  CHECK(flops_of(ops, Phase::kForward) == Approx(fwd));
  CHECK(flops_of(ops, Phase::kBackward) == Approx(2.0 * fwd - 2.0 * stem.macs() * images));
  // Model FLOPs per image (seq_len 1): 6 x MACs.
  CHECK(workload::training_flops_per_token(m, 1).value() == Approx(6.0 * workload::resnet_macs(m.resnet)));
  // Inference lowers the forward only, with no weight casts.
  const auto inf = lowering::lower_resnet(m, DType::kFp16, images, false, false);
  CHECK(flops_of(inf, Phase::kForward) == Approx(fwd));
  CHECK(flops_of(inf, Phase::kBackward) == 0);
}

TEST_CASE("a resnet training step reports images per second and keeps its activations per image", "[resnet]") {
  const Scenario sc = test::scenario(kTraining);
  CHECK(sc.job.training->seq_len == 1);
  CHECK(sc.job.training->tokens == 1.28e6);
  const step::Evaluation e = step::evaluate(sc);
  CHECK(e.samples_per_s == Approx(256.0 / e.step.time.value()));
  CHECK(e.tokens_per_s == Approx(e.samples_per_s));
  // Saved activations: two maps per convolution, the image and the max pool's output, fp16.
  CHECK(e.memory.activations.value() == Approx(workload::resnet_saved_elements(resnet50().resnet) * 256 * 2.0));
  CHECK(e.memory.fits());
  // A larger batch amortizes the same per-step optimizer: images/s does not fall.
  const Scenario big = test::scenario(kTraining, {{"training.global_batch", "512"}, {"training.micro_batch", "512"}});
  CHECK(step::evaluate(big).samples_per_s >= e.samples_per_s * 0.99);
}

TEST_CASE("resnet inference is one forward pass per batch: images/s = batch x replicas / pass", "[resnet]") {
  const Scenario sc = test::scenario(R"(name = "r50 inference"
[system]
gpu = "t4"
gpus = 2
[model]
preset = "resnet50"
[inference]
batch = 128
weight_precision = "fp16"
)");
  const step::Evaluation e = step::evaluate(sc);
  REQUIRE(e.inference);
  CHECK(e.inference->replicas == 2);
  CHECK(e.samples_per_s == Approx(2.0 * 128.0 / e.step.time.value()));
  CHECK(e.inference->requests_per_s == Approx(e.samples_per_s));
  CHECK(e.model_flops_per_gpu.value() ==
        Approx(2.0 * workload::resnet_macs(resnet50().resnet) * e.samples_per_s / 2.0));
}

TEST_CASE("a resnet runs data-parallel only and trains on images, not tokens", "[resnet][errors]") {
  const std::string base = kTraining;
  std::string two = base;
  two.replace(two.find("gpus = 1"), 8, "gpus = 2");
  two.replace(two.find("global_batch = 256"), 18, "global_batch = 512");
  CHECK(errors_of(two + "[parallelism]\ndata = 2\n").empty());
  const auto tp = errors_of(two + "[parallelism]\ntensor = 2\n");
  CHECK(has_key(tp, "parallelism.tensor"));
  CHECK(has_key(errors_of(two + "[parallelism]\npipeline = 2\n"), "parallelism.pipeline"));
  std::string with_tokens = base;
  with_tokens.replace(with_tokens.find("images = 1.28e6"), 15, "tokens = 1e9\nseq_len = 1");
  const auto tok = errors_of(with_tokens);
  CHECK(has_key(tok, "training.tokens"));
  CHECK(has_key(tok, "training.seq_len"));
  CHECK(has_key(tok, "training.images"));  // required, and missing
  std::string with_layers = base;
  with_layers.replace(with_layers.find("preset = \"resnet50\""), 19, "preset = \"resnet50\"\nlayers = 50");
  CHECK(has_key(errors_of(with_layers), "model.layers"));
  // A transformer takes no images.
  std::string llm = test::kSmallTraining;
  llm.replace(llm.find("tokens = 1e9"), 12, "tokens = 1e9\nimages = 5");
  CHECK(has_key(errors_of(llm), "training.images"));
}

TEST_CASE("a resnet spec's blocks, image and family are checked with their keys", "[resnet][errors]") {
  Catalog c = test::catalog();
  c.add_file(SpecKind::kModel, "bad-resnet", catalog::SpecFile{"specs/models/bad-resnet.toml", R"(name = "bad"
family = "resnet"
image = 2
stem_width = 64
blocks = [3, 0, "six"]
width = 64
expansion = 4
stride_in_3x3 = true
classes = 1000
)"});
  const auto ds = diagnostics_of([&] { (void)c.model("bad-resnet"); });
  CHECK(has_key(ds, "blocks"));
  CHECK(std::count_if(ds.begin(), ds.end(), [](const Diagnostic& d) { return d.key == "blocks"; }) == 2);
  CHECK(has_key(ds, "image"));  // 2 pixels cannot survive the stem and the pool
  c.add_file(SpecKind::kModel, "bad-family", catalog::SpecFile{"specs/models/bad-family.toml", R"(name = "bad"
family = "cnn"
)"});
  CHECK(has_key(diagnostics_of([&] { (void)c.model("bad-family"); }), "family"));
}

namespace {

double memory_bytes(const std::vector<Op>& ops) {
  double b = 0;
  for (const Op& op : ops) {
    if (op.kind == OpKind::kMemoryBound) {
      b += op.bytes.value() * op.count;
    }
  }
  return b;
}

}  // namespace

TEST_CASE("nchw on tensor cores: each cuDNN call reads and writes a transposed copy of its operands", "[resnet]") {
  const workload::ModelShape& m = resnet50();
  const double images = 16;
  const double e = 2.0;  // fp16
  const auto nhwc = lowering::lower_resnet(m, DType::kFp16, images, true, true);
  const auto nchw = lowering::lower_resnet(m, DType::kFp16, images, true, true, workload::MemoryFormat::kNchw);
  // Forward x, w -> y; data gradient dy, w -> dx (none for the stem); weight gradient x, dy -> dw:
  // every operand once in, once out.
  const auto convs = workload::resnet_convs(m.resnet);
  double expected = 0;
  for (std::size_t i = 0; i < convs.size(); ++i) {
    const double x = images * convs[i].in_elements() * e;
    const double y = images * convs[i].out_elements() * e;
    const double w = convs[i].weights() * e;
    const double calls = i == 0 ? 2.0 : 3.0;
    expected += calls * 2.0 * (x + y + w);
  }
  CHECK(memory_bytes(nchw) - memory_bytes(nhwc) == Approx(expected));
  // The convolutions themselves are the same GEMMs.
  CHECK(flops_of(nchw, Phase::kForward) == Approx(flops_of(nhwc, Phase::kForward)));
  CHECK(flops_of(nchw, Phase::kBackward) == Approx(flops_of(nhwc, Phase::kBackward)));
  // Inference: the forward's transposes only.
  const auto inf_nchw = lowering::lower_resnet(m, DType::kFp16, images, false, false, workload::MemoryFormat::kNchw);
  const auto inf_nhwc = lowering::lower_resnet(m, DType::kFp16, images, false, false);
  double forward = 0;
  for (const auto& c : convs) {
    forward += 2.0 * (images * (c.in_elements() + c.out_elements()) + c.weights()) * e;
  }
  CHECK(memory_bytes(inf_nchw) - memory_bytes(inf_nhwc) == Approx(forward));
}

TEST_CASE("nchw fp32 convolutions without tensor cores take the layout as it is", "[resnet]") {
  const auto nhwc = lowering::lower_resnet(resnet50(), DType::kFp32, 8, true, false);
  const auto nchw = lowering::lower_resnet(resnet50(), DType::kFp32, 8, true, false, workload::MemoryFormat::kNchw);
  CHECK(nchw.size() == nhwc.size());
  CHECK(memory_bytes(nchw) == Approx(memory_bytes(nhwc)));
}

TEST_CASE("training.memory_format: nchw slows a resnet step, and is an error for a transformer or a vit",
          "[resnet][errors]") {
  const Scenario cl = test::scenario(kTraining);
  const Scenario nchw = test::scenario(kTraining, {{"training.memory_format", "\"nchw\""}});
  CHECK(cl.job.training->memory_format == workload::MemoryFormat::kChannelsLast);
  REQUIRE(nchw.job.training->memory_format == workload::MemoryFormat::kNchw);
  CHECK(step::evaluate(nchw).step.time > step::evaluate(cl).step.time);
  CHECK(has_key(errors_of(std::string(kTraining) + "memory_format = \"nhwc\"\n"), "training.memory_format"));
  std::string llm = test::kSmallTraining;
  llm.replace(llm.find("tokens = 1e9"), 12, "tokens = 1e9\nmemory_format = \"nchw\"");
  CHECK(has_key(errors_of(llm), "training.memory_format"));
  std::string vit = kTraining;
  vit.replace(vit.find("preset = \"resnet50\""), 19, "preset = \"vit-b16\"");
  CHECK(has_key(errors_of(vit + "memory_format = \"nchw\"\n"), "training.memory_format"));
}
