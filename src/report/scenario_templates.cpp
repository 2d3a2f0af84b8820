// `gpusim init`'s templates: a commented scenario to start from. Every key it sets is documented in
// docs/scenarios.md; the values are an example to edit (GPT-2 124M on one RTX 4090, Llama-3-8B
// served on one H100), not defaults, and each template loads as it is (a test runs it).
#include <string>

#include "gpusim/report.hpp"

namespace gpusim::report {

namespace {

constexpr const char* kTraining =
    R"(# A training scenario (format: docs/scenarios.md). Edit, then: gpusim estimate THIS_FILE
name = "GPT-2 124M, 10B tokens on one RTX 4090"

[system]
gpu = "rtx4090"               # a GPU id: gpusim specs list
gpus = 1
# gpus_per_node = 8           # default: the GPU's usual node (8 for SXM, up to 4 for consumer cards)

[model]
preset = "gpt2-124m"          # or set the shape yourself: layers, hidden, heads, ffn, vocab, ...

[training]
tokens = 10e9                 # tokens to train on
seq_len = 1024
global_batch = 512            # sequences per optimizer step
micro_batch = 16              # sequences per forward/backward on one GPU
precision = "bf16"            # fp32 | tf32 | fp16 | bf16 | fp8
optimizer = "adamw"
flash_attention = true

# [parallelism]               # default: data parallel over all GPUs
# tensor = 1
# pipeline = 1
# zero = 0                    # 0..3

[cost]
utilization = 0.15            # share of the year the owned machine is busy (break-even)
# electricity = "0.12 USD/kWh"

[runtime]
name = "pytorch-ddp"          # the software stack: gpusim specs list shows the runtimes
)";

constexpr const char* kServing =
    R"(# A serving scenario (format: docs/scenarios.md). Edit, then: gpusim estimate THIS_FILE
# and gpusim plan THIS_FILE to search the deployments that meet the [slo].
name = "Llama-3-8B served on one H100, vLLM at 10 req/s"

[system]
gpu = "h100-sxm5-80gb"        # a GPU id: gpusim specs list
gpus = 1

[model]
preset = "llama3-8b"

[inference]
prompt_tokens = 1024          # mean prompt length
output_tokens = 256           # mean answer length
weight_precision = "bf16"     # bf16 | fp16 | fp8 | int8 | int4 ...
kv_precision = "bf16"

[serving]
arrival = "poisson"           # requests arrive at random at `rate`
rate = "10 req/s"
requests = 1000               # simulated requests
length_spread = 0.5           # lengths uniform within +-50 % of the means

[slo]
ttft = "500 ms"               # time to first token
tpot = "50 ms"                # time per output token
# percentile = "p99"          # mean | p50 | p90 | p99

[runtime]
name = "vllm"                 # vllm | sglang | tensorrt-llm | llama.cpp ...: gpusim specs list
)";

}  // namespace

std::string scenario_template(workload::JobKind kind) {
  return kind == workload::JobKind::kServing ? kServing : kTraining;
}

}  // namespace gpusim::report
