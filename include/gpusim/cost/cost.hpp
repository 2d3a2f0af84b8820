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

// Days of ownership at `utilization` after which buying beats renting; nullopt when the
// hourly saving is not positive. `speed_ratio` is k above.
std::optional<double> breakeven_days(Usd purchase, double utilization, UsdPerSecond cloud_rate_total,
                                     double speed_ratio, Watts system_power, UsdPerJoule electricity);

}  // namespace gpusim
