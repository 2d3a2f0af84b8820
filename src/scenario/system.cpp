// [system] and [cost] of a scenario: the GPUs, their node shape, links, collective library, host
// and power limit, and what that hardware costs to buy, rent and run. They sit together because
// [cost] prices the hardware [system] resolved (and make_system reads a [system] table alone).
#include "scenario/internal.hpp"

namespace gpusim::scenario::detail {

using base::strfmt;
using hardware::FormFactor;
using hardware::LinkSpec;
using hardware::System;
using parse::Need;
using parse::Range;
using parse::Reader;
using units::Dim;

void read_system(Reader& r, const catalog::Catalog& cat, System& s) {
  if (auto id = r.string("gpu", Need::kRequired)) {
    if (!cat.has(catalog::SpecKind::kGpu, *id)) {
      r.error("gpu", "unknown GPU id \"" + *id + "\" (" + cat.known_ids_near(catalog::SpecKind::kGpu, *id) + ")");
    } else {
      try {
        s.gpu = cat.gpu(*id);
      } catch (const InputError& e) {
        r.diagnostics().append(e.diagnostics());
      }
    }
  }
  if (auto v = count(r, "gpus", Need::kRequired, 1, limits::kDevices)) {
    s.gpus = *v;
  }
  const bool sxm = s.gpu.form_factor == FormFactor::kSxm;
  // A node is the GPUs one peer-link domain joins: the spec's domain (a GB200 NVL72 rack: 72), else
  // an 8-GPU baseboard for server modules and one card for PCIe boards.
  const int node_default = s.gpu.peer_domain > 0 ? s.gpu.peer_domain : (sxm ? 8 : 1);
  s.gpus_per_node = count(r, "gpus_per_node", Need::kOptional, 1, limits::kDevices).value_or(node_default);
  if (s.gpus < s.gpus_per_node) {
    s.gpus_per_node = s.gpus;
  } else if (s.gpus % s.gpus_per_node != 0) {
    r.error("gpus", "gpus (" + std::to_string(s.gpus) + ") must be a multiple of gpus_per_node (" +
                        std::to_string(s.gpus_per_node) + ")");
  }
  s.nics_per_node = count(r, "nics_per_node", Need::kOptional, 1, limits::kDevices).value_or(sxm ? s.gpus_per_node : 1);
  s.oversubscription = r.number("oversubscription", Need::kOptional, Range::kPositive).value_or(1.0);
  if (s.oversubscription < 1.0) {
    r.error("oversubscription", "a fabric's oversubscription is at least 1 (1 = non-blocking)");
  }

  auto load_link = [&](std::string_view key, const std::string& fallback, LinkSpec& out) {
    const std::string id = r.string(key, Need::kOptional).value_or(fallback);
    if (!cat.has(catalog::SpecKind::kLink, id)) {
      r.error(key, "unknown link id \"" + id + "\" (" + cat.known_ids_near(catalog::SpecKind::kLink, id) + ")");
      return;
    }
    try {
      out = cat.link(id);
    } catch (const InputError& e) {
      r.diagnostics().append(e.diagnostics());
    }
  };
  if (s.gpu.id.empty()) {  // the GPU was bad: link defaults would only add noise
    r.allow({"intra_node", "inter_node", "power_limit", "pcie_lanes", "collectives", "host"});
    r.finish();
    return;
  }
  const std::string pcie = "pcie" + std::to_string(s.gpu.pcie_gen);
  if (cat.has(catalog::SpecKind::kLink, pcie)) {
    s.pcie = cat.link(pcie);
  } else {
    r.error("gpu", "no link spec \"" + pcie + "\" for the GPU's host link");
  }
  // Link specs are x16; a board that wires the slot with fewer lanes (x8/x8 when two GPUs share
  // the CPU's lanes) scales the bandwidth with the lane count (as NCCL computes a PCIe link: width x speed
  // [nccl-source]).
  const int lanes = count(r, "pcie_lanes", Need::kOptional, 1, 16).value_or(s.gpu.pcie_lanes);
  if (lanes != 1 && lanes != 2 && lanes != 4 && lanes != 8 && lanes != 16) {
    r.error("pcie_lanes", strfmt("a PCIe link has 1, 2, 4, 8 or 16 lanes, got %d", lanes));
  } else if (lanes != 16) {
    s.pcie.bandwidth = s.pcie.bandwidth * (lanes / 16.0);
    s.pcie.name = strfmt("%s (x%d)", s.pcie.name.substr(0, s.pcie.name.rfind(" x16")).c_str(), lanes);
  }
  if (s.gpu.has_nvlink()) {
    load_link("intra_node", s.gpu.peer_link, s.intra_node);
  } else if (r.has("intra_node")) {
    load_link("intra_node", pcie, s.intra_node);
  } else {
    s.intra_node = s.pcie;  // GPUs without NVLink talk over their own host links
  }
  // Each vendor's GPUs run its own collective library: RCCL on AMD Instinct, NCCL elsewhere.
  const std::string comm =
      r.string("collectives", Need::kOptional).value_or(hardware::is_amd(s.gpu.arch) ? "rccl" : "nccl");
  if (!cat.has(catalog::SpecKind::kComm, comm)) {
    r.error("collectives",
            "unknown collective library \"" + comm + "\" (" + cat.known_ids_near(catalog::SpecKind::kComm, comm) + ")");
  } else {
    try {
      s.comm = cat.comm(comm);
    } catch (const InputError& e) {
      r.diagnostics().append(e.diagnostics());
    }
  }
  const std::string host = r.string("host", Need::kOptional).value_or(s.gpu.host);
  if (!cat.has(catalog::SpecKind::kHost, host)) {
    r.error(r.has("host") ? "host" : "gpu",
            "unknown host \"" + host + "\" (" + cat.known_ids_near(catalog::SpecKind::kHost, host) + ")");
  } else {
    try {
      s.host = cat.host(host);
    } catch (const InputError& e) {
      r.diagnostics().append(e.diagnostics());
    }
  }
  // A server's NIC generation follows its GPUs': 400 Gb/s beside Hopper and Blackwell, 200 Gb/s
  // beside A100; MI300X servers are taken as Hopper's and MI250X as A100's (assumption).
  const bool ndr_era = s.gpu.arch == hardware::Arch::kHopper || s.gpu.arch == hardware::Arch::kBlackwell ||
                       s.gpu.arch == hardware::Arch::kCdna3;
  const bool hdr_era = s.gpu.arch == hardware::Arch::kAmpere || s.gpu.arch == hardware::Arch::kCdna2;
  const std::string inter = sxm && ndr_era ? "ib-ndr" : (sxm && hdr_era ? "ib-hdr" : "eth-25g");
  load_link("inter_node", inter, s.inter_node);
  s.power_limit = s.gpu.tdp;
  if (auto v = r.quantity("power_limit", Dim::kPower, Need::kOptional)) {
    if (*v > s.gpu.tdp.value()) {
      r.error("power_limit", strfmt("power_limit above the TDP (%.0f W) is not modelled", s.gpu.tdp.value()));
    } else if (*v <= s.gpu.busy_floor.value()) {
      r.error("power_limit", strfmt("power_limit must be above the GPU's busy floor (%.0f W: its power while a job "
                                    "runs with the SMs idle)",
                                    s.gpu.busy_floor.value()));
    } else {
      s.power_limit = Watts(*v);
    }
  }
  r.finish();
}

// `gpu_changed`: --gpu or --set replaced the file's GPU, so prices the file states for its own
// hardware (purchase, and a cloud rate for the same GPU) no longer apply: the new GPU's catalog
// prices are used instead. `count_changed`: --set changed how many GPUs or nodes there are, so
// the file's purchase price, which is for its own count, no longer applies either.
void read_cost(Reader* r, const catalog::Catalog& cat, Scenario& sc, bool gpu_changed, bool count_changed) {
  cost::CostConfig& c = sc.cost;
  const System& s = sc.system;
  auto q = [r](std::string_view key, Dim dim, double fallback, Range range = Range::kPositive) {
    return r == nullptr ? fallback : r->quantity(key, dim, Need::kOptional, range).value_or(fallback);
  };
  auto num = [r](std::string_view key, double fallback, Range range) {
    return r == nullptr ? fallback : r->number(key, Need::kOptional, range).value_or(fallback);
  };
  c.electricity = UsdPerJoule(q("electricity", Dim::kMoneyPerEnergy,
                                units::usd_per_kwh(cost::kElectricityUsdPerKwh).value(), Range::kNonNegative));
  c.utilization = num("utilization", cost::kUtilization, Range::kFraction);
  c.cloud_gpu = r == nullptr ? s.gpu.id : r->string("cloud_gpu", Need::kOptional).value_or(s.gpu.id);
  double cloud_default = s.gpu.cloud_rate.value();
  if (c.cloud_gpu != s.gpu.id && !s.gpu.id.empty()) {
    if (!cat.has(catalog::SpecKind::kGpu, c.cloud_gpu)) {
      r->error("cloud_gpu", "unknown GPU id \"" + c.cloud_gpu + "\" (" +
                                cat.known_ids_near(catalog::SpecKind::kGpu, c.cloud_gpu) + ")");
    } else {
      // Equal work on the rented GPU: the same GPU count and node shape, at its TDP.
      System cloud = make_system(cat, c.cloud_gpu, s.gpus, s.gpus_per_node);
      cloud_default = cloud.gpu.cloud_rate.value();
      const auto& t = sc.job.training;
      if (t && !cloud.gpu.supports(t->precision)) {
        r->error("cloud_gpu", "the cloud GPU " + cloud.gpu.name + " has no " + units::to_string(t->precision) +
                                  " support for this job");
      }
      sc.cloud_system = std::move(cloud);
    }
  }
  const bool same_gpu_cloud = c.cloud_gpu == s.gpu.id;
  c.cloud_rate = UsdPerSecond(q("cloud_rate", Dim::kMoneyPerTime, cloud_default));
  if (gpu_changed && same_gpu_cloud) {
    c.cloud_rate = UsdPerSecond(cloud_default);
  }
  const bool server = s.gpu.form_factor == FormFactor::kSxm;
  const double gpu_total = s.gpu.purchase.value() * s.gpus;
  const double host_total =
      server ? gpu_total * cost::kServerHostFraction : cost::kDesktopHostUsd * static_cast<double>(s.nodes());
  c.purchase = Usd(q("purchase", Dim::kMoney, gpu_total + host_total));
  if (gpu_changed || count_changed) {
    c.purchase = Usd(gpu_total + host_total);
  }
  const bool hopper_or_later = s.gpu.arch == hardware::Arch::kHopper || s.gpu.arch == hardware::Arch::kBlackwell;
  const double host_default = server ? (hopper_or_later ? cost::kHopperServerHostWatts : cost::kServerHostWatts)
                              : s.gpus_per_node > 2 ? cost::kWorkstationHostWatts
                                                    : cost::kDesktopHostWatts;
  c.host_power = Watts(q("host_power", Dim::kPower, host_default, Range::kNonNegative));
  c.pue = num("pue", cost::kPue, Range::kPositive);
  if (c.pue < 1.0 && r != nullptr) {
    r->error("pue", "power usage effectiveness is at least 1");
  }
  c.lifetime = Seconds(q("lifetime", Dim::kTime, cost::kLifetimeYears * units::kSecondsPerYear));
  c.carbon_intensity = units::KgPerJoule(q("carbon_intensity", Dim::kMassPerEnergy,
                                           units::kg_per_kwh(cost::kCarbonKgPerKwh).value(), Range::kNonNegative));
  if (r != nullptr) {
    r->finish();
  }
}

}  // namespace gpusim::scenario::detail
