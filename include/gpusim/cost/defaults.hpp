// Documented defaults of the [cost] and [system] tables (DESIGN §4). Each is either the value
// DESIGN §4/§6 gives as its example, or a labelled assumption a scenario should override when it
// knows better. They are printed by `gpusim estimate --help`.
#pragma once

namespace gpusim::defaults {

inline constexpr double kElectricityUsdPerKwh = 0.12;  // DESIGN §4 and §6 seed
inline constexpr double kUtilization = 0.15;           // DESIGN §4 and §6 seed
inline constexpr double kPue = 1.0;                    // DESIGN §4 (an owned desktop, no facility overhead)
inline constexpr double kLifetimeYears = 5.0;          // DESIGN §4
inline constexpr double kCarbonKgPerKwh = 0.4;         // DESIGN §4
// Host power per node: DESIGN §4 gives 100 W for a desktop (CPU, board, fans). For an 8-GPU
// SXM server (CPUs, NVSwitches, NICs, fans) we assume 1200 W: an assumption, not a measurement.
inline constexpr double kDesktopHostWatts = 100.0;
inline constexpr double kServerHostWatts = 1200.0;
// Owned purchase = GPU prices + host share. Desktop: the DESIGN §6 seed ($2,200 system around a
// $1,599 RTX 4090) implies ~600 USD per host. SXM servers: assumption of 25 % on top of the GPUs
// (chassis, CPUs, NVSwitch, NICs).
inline constexpr double kDesktopHostUsd = 600.0;
inline constexpr double kServerHostFraction = 0.25;

}  // namespace gpusim::defaults
