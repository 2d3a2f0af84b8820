// Readers of a runtime spec (specs/runtimes/<id>.toml, format in specs/README.md): its settings,
// which a scenario's [runtime] table may override one by one, and a serving runtime's engine
// keys, which a scenario's [serving] may override. Apart from the hardware readers because
// scenarios read these too, as overrides.
#include "parse/internal.hpp"

namespace gpusim::parse {

using units::Dim;

void read_runtime_settings(Reader& r, workload::Runtime& rt, Need need) {
  if (auto v = r.choice("launch", workload::kLaunchNames, need)) {
    rt.cuda_graphs = *v == workload::Launch::kCudaGraphs;
  }
  set_q(r, "dispatch", Dim::kTime, rt.dispatch, need, Range::kNonNegative);
  if (auto v = r.boolean("autocast", need)) {
    rt.autocast = *v;
  }
  if (auto v = r.boolean("composite_ops", need)) {
    rt.composite_ops = *v;
  }
  if (auto v = r.choice("activation_layout", workload::kActivationLayoutNames, need)) {
    rt.activation_layout = *v;
  }
  if (auto v = r.choice("attention", workload::kAttentionNames, need)) {
    rt.attention = *v;
  }
  if (auto v = r.choice("optimizer", workload::kOptimizerImplNames, need)) {
    rt.optimizer = *v;
  }
  // Optional in runtime files too: only runtimes with kernels of their own for packed weights state it.
  if (auto v = r.choice("quantized_matmul", workload::kQuantizedMatmulNames, Need::kOptional)) {
    rt.quantized_matmul = *v;
  }
  if (auto f = r.table("fusion", need)) {
    for (auto [key, out] : {std::pair<const char*, bool*>{"norm_residual", &rt.fusion.norm_residual},
                            {"bias_activation", &rt.fusion.bias_activation},
                            {"rope", &rt.fusion.rope},
                            {"cross_entropy", &rt.fusion.cross_entropy},
                            {"bias_grad", &rt.fusion.bias_grad},
                            {"norm_backward", &rt.fusion.norm_backward}}) {
      if (auto v = f->boolean(key, need)) {
        *out = *v;
      }
    }
    // Optional in runtime files too: only runtimes that keep the matrices apart state it.
    if (auto v = f->boolean("projections", Need::kOptional)) {
      rt.fusion.projections = *v;
    }
    f->finish();
  }
  if (auto o = r.table("overlap", need)) {
    for (auto [key, out] : {std::pair<const char*, double*>{"data_parallel", &rt.overlap.data_parallel},
                            {"parameter_gather", &rt.overlap.parameter_gather},
                            {"tensor_parallel", &rt.overlap.tensor_parallel},
                            {"pipeline", &rt.overlap.pipeline}}) {
      if (auto v = o->number(key, need, Range::kNonNegative)) {
        *out = *v;
        if (*v > 1) {
          o->error(key, "a share of communication hidden behind compute is at most 1");
        }
      }
    }
    // Optional in spec files too: only runtimes that run expert parallelism state it.
    if (auto v = o->number("expert_parallel", Need::kOptional, Range::kNonNegative)) {
      rt.overlap.expert_parallel = *v;
      if (*v > 1) {
        o->error("expert_parallel", "a share of communication hidden behind compute is at most 1");
      }
    }
    o->finish();
  }
  if (auto e = r.table("efficiency", need)) {
    if (auto v = e->number("quantized", need, Range::kFraction)) {
      rt.quantized = *v;
    }
    if (auto v = e->number("remainder", need, Range::kNonNegative)) {
      rt.remainder = *v;
    }
    set_q(*e, "gemv_inflight", Dim::kBytes, rt.gemv_inflight, Need::kOptional, Range::kPositive);
    if (auto v = e->number("mmq", Need::kOptional, Range::kFraction)) {
      rt.mmq = *v;
    }
    for (auto [key, into] : {std::pair{"attention_forward", &rt.attention_forward},
                             std::pair{"attention_backward", &rt.attention_backward}}) {
      if (auto v = e->number(key, Need::kOptional, Range::kFraction)) {
        *into = *v;
      }
    }
    e->finish();
  }
  read_loss_settings(r, rt);
  if (rt.kind == workload::RuntimeKind::kTraining && rt.optimizer == workload::OptimizerImpl::kNone) {
    r.error("optimizer", "a training runtime runs an optimizer: expected fused, foreach or per-tensor");
  }
}

void read_serving_engine(Reader& r, workload::ServingEngine& e, Need need) {
  if (auto v = r.choice("scheduler", workload::kSchedulerNames, need)) {
    e.scheduler = *v;
  }
  if (auto v = r.integer("max_seqs", need, 1, limits::kBatch)) {
    e.max_seqs = *v;
  }
  if (auto v = r.integer("max_batched_tokens", need, 1, limits::kSequence)) {
    e.max_batched_tokens = *v;
  }
  if (auto v = r.boolean("chunked_prefill", need)) {
    e.chunked_prefill = *v;
  }
  if (auto v = r.integer("kv_block", need, 1, limits::kSequence)) {
    e.kv_block = *v;
  }
  if (auto v = r.number("memory_fraction", need, Range::kFraction)) {
    e.memory_fraction = *v;
  }
  if (auto v = r.choice("memory_basis", workload::kMemoryBasisNames, need)) {
    e.memory_basis = *v;
  }
  if (auto v = r.boolean("reserve_output", need)) {
    e.reserve_output = *v;
  }
  set_q(r, "allreduce_max", Dim::kBytes, e.allreduce_max, need, Range::kNonNegative);
  set_q(r, "allreduce_one_shot_max", Dim::kBytes, e.allreduce_one_shot_max, need, Range::kNonNegative);
  set_q(r, "allreduce_latency", Dim::kTime, e.allreduce_latency, need, Range::kNonNegative);
  // Optional in runtime files too: most runtimes publish none of the host costs.
  set_q(r, "step_overhead", Dim::kTime, e.step_overhead, Need::kOptional, Range::kNonNegative);
  set_q(r, "schedule_per_sequence", Dim::kTime, e.schedule_per_sequence, Need::kOptional, Range::kNonNegative);
  set_q(r, "output_per_sequence", Dim::kTime, e.output_per_sequence, Need::kOptional, Range::kNonNegative);
  if (auto v = r.boolean("async_output", Need::kOptional)) {
    e.async_output = *v;
  }
  if (auto v = r.boolean("overlap_scheduler", Need::kOptional)) {
    e.overlap_scheduler = *v;
  }
  if (auto v = r.integer("scheduler_steps", Need::kOptional, 1, limits::kSequence)) {
    e.scheduler_steps = *v;
  }
  if (auto v = r.boolean("mixed_batches", Need::kOptional)) {
    e.mixed_batches = *v;
  }
  set_q(r, "api_latency", Dim::kTime, e.api_latency, Need::kOptional, Range::kNonNegative);
  set_q(r, "tokenize_per_token", Dim::kTime, e.tokenize_per_token, Need::kOptional, Range::kNonNegative);
  if (auto v = r.boolean("allreduce_on_amd", Need::kOptional)) {
    e.allreduce_on_amd = *v;
  }
}

void read_runtime(Reader& r, workload::Runtime& rt) {
  r.set_ranges(key_ranges("runtimes"));
  r.allow({"base"});
  if (auto v = r.string("name", Need::kRequired)) {
    rt.name = *v;
  }
  // Optional: a runtime whose behaviour changed between releases states the ones it models.
  if (auto v = r.string("versions", Need::kOptional)) {
    if (auto range = workload::parse_version_range(*v)) {
      rt.versions = *range;
    } else {
      r.error("versions",
              "expected the releases the file models as \"MIN-MAX\", \"MIN-\" or one series, each bound "
              "numbers joined by dots with the lower not above the upper (\"0.5-0.6\", \"0.8-\", \"0.3\"), "
              "got \"" +
                  *v + "\"");
    }
  }
  if (auto v = r.choice("kind", workload::kRuntimeKindNames, Need::kRequired)) {
    rt.kind = *v;
  }
  read_runtime_settings(r, rt, Need::kRequired);
  if (auto recipe = r.table("recipe", Need::kOptional)) {
    if (rt.kind == workload::RuntimeKind::kTraining) {
      read_recipe(*recipe, rt);
    } else {
      r.error("recipe", "[recipe] holds the defaults of training recipes; this runtime runs inference");
    }
  }
  if (rt.quantized_matmul != workload::QuantizedMatmul::kFused && rt.mmq <= 0) {
    r.error("quantized_matmul",
            "the \"mmq\" and \"dequantize\" paths run MMQ kernels: state [efficiency] mmq, their share of the "
            "int8 mma.sync rate, in (0, 1]");
  }
  if (rt.kind == workload::RuntimeKind::kInference) {
    if (auto s = r.table("serving", Need::kRequired)) {
      read_serving_engine(*s, rt.serving, Need::kRequired);
      s->finish();
    }
  }
  if (auto u = r.table("uncertainty", Need::kRequired)) {
    read_runtime_ranges(*u, rt.ranges, rt.kind);
  }
  if (auto m = r.table("meta", Need::kOptional)) {
    rt.sources = m->string_list("sources");
    rt.assumptions = m->string_list("assumptions");
    m->finish();
  }
  r.finish();
}

}  // namespace gpusim::parse
