// [runtime] and [input] of a scenario: the software stack a job runs on (a catalog runtime, the
// default one for its kind and layout, and the settings the scenario overrides) and the host input
// pipeline that feeds it. Both read after the job and its layout are known.
#include "scenario/internal.hpp"

namespace gpusim::scenario::detail {

using parse::Need;
using parse::Reader;
using units::Dim;

// The software stack a job runs on when the scenario names none (docs/scenarios.md): Megatron-LM
// with Transformer Engine for tensor- or pipeline-parallel layouts, PyTorch FSDP for ZeRO-3,
// PyTorch DDP otherwise; Hugging Face transformers for inference (plain PyTorch eager for an image
// model).
std::string default_runtime(const Scenario& sc) {
  if (!sc.job.training) {
    return sc.job.model.images() ? "pytorch-eager" : "hf-transformers";
  }
  if (sc.layout.tensor > 1 || sc.layout.pipeline > 1) {
    return "megatron-te";
  }
  return sc.layout.zero >= 3 ? "pytorch-fsdp" : "pytorch-ddp";
}

void read_runtime(Reader* r, Diagnostics& diags, const catalog::Catalog& cat, Scenario& sc, const RuntimeOverrides& o) {
  const std::string fallback = default_runtime(sc);
  const std::string id = r == nullptr ? fallback : r->string("name", Need::kOptional).value_or(fallback);
  sc.unset.runtime = r == nullptr || !r->has("name");
  auto error = [&](std::string_view key, const std::string& message) {
    if (r != nullptr) {
      r->error(key, message);
    } else {
      diags.add(SourcePos{sc.origin}, "runtime." + std::string(key), message);
    }
  };
  if (!cat.has(catalog::SpecKind::kRuntime, id)) {
    error("name", "unknown runtime \"" + id + "\" (" + cat.known_ids_near(catalog::SpecKind::kRuntime, id) + ")");
    return;
  }
  try {
    sc.runtime = cat.runtime(id);
  } catch (const InputError& e) {
    diags.append(e.diagnostics());
    return;
  }
  const workload::RuntimeKind want =
      sc.job.training ? workload::RuntimeKind::kTraining : workload::RuntimeKind::kInference;
  if (sc.runtime.kind != want) {
    error("name", "runtime \"" + id + "\" runs " + base::name_in(workload::kRuntimeKindNames, sc.runtime.kind) +
                      " jobs, but the scenario has [" + base::name_in(workload::kRuntimeKindNames, want) + "]");
  }
  // The scenario's own settings win over the runtime's defaults: [runtime] keys, then the
  // switches of [training] and [inference].
  if (r != nullptr) {
    parse::read_runtime_settings(*r, sc.runtime, Need::kOptional);
  }
  if (o.flash_attention) {
    if (!*o.flash_attention) {
      sc.runtime.attention = workload::AttentionKernel::kUnfused;
    } else if (sc.runtime.attention == workload::AttentionKernel::kUnfused) {
      sc.runtime.attention = workload::AttentionKernel::kFlash2;
    }
  }
  if (o.cuda_graphs) {
    sc.runtime.cuda_graphs = *o.cuda_graphs;
  }
  if (r != nullptr) {
    r->finish();
  }
}

void read_input(Reader& r, Scenario& sc) {
  workload::InputPipeline in;
  if (auto v = r.quantity("sample_bytes", Dim::kBytes, Need::kRequired)) {
    in.sample_bytes = Bytes(*v);
  }
  if (auto v = r.quantity("cpu_time_per_sample", Dim::kTime, Need::kRequired)) {
    in.cpu_time_per_sample = Seconds(*v);
  }
  in.workers = count(r, "workers", Need::kOptional, 1, limits::kWorkers).value_or(1);
  // A local NVMe SSD (assumption: PCIe 4 NVMe drives read ~3-7 GB/s; the low end is taken).
  constexpr double kDefaultStorageBytesPerSecond = 3e9;
  in.storage_bandwidth = BytesPerSecond(
      r.quantity("storage_bandwidth", Dim::kBandwidth, Need::kOptional).value_or(kDefaultStorageBytesPerSecond));
  in.pinned_memory = r.boolean("pinned_memory", Need::kOptional).value_or(true);
  r.finish();
  sc.job.input = in;
}

}  // namespace gpusim::scenario::detail
