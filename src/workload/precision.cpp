// Bytes per updated parameter of each copy a training step keeps: the precision policy.
// Mixed precision [rajbhandari-2020, §3]: 16-bit weights and gradients beside an fp32 master copy
// and K fp32 moments, 2 + 2 + 4 + 4K bytes (AdamW, K = 2: 16). Under torch.autocast over unsharded
// fp32 parameters the model itself is the master copy (PyTorch AMP [pytorch-amp]): 4 + 4 + 4K; so
// does fp32/tf32 training. Pure 16-bit training keeps no master copy and, unless the states are
// stated otherwise, 16-bit moments: 2 + 2 + 2K (AdamW: 8), as torchtune's recipes run with
// dtype = bf16 [torchtune-memory-docs] and torch.optim keeps a parameter's state in its dtype
// [pytorch-optim-defaults]. bitsandbytes' 32-bit optimizers keep fp32 moments for 16-bit
// parameters and its 8-bit ones a byte per moment plus an fp32 scale per 2048
// [bnb-optimizers-docs, dettmers-8bit-optim-2022].
#include "gpusim/workload.hpp"

namespace gpusim::workload {

double moment_count(Optimizer o) {
  switch (o) {
    case Optimizer::kAdamW:
    case Optimizer::kAdamW8bit:
      return 2.0;  // first and second moment
    case Optimizer::kSgd:
      return 1.0;  // momentum
    case Optimizer::kAdafactor:
      return 0.0;  // factored second moment: O(rows + cols), not per parameter
  }
  return 0.0;
}

double state_bytes(StatePrecision s) {
  switch (s) {
    case StatePrecision::kFp32:
      return 4.0;
    case StatePrecision::kHalf:
      return 2.0;
    case StatePrecision::k8bit:
      return kAdam8bitStateBytes;
  }
  return 0.0;
}

ParameterBytes precision_policy(const Training& t, const Layout& layout, const Runtime& rt) {
  ParameterBytes p;
  const bool wide = units::is_wide(t.precision);
  // Autocast computes over fp32 parameters unless ZeRO-3 / FSDP shards them and gathers 16-bit
  // copies; without a master copy the parameters themselves are 16-bit.
  const bool fp32_model = wide || (t.master_weights && rt.autocast && layout.zero < 3);
  p.weight = fp32_model ? 4.0 : 2.0;
  p.gradient = p.weight;
  p.master = !fp32_model && t.master_weights ? 4.0 : 0.0;
  p.moments = moment_count(t.optimizer);
  p.moment = state_bytes(t.states());
  return p;
}

}  // namespace gpusim::workload
