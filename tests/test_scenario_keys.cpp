// The scenario loader takes every key the schema lists (docs/scenarios.md), each into its field.
#include "helpers.hpp"

using namespace gpusim;
using hardware::GpuSpec;

TEST_CASE("the loader accepts every key the schema lists", "[scenario][docs]") {
  // Every key of every table at once (the preset form; params and the shape keys are exclusive
  // with it and are loaded by the second scenario).
  const Scenario sc = test::scenario(R"(name = "all keys"
[system]
gpu = "h100-sxm5-80gb"
gpus = 16
gpus_per_node = 8
nics_per_node = 8
oversubscription = 1.5
intra_node = "nvlink4"
inter_node = "ib-ndr"
power_limit = "600 W"
pcie_lanes = 8
collectives = "nccl"
host = "server-ddr4"
[model]
preset = "llama2-7b"
name = "renamed"
layers = 32
hidden = 4096
heads = 32
kv_heads = 8
ffn_hidden = 11008
ffn = "swiglu"
vocab = 32000
tied_embeddings = false
causal = true
norm = "rmsnorm"
bias = false
position = "rope"
max_seq = 4096
dropout = 0.1
[model.moe]
experts = 8
top_k = 2
expert_ffn_hidden = 2048
shared_ffn_hidden = 1024
dense_layers = 1
every = 2
capacity_factor = 1.25
[model.mla]
q_lora_rank = 512
kv_lora_rank = 256
qk_nope_head_dim = 64
qk_rope_head_dim = 32
v_head_dim = 64
[training]
tokens = 1e9
seq_len = 2048
global_batch = 64
micro_batch = 2
precision = "bf16"
optimizer = "adamw"
recompute = "selective"
flash_attention = true
cuda_graphs = true
offload_optimizer = "cpu"
offload_params = "none"
offload_activations = true
master_weights = false
optimizer_states = "fp32"
paged_optimizer = false
optimizer_in_backward = false
[parallelism]
tensor = 2
pipeline = 2
data = 4
zero = 1
sequence = true
virtual_stages = 2
uneven_stages = false
expert = 2
expert_imbalance = 1.1
[runtime]
name = "megatron-te"
launch = "cuda-graphs"
dispatch = "2 us"
autocast = false
composite_ops = false
activation_layout = "batch-major"
attention = "flash2"
optimizer = "fused"
loss_chunks = 4
quantized_matmul = "mmq"
[runtime.fusion]
norm_residual = true
bias_activation = true
rope = true
cross_entropy = true
bias_grad = false
norm_backward = false
projections = false
[runtime.overlap]
data_parallel = 0.5
parameter_gather = 0.5
tensor_parallel = 0.5
pipeline = 0.5
expert_parallel = 0.5
[runtime.efficiency]
quantized = 1.0
remainder = 0.1
gemv_inflight = "32 KiB"
mmq = 0.3
attention_forward = 0.8
attention_backward = 0.6
[input]
sample_bytes = "8 kB"
cpu_time_per_sample = "1 ms"
workers = 8
storage_bandwidth = "2 GB/s"
pinned_memory = true
[cost]
electricity = "0.2 USD/kWh"
utilization = 0.5
cloud_gpu = "a100-sxm4-80gb"
cloud_rate = "2 USD/h"
purchase = "400000 USD"
host_power = "1 kW"
pue = 1.3
lifetime = "4 years"
carbon_intensity = "0.3 kg/kWh"
)");
  CHECK(sc.job.model.kv_heads == 8);
  CHECK(sc.layout.virtual_stages == 2);
  CHECK(sc.cloud_system.has_value());
  CHECK(sc.runtime.id == "megatron-te");
  CHECK(sc.runtime.remainder == Approx(0.1));
  CHECK(sc.runtime.gemv_inflight.value() == Approx(32.0 * 1024));
  CHECK(sc.runtime.quantized_matmul == workload::QuantizedMatmul::kMmq);
  CHECK(sc.runtime.mmq == Approx(0.3));
  CHECK(sc.runtime.attention_forward == Approx(0.8));
  CHECK(sc.runtime.attention_backward == Approx(0.6));
  CHECK_FALSE(sc.runtime.fusion.projections);
  CHECK(sc.runtime.overlap.pipeline == Approx(0.5));
  CHECK(sc.runtime.overlap.expert_parallel == Approx(0.5));
  REQUIRE(sc.job.model.moe);
  CHECK(sc.job.model.moe->capacity_factor == Approx(1.25));
  CHECK(sc.job.model.moe_layers() == 16);  // layers 1, 3, ..., 31
  REQUIRE(sc.job.model.mla);
  CHECK(sc.job.model.mla->kv_lora_rank == 256);
  CHECK(sc.layout.expert == 2);
  CHECK(sc.layout.expert_imbalance == Approx(1.1));
  // megatron-te's own values are sequence-major and both fused: the scenario's keys win
  CHECK(sc.runtime.activation_layout == workload::ActivationLayout::kBatchMajor);
  CHECK_FALSE(sc.runtime.fusion.bias_grad);
  CHECK_FALSE(sc.runtime.fusion.norm_backward);
  CHECK(sc.job.model.dropout == Approx(0.1));
  CHECK(sc.system.host.id == "server-ddr4");
  CHECK(sc.job.training->offload_optimizer == workload::Offload::kCpu);
  CHECK(sc.job.training->offload_activations);
  CHECK_FALSE(sc.job.training->master_weights);
  CHECK(sc.job.training->states() == workload::StatePrecision::kFp32);
  CHECK_FALSE(sc.job.training->paged_optimizer);
  CHECK_FALSE(sc.job.training->optimizer_in_backward);
  CHECK(sc.runtime.loss_chunks == 4);
  // x8 halves the host link: bandwidth x lanes / 16
  CHECK(sc.system.pcie.bandwidth.value() == Approx(test::catalog().link("pcie5").bandwidth.value() * 8 / 16));
  const Scenario quick = test::scenario(R"(name = "params"
[system]
gpu = "rtx4090"
gpus = 1
[model]
params = 1e9
vocab = 50000
[inference]
batch = 4
prompt_tokens = 64
output_tokens = 64
weight_precision = "int8"
kv_precision = "fp8"
cuda_graphs = true
)");
  CHECK(quick.job.model.vocab == 50000);
  const Scenario served = test::scenario(R"(name = "served"
[system]
gpu = "h100-sxm5-80gb"
gpus = 2
[model]
preset = "llama3-8b"
[parallelism]
tensor = 2
[inference]
prompt_tokens = 256
output_tokens = 64
[serving]
arrival = "poisson"
rate = "3 req/s"
requests = 50
seed = 7
length_spread = 0.25
output_spread = 0.1
scheduler = "continuous"
max_seqs = 64
max_batched_tokens = 1024
chunked_prefill = false
kv_block = 32
memory_fraction = 0.8
memory_basis = "free"
reserve_output = true
allreduce_max = "4 MiB"
allreduce_one_shot_max = "128 KiB"
allreduce_latency = "4 us"
step_overhead = "0.5 ms"
schedule_per_sequence = "20 us"
output_per_sequence = "10 us"
async_output = true
overlap_scheduler = true
scheduler_steps = 4
mixed_batches = false
api_latency = "8 ms"
tokenize_per_token = "2 us"
allreduce_on_amd = false
prefix_tokens = 96
prefix_hit_rate = 0.5
[serving.speculative]
method = "eagle"
tokens = 4
acceptance = 0.8
draft_layers = 2
[slo]
ttft = "300 ms"
tpot = "20 ms"
e2e = "10 s"
percentile = "p90"
[runtime]
name = "vllm"
)");
  REQUIRE(served.slo.has_value());
  CHECK(served.slo->ttft->value() == Approx(0.3));
  CHECK(served.slo->tpot->value() == Approx(0.02));
  CHECK(served.slo->e2e->value() == Approx(10.0));
  CHECK(served.slo->percentile == scenario::Percentile::kP90);
  const workload::ServingEngine& engine = served.runtime.serving;
  CHECK(served.job.inference->load.rate == Approx(3.0));
  CHECK(served.job.inference->load.requests == 50);
  CHECK(served.job.inference->load.seed == 7);
  CHECK(served.job.inference->load.length_spread == Approx(0.25));
  CHECK(served.job.inference->load.output_spread == Approx(0.1));
  CHECK(engine.max_seqs == 64);
  CHECK(engine.max_batched_tokens == 1024);
  CHECK_FALSE(engine.chunked_prefill);
  CHECK(engine.kv_block == 32);
  CHECK(engine.memory_fraction == Approx(0.8));
  CHECK(engine.memory_basis == workload::MemoryBasis::kFree);
  CHECK(engine.reserve_output);
  CHECK(engine.allreduce_max.value() == Approx(4.0 * 1024 * 1024));
  CHECK(engine.allreduce_one_shot_max.value() == Approx(128.0 * 1024));
  CHECK(engine.allreduce_latency.value() == Approx(4e-6));
  CHECK(engine.step_overhead.value() == Approx(0.5e-3));
  CHECK(engine.schedule_per_sequence.value() == Approx(20e-6));
  CHECK(engine.output_per_sequence.value() == Approx(10e-6));
  CHECK(engine.async_output);
  CHECK(engine.overlap_scheduler);
  CHECK(engine.scheduler_steps == 4);
  CHECK_FALSE(engine.mixed_batches);
  CHECK(engine.api_latency.value() == Approx(8e-3));
  CHECK(engine.tokenize_per_token.value() == Approx(2e-6));
  CHECK_FALSE(engine.allreduce_on_amd);
  CHECK(served.job.inference->prefix.tokens == 96);
  CHECK(served.job.inference->prefix.hit_rate == Approx(0.5));
  const workload::Speculative& spec = served.job.inference->speculative;
  CHECK(spec.method == workload::SpecMethod::kEagle);
  CHECK(spec.tokens == 4);
  CHECK(spec.acceptance == Approx(0.8));
  REQUIRE(spec.proposer.has_value());
  CHECK(spec.proposer->layers == 2);
  // The draft model's key, on its own method.
  const Scenario drafted = test::scenario(R"(name = "draft"
[system]
gpu = "h100-sxm5-80gb"
gpus = 1
[model]
preset = "llama3-8b"
[inference]
[serving.speculative]
method = "draft"
draft_model = "llama3.2-1b"
[runtime]
name = "vllm"
)");
  CHECK(drafted.job.inference->speculative.draft_name == "llama3.2-1b");
  const Scenario pools = test::scenario(R"(name = "pools"
[system]
gpu = "h100-sxm5-80gb"
gpus = 8
[model]
preset = "llama3-70b"
[inference]
weight_precision = "fp8"
[serving]
arrival = "poisson"
rate = "2 req/s"
[serving.disaggregated]
prefill_replicas = 1
decode_replicas = 2
prefill_tensor = 4
decode_tensor = 2
[runtime]
name = "vllm"
)");
  const workload::Disaggregation& d = pools.job.inference->disaggregated;
  CHECK(d.prefill == 1);
  CHECK(d.decode == 2);
  CHECK(d.prefill_tensor == 4);
  CHECK(d.decode_tensor == 2);
  REQUIRE(drafted.job.inference->speculative.proposer.has_value());
  CHECK(drafted.job.inference->speculative.proposer->hidden == 2048);
  const Scenario closed = test::scenario(R"(name = "closed loop"
[system]
gpu = "h100-sxm5-80gb"
gpus = 1
[model]
preset = "llama3-8b"
[inference]
[serving]
arrival = "concurrency"
concurrency = 16
[runtime]
name = "vllm"
)");
  CHECK(closed.job.inference->load.concurrency == 16);
  const Scenario images = test::scenario(R"(name = "images"
[system]
gpu = "rtx4090"
gpus = 1
[model]
preset = "resnet50"
[training]
images = 1e6
global_batch = 64
micro_batch = 64
memory_format = "nchw"
)");
  CHECK(images.job.training->tokens == Approx(1e6));
  CHECK(images.job.training->memory_format == workload::MemoryFormat::kNchw);
  // LoRA's keys (a dense model: adapters on a mixture of experts are refused).
  const Scenario lora = test::scenario(
      test::kSmallTraining,
      {{"training.method", "\"lora\""}, {"training.lora_rank", "8"}, {"training.lora_targets", "\"attention\""}});
  CHECK(lora.job.training->method == workload::Method::kLora);
  CHECK(lora.job.training->lora_rank == 8);
  CHECK(lora.job.training->lora_targets == workload::LoraTargets::kAttention);
  const Scenario ring = test::scenario(test::kSmallTraining, {{"parallelism.context", "2"}});
  CHECK(ring.layout.context == 2);
  CHECK(ring.layout.data == 4);
  // The scenarios cover the schema, table by table.
  std::size_t covered = 0;
  for (const auto& t : scenario::schema()) {
    covered += t.keys.size();
  }
  // top level, system, model and its two tables, training, inference, serving and its table, slo,
  // parallelism, runtime and its three tables, input, cost
  CHECK(covered == 11 + 11 + 20 + 7 + 5 + 21 + 6 + 32 + 5 + 4 + 4 + 10 + 13 + 7 + 5 + 6 + 5 + 9);
}
