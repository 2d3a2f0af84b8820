// One scenario's whole answer: evaluate the step, cost it, diagnose it, advise.
// The cloud price is for equal work: when [cost] cloud_gpu names another GPU, the same job is
// evaluated on that GPU's system (resolved by the scenario loader) and the rented hours follow.
#include "gpusim/answer.hpp"

namespace gpusim::answer {

Estimate estimate(const scenario::Scenario& sc, const Options& options) {
  Estimate e;
  e.scenario = sc.name;
  e.hardware_replaced = sc.hardware_replaced;
  e.model_name = sc.job.model.name;
  e.training = sc.job.training;
  e.gpu_id = sc.system.gpu.id;
  e.gpu_name = sc.system.gpu.name;
  e.gpus = sc.system.gpus;
  e.nodes = sc.system.nodes();
  physics::make_fabric(sc.system);  // throws when the GPUs of a node have no usable link
  e.fabric = physics::intra_path(sc.system);
  if (e.nodes > 1) {
    e.inter_link = sc.system.inter_node.name;
    e.inter_link_gb_per_s = units::to_gigabytes_per_second(sc.system.inter_node.bandwidth);
  }
  e.runtime_id = sc.runtime.id;
  e.runtime_name = sc.runtime.name;
  e.layout = sc.layout;
  e.images = sc.job.model.images();
  e.stack.cuda_graphs = sc.runtime.cuda_graphs;
  e.stack.convolutions = sc.job.model.family == workload::Family::kResNet;
  e.stack.attention = sc.runtime.attention;
  if (sc.job.training) {
    e.stack.optimizer = sc.runtime.optimizer;
  }
  e.params = workload::total_params(sc.job.model);
  if (sc.job.inference) {
    e.serving = Estimate::Serving{sc.runtime.serving, *sc.job.inference, sc.layout};
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
