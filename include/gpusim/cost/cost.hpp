// Cost of a job, cloud versus owned (DESIGN §6).
//   cloud  = GPU-hours on the cloud GPU × its rate
//   owned  = electricity (system energy × PUE × price) + hardware share
//            (purchase × job time / (lifetime × utilization))
//   break-even days at utilization u:
//       purchase / (24 · u · (cloud_rate · gpus · k − P_system[kW] · price))
//   with k = cloud hours needed per owned busy hour (equal work, not equal hours).
// Seed check: 2,200 USD, 450 W, 15 %, 0.12 USD/kWh against 2.14 USD/h → 293 days.
#pragma once

#include <optional>
#include <vector>

#include "gpusim/units/units.hpp"

namespace gpusim {

struct CostInputs {
  Seconds job_time;        // owned hardware, wall clock
  Seconds cloud_job_time;  // the same work on the cloud GPU
  int gpus = 1;
  UsdPerSecond cloud_rate;  // per GPU
  Watts system_power;       // all GPUs + hosts, before PUE
  double pue = 1;
  UsdPerJoule electricity;
  Usd purchase;
  Seconds lifetime;
  double utilization = 0;
};

struct CostResult {
  Usd cloud;
  Usd owned_electricity;
  Usd owned_hardware;
  [[nodiscard]] Usd owned() const { return owned_electricity + owned_hardware; }
  std::optional<double> breakeven_days;  // nullopt: owning never pays back at this utilization
};

CostResult compute_cost(const CostInputs& in);

// Cost of one busy hour of the whole system, owned (hardware share over the lifetime at
// `utilization` + electricity) and rented (equal work: rate × GPUs × k), and the break-even days.
struct BreakevenPoint {
  double utilization = 0;
  Usd owned_per_busy_hour;
  Usd cloud_per_busy_hour;
  std::optional<double> days;
};
std::vector<BreakevenPoint> breakeven_curve(const CostInputs& in, const std::vector<double>& utilizations);
// The utilization above which owning is cheaper over the lifetime:
// purchase / (lifetime_h · (cloud_per_h − electricity_per_h)); nullopt when renting always wins.
std::optional<double> crossover_utilization(const CostInputs& in);

// Days of ownership at `utilization` after which buying beats renting; nullopt when the
// hourly saving is not positive. `speed_ratio` is k above.
std::optional<double> breakeven_days(Usd purchase, double utilization, UsdPerSecond cloud_rate_total,
                                     double speed_ratio, Watts system_power, UsdPerJoule electricity);

}  // namespace gpusim
