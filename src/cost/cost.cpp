// Cloud versus owned cost, energy and break-even (equations in include/gpusim/cost.hpp).
#include <cmath>

#include "gpusim/cost.hpp"

namespace gpusim::cost {

Energy job_energy(Watts gpu_avg_power, int gpus, int nodes, Seconds job_time, const CostConfig& c) {
  Energy e;
  e.system_power = gpu_avg_power * static_cast<double>(gpus) + c.host_power * static_cast<double>(nodes);
  e.energy = e.system_power * job_time * c.pue;
  e.carbon = c.carbon_intensity * e.energy;
  return e;
}

CostInputs cost_inputs(const CostConfig& c, Seconds job_time, Seconds cloud_job_time, int gpus, Watts system_power) {
  CostInputs in;
  in.job_time = job_time;
  in.cloud_job_time = cloud_job_time;
  in.gpus = gpus;
  in.cloud_rate = c.cloud_rate;
  in.system_power = system_power;
  in.pue = c.pue;
  in.electricity = c.electricity;
  in.purchase = c.purchase;
  in.lifetime = c.lifetime;
  in.utilization = c.utilization;
  return in;
}

std::optional<Seconds> breakeven_time(Usd purchase, double utilization, UsdPerSecond cloud_rate_total,
                                      double speed_ratio, Watts system_power, UsdPerJoule electricity) {
  // Saving per busy second: rent avoided minus electricity paid.
  const double saving_per_s = cloud_rate_total.value() * speed_ratio - system_power.value() * electricity.value();
  if (saving_per_s <= 0 || utilization <= 0) {
    return std::nullopt;
  }
  // A saving too small to pay the purchase back in any representable time (a utilization of
  // 1e-308) never breaks even, as no saving does.
  const double t = purchase.value() / (saving_per_s * utilization);
  if (!std::isfinite(t)) {
    return std::nullopt;
  }
  return Seconds(t);
}

namespace {
double speed_ratio(const CostInputs& in) { return in.job_time.value() > 0 ? in.cloud_job_time / in.job_time : 1.0; }
double cloud_per_hour(const CostInputs& in) {
  return units::to_usd_per_hour(in.cloud_rate) * static_cast<double>(in.gpus) * speed_ratio(in);
}
double electricity_per_hour(const CostInputs& in) {
  return in.system_power.value() * in.pue * units::kSecondsPerHour * in.electricity.value();
}
}  // namespace

std::vector<BreakevenPoint> breakeven_curve(const CostInputs& in, const std::vector<double>& utilizations) {
  std::vector<BreakevenPoint> out;
  const double lifetime_h = units::to_hours(in.lifetime);
  for (const double u : utilizations) {
    BreakevenPoint p;
    p.utilization = u;
    p.owned_per_busy_hour = Usd(in.purchase.value() / (lifetime_h * u) + electricity_per_hour(in));
    p.cloud_per_busy_hour = Usd(cloud_per_hour(in));
    p.breakeven = breakeven_time(in.purchase, u, in.cloud_rate * static_cast<double>(in.gpus), speed_ratio(in),
                                 in.system_power * in.pue, in.electricity);
    out.push_back(p);
  }
  return out;
}

std::optional<double> crossover_utilization(const CostInputs& in) {
  const double saving = cloud_per_hour(in) - electricity_per_hour(in);
  if (saving <= 0) {
    return std::nullopt;
  }
  return in.purchase.value() / (units::to_hours(in.lifetime) * saving);
}

CostResult compute_cost(const CostInputs& in) {
  CostResult r;
  r.cloud = cloud_cost(in.cloud_rate, in.cloud_job_time, in.gpus);
  r.owned_electricity = in.electricity * (in.system_power * in.job_time * in.pue);
  const double busy_lifetime = in.lifetime.value() * in.utilization;
  r.owned_hardware = busy_lifetime > 0 ? in.purchase * (in.job_time.value() / busy_lifetime) : Usd(0);
  r.breakeven = breakeven_time(in.purchase, in.utilization, in.cloud_rate * static_cast<double>(in.gpus),
                               speed_ratio(in), in.system_power * in.pue, in.electricity);
  return r;
}

}  // namespace gpusim::cost
