// JSON report: the DESIGN §5 contract keys (plus a few more), SI units, fractions in 0..1.
#include "gpusim/report/report.hpp"
#include "report/json_writer.hpp"

namespace gpusim {

std::string report_json(const Estimate& e) {
  detail::JsonWriter w;
  w.begin_object();
  w.value("scenario", e.scenario);
  w.begin_object("system");
  w.value("gpu", e.gpu_id);
  w.value("gpu_name", e.gpu_name);
  w.value("gpus", e.gpus);
  w.value("nodes", e.nodes);
  w.value("intra_node", e.fabric);
  w.end_object();

  const StepBreakdown& s = e.step;
  w.begin_object("step");
  w.value("time_s", s.time.value());
  w.value("compute_s", s.compute.value());
  w.value("communication_s", s.communication.value());
  w.value("bubble_s", s.bubble.value());
  w.value("input_stall_s", s.input_stall.value());
  w.value("overhead_s", s.overhead.value());
  w.value("compute_bound_s", s.gemm.value());
  w.value("memory_bound_s", s.memory_bound.value());
  w.value("communication_total_s", s.communication_total.value());
  w.value("kernels", s.kernels);
  w.value("tokens", e.tokens_per_step);
  w.end_object();

  w.begin_object("throughput");
  w.value("tokens_per_s", e.tokens_per_s);
  w.value("tokens_per_s_per_gpu", e.tokens_per_s_per_gpu);
  w.value("samples_per_s", e.samples_per_s);
  w.end_object();

  w.begin_object("utilization");
  w.value("mfu", e.mfu);
  w.value("hfu", e.hfu);
  w.value("model_tflops_per_gpu", e.model_tflops_per_gpu);
  w.value("peak_tflops_per_gpu", units::to_teraflops(e.peak));
  w.value("dtype", to_string(e.dtype));
  w.end_object();

  const MemoryBreakdown& m = e.memory;
  w.begin_object("memory");
  w.value("per_gpu_bytes", m.total().value());
  w.value("capacity_bytes", m.capacity.value());
  w.value("fits", m.fits());
  w.value("weights_bytes", m.weights.value());
  w.value("gradients_bytes", m.gradients.value());
  w.value("optimizer_bytes", m.optimizer.value());
  w.value("activations_bytes", m.activations.value());
  w.value("kv_cache_bytes", m.kv_cache.value());
  w.value("other_bytes", m.other.value());
  w.end_object();

  w.begin_object("model");
  w.value("params", e.params);
  w.end_object();

  w.begin_object("training");
  if (e.training) {
    w.value("tokens", e.tokens);
    w.value("time_s", e.train_time.value());
    w.value("gpu_hours", e.gpu_hours);
  } else {
    w.null("tokens");
    w.null("time_s");
    w.null("gpu_hours");
  }
  w.end_object();

  w.begin_object("inference");
  if (e.inference) {
    w.value("time_to_first_token_s", e.inference->time_to_first_token.value());
    w.value("time_per_output_token_s", e.inference->time_per_output_token.value());
    w.value("output_tokens_per_s", e.inference->output_tokens_per_s);
    w.value("request_latency_s", e.inference->request_latency.value());
  } else {
    w.null("time_to_first_token_s");
    w.null("time_per_output_token_s");
    w.null("output_tokens_per_s");
    w.null("request_latency_s");
  }
  w.end_object();

  w.begin_object("power");
  w.value("gpu_avg_w", e.gpu_avg_power.value());
  w.value("energy_kwh", e.energy_kwh);
  w.value("carbon_kg", e.carbon_kg);
  w.end_object();

  w.begin_object("cost");
  w.value("cloud_usd", e.cost.cloud.value());
  w.value("owned_usd", e.cost.owned().value());
  w.value("owned_electricity_usd", e.cost.owned_electricity.value());
  w.value("owned_hardware_usd", e.cost.owned_hardware.value());
  w.value("breakeven_days", e.cost.breakeven_days);
  w.end_object();

  w.value("bottleneck", to_string(e.bottleneck));
  w.value("bottleneck_reason", e.bottleneck_reason);
  w.begin_array("advice");
  for (const auto& a : e.advice) {
    w.value(nullptr, a);
  }
  w.end_array();
  w.end_object();
  return w.str() + "\n";
}

}  // namespace gpusim
