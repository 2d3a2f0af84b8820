// One scenario's whole answer: evaluate the step, cost it, diagnose it, advise.
// The cloud price is for equal work: when [cost] cloud_gpu names another GPU, the same job is
// evaluated on that GPU's system (resolved by the scenario loader) and the rented hours follow.
#include "gpusim/answer.hpp"

namespace gpusim::answer {

namespace {

// The engine, its load and the layout of an inference scenario, in words.
std::string serving_summary(const scenario::Scenario& sc) {
  const workload::ServingEngine& en = sc.runtime.serving;
  const workload::Inference& inf = *sc.job.inference;
  const workload::Load& load = inf.load;
  std::string engine =
      en.scheduler == workload::Scheduler::kStatic
          ? (inf.batch_max ? std::string("static batches as large as memory allows")
                           : base::strfmt("static batches of %lld", static_cast<long long>(inf.batch)))
          : base::strfmt("continuous batching (up to %lld sequences, %lld tokens per iteration%s)",
                         static_cast<long long>(en.max_seqs), static_cast<long long>(en.max_batched_tokens),
                         en.chunked_prefill ? ", chunked prefill" : "");
  std::string arrival;
  switch (load.arrival) {
    case workload::Arrival::kOffline:
      arrival = load.requests > 0 ? base::strfmt("%lld requests queued at once", static_cast<long long>(load.requests))
                                  : std::string("one batch per replica");
      break;
    case workload::Arrival::kConcurrency:
      arrival = base::strfmt("%lld requests, %lld in flight", static_cast<long long>(load.requests),
                             static_cast<long long>(load.concurrency));
      break;
    case workload::Arrival::kPoisson:
      arrival = base::strfmt("%lld requests arriving at %.3g per second (Poisson)",
                             static_cast<long long>(load.requests), load.rate);
      break;
  }
  const workload::Layout& l = sc.layout;
  return base::strfmt("%s · %s · prompt %lld, output %lld tokens · tensor %d x pipeline %d x data %d", engine.c_str(),
                      arrival.c_str(), static_cast<long long>(inf.prompt_tokens),
                      static_cast<long long>(inf.output_tokens), l.tensor, l.pipeline, l.data);
}

}  // namespace

Estimate estimate(const scenario::Scenario& sc, const Options& options) {
  Estimate e;
  e.scenario = sc.name;
  e.gpu_id = sc.system.gpu.id;
  e.gpu_name = sc.system.gpu.name;
  e.gpus = sc.system.gpus;
  e.nodes = sc.system.nodes();
  physics::make_fabric(sc.system);  // throws when the GPUs of a node have no usable link
  e.fabric = physics::fabric_description(sc.system);
  if (e.nodes > 1) {
    e.inter_link = sc.system.inter_node.name;
    e.inter_link_gb_per_s = units::to_gigabytes_per_second(sc.system.inter_node.bandwidth);
  }
  e.runtime_id = sc.runtime.id;
  e.runtime_name = sc.runtime.name;
  e.images = sc.job.model.images();
  e.runtime_summary = base::strfmt(
      "%s launch, %s%s", sc.runtime.cuda_graphs ? "CUDA-graph" : "eager",
      sc.job.model.family == workload::Family::kResNet
          ? "convolutions as implicit GEMMs"
          : (std::string(base::name_in(workload::kAttentionNames, sc.runtime.attention)) + " attention").c_str(),
      sc.job.training
          ? (std::string(", ") + base::name_in(workload::kOptimizerImplNames, sc.runtime.optimizer) + " optimizer")
                .c_str()
          : "");
  e.params = workload::total_params(sc.job.model);
  if (sc.job.inference) {
    e.serving_summary = serving_summary(sc);
  }
  step::TableCache own;
  step::Options runs;
  runs.op_shares = options.op_shares;
  runs.tables = options.tables != nullptr ? options.tables : &own;
  e.eval = step::evaluate(sc, runs);
  e.sm_clock_mhz = units::to_megahertz(sc.system.gpu.boost_clock * e.eval.clock);

  const Seconds job_time = e.eval.job_time;
  Seconds cloud_job_time = job_time;
  if (sc.cloud_system) {
    step::Options cloud;
    cloud.tables = runs.tables;
    cloud_job_time = step::evaluate(*sc.cloud_system, sc.job, sc.layout, sc.runtime, cloud).job_time;
  }
  e.energy = cost::job_energy(e.eval.gpu_avg_power, e.gpus, e.nodes, job_time, sc.cost);
  e.cost_inputs = cost::cost_inputs(sc.cost, job_time, cloud_job_time, e.gpus, e.energy.system_power);
  e.cost = cost::compute_cost(e.cost_inputs);
  e.cloud_gpu = sc.cost.cloud_gpu;
  e.cloud_rate = sc.cost.cloud_rate;
  e.utilization = sc.cost.utilization;

  if (sc.slo && e.eval.inference) {
    e.slo = check_slo(*sc.slo, *e.eval.inference);
  }
  e.diagnosis = explain::diagnose(e.eval);
  if (options.advice) {
    e.advice = explain::advise(sc, e.eval, e.diagnosis, runs.tables);
  }
  if (options.uncertainty) {
    e.uncertainty = uncertainty_of(sc, e, runs.tables);
  }
  return e;
}

double usd_per_million_tokens(const Estimate& e) {
  return e.eval.tokens > 0 ? units::to_usd(e.cost.cloud) / e.eval.tokens * units::kMega : 0.0;
}

}  // namespace gpusim::answer
