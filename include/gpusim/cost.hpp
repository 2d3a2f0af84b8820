// Cost and energy of a job, cloud versus owned.
//   cloud   = GPU-hours on the cloud GPU × its rate
//   energy  = (GPUs × average board power + nodes × host power) × time × PUE;  carbon = energy × intensity
//   owned   = electricity (energy × price) + hardware share (purchase × job time / (lifetime × utilization))
//   break-even time at utilization u:
//       purchase / (u · (cloud_rate · gpus · k − P_system · PUE · price))
//   with k = cloud hours needed per owned busy hour (equal work, not equal hours).
// Check [dettmers-2023]: a 2,200 USD desktop drawing 450 W, busy 15 % of the time, at 0.12 USD/kWh,
// against a 2.14 USD/h cloud GPU of the same speed pays for itself after 293 days.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpusim/units.hpp"

namespace gpusim::cost {

// Documented defaults of the [cost] table, each the example value of its source or a labelled
// assumption a scenario should override when it knows better; `gpusim estimate --help` prints them.
inline constexpr double kElectricityUsdPerKwh = 0.12;  // [dettmers-2023] break-even example
inline constexpr double kUtilization = 0.15;           // [dettmers-2023] break-even example
inline constexpr double kPue = 1.0;                    // an owned desktop: no facility overhead
inline constexpr double kLifetimeYears = 5.0;          // assumption: depreciation period of the hardware
inline constexpr double kCarbonKgPerKwh = 0.4;         // assumption: a mixed grid, roughly the world average
// Host power per node (everything but the GPUs: CPUs, memory, NVSwitches, NICs, fans, power
// supply losses) while it trains. An 8 x H100 HGX node drew ~7.75 kW in intensive work (76 % of
// its 10.2 kW rating) and peaked at ~8.4 kW [newkirk-2025, latif-2025]: with its GPUs near
// 650-700 W that leaves ~2.5 kW for the rest. Ampere and Volta SXM servers (DGX A100: 6.5 kW
// rating for 3.2 kW of GPUs) are taken at 1.6 kW (assumption: the same share of their rating);
// a PCIe workstation or server with more than two GPUs at 400 W (assumption: one or two server
// CPUs, fans), a desktop at 100 W (assumption: one desktop CPU, board, fans).
inline constexpr double kHopperServerHostWatts = 2500.0;
inline constexpr double kServerHostWatts = 1600.0;
inline constexpr double kWorkstationHostWatts = 400.0;
inline constexpr double kDesktopHostWatts = 100.0;
// Owned purchase = GPU prices + a host share. Desktop: [dettmers-2023] prices a 2,200 USD system around
// a 1,599 USD RTX 4090, ~600 USD for the rest. SXM servers: assumption of 25 % on top of the GPUs
// (chassis, CPUs, NVSwitch, NICs).
inline constexpr double kDesktopHostUsd = 600.0;
inline constexpr double kServerHostFraction = 0.25;

// The [cost] table of a scenario, every default resolved.
struct CostConfig {
  UsdPerJoule electricity;
  double utilization = 0;   // fraction of the year the owned machine is busy
  UsdPerSecond cloud_rate;  // per GPU-hour, of the cloud GPU
  std::string cloud_gpu;    // the GPU rented in the cloud (default: the same GPU)
  Usd purchase;             // the whole owned system
  Watts host_power;         // per node
  double pue = 1;
  Seconds lifetime;
  KgPerJoule carbon_intensity;
};

struct Energy {
  Watts system_power;  // all GPUs and hosts while busy, before PUE
  Joules energy;       // at the wall, PUE included
  Kilograms carbon;
};
Energy job_energy(Watts gpu_avg_power, int gpus, int nodes, Seconds job_time, const CostConfig& c);

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
CostInputs cost_inputs(const CostConfig& c, Seconds job_time, Seconds cloud_job_time, int gpus, Watts system_power);

struct CostResult {
  Usd cloud;
  Usd owned_electricity;
  Usd owned_hardware;
  [[nodiscard]] Usd owned() const { return owned_electricity + owned_hardware; }
  std::optional<Seconds> breakeven;  // nullopt: owning never pays back at this utilization
};

CostResult compute_cost(const CostInputs& in);
// GPU-hours × rate: what renting `gpus` GPUs for `time` costs.
inline Usd cloud_cost(UsdPerSecond rate, Seconds time, int gpus) { return rate * time * static_cast<double>(gpus); }

// Cost of one busy hour of the whole system, owned (hardware share over the lifetime at
// `utilization` + electricity) and rented (equal work: rate × GPUs × k), and the break-even time.
struct BreakevenPoint {
  double utilization = 0;
  Usd owned_per_busy_hour;
  Usd cloud_per_busy_hour;
  std::optional<Seconds> breakeven;
};
std::vector<BreakevenPoint> breakeven_curve(const CostInputs& in, const std::vector<double>& utilizations);
// The utilization above which owning is cheaper over the lifetime:
// purchase / (lifetime_h · (cloud_per_h − electricity_per_h)); nullopt when renting always wins.
std::optional<double> crossover_utilization(const CostInputs& in);

// Ownership time at `utilization` after which buying beats renting; nullopt when the saving per
// busy hour is not positive. `speed_ratio` is k above; `system_power` includes PUE.
std::optional<Seconds> breakeven_time(Usd purchase, double utilization, UsdPerSecond cloud_rate_total,
                                      double speed_ratio, Watts system_power, UsdPerJoule electricity);

}  // namespace gpusim::cost
