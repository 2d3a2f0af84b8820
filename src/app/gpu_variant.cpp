// GPU what-ifs (include/gpusim/app.hpp): a patch over a GPU's spec file that scales its DRAM
// bandwidth or its SM clock, or sets its PCIe generation. A compute peak is SMs x operations per
// SM per clock x clock (physics/kernel.cpp derives the operations per clock from the spec the same
// way), so the peaks scale with the clock; the patch is read by the spec reader like any file, with
// its checks and declared ranges.
#include <cmath>

#include "gpusim/app.hpp"

namespace gpusim::app {

namespace {

std::string quantity(double si, const char* unit) { return base::strfmt("\"%.17g %s\"", si, unit); }

bool factor_ok(double f) { return std::isfinite(f) && f >= kVariantFactorRange[0] && f <= kVariantFactorRange[1]; }

}  // namespace

void check(const GpuVariant& v) {
  const std::string range = base::strfmt("between %g and %g", kVariantFactorRange[0], kVariantFactorRange[1]);
  if (!factor_ok(v.memory_bandwidth)) {
    throw RequestError("gpu_variant", "memory_bandwidth must be a factor " + range + ", got " +
                                          base::strfmt("%g", v.memory_bandwidth));
  }
  if (!factor_ok(v.clock)) {
    throw RequestError("gpu_variant", "clock must be a factor " + range + ", got " + base::strfmt("%g", v.clock));
  }
  if (v.pcie_gen && (*v.pcie_gen < 3 || *v.pcie_gen > 6)) {
    throw RequestError("gpu_variant", "pcie_gen must be 3, 4, 5 or 6, got " + std::to_string(*v.pcie_gen));
  }
}

catalog::SpecFile gpu_variant_patch(const catalog::Catalog& catalog, const std::string& gpu, const GpuVariant& v) {
  check(v);
  const hardware::GpuSpec g = catalog.gpu(gpu);
  std::string text = base::strfmt(
      "# %s as a what-if: a patch over its spec file (gpusim estimate --specs DIR with\n"
      "# this file as DIR/gpus/%s.toml)\nbase = \"%s\"\n",
      g.name.c_str(), gpu.c_str(), gpu.c_str());
  // The name every report titles the GPU by says what was changed.
  std::string changes;
  auto add = [&](const std::string& what) { changes += (changes.empty() ? "" : ", ") + what; };
  if (v.memory_bandwidth != 1) {
    add(base::strfmt("memory bandwidth x%g", v.memory_bandwidth));
  }
  if (v.clock != 1) {
    add(base::strfmt("clock x%g", v.clock));
  }
  if (v.pcie_gen) {
    add(base::strfmt("PCIe %d", *v.pcie_gen));
  }
  if (!changes.empty()) {
    std::string name;
    for (const char c : g.name + " (what-if: " + changes + ")") {
      name += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    }
    text += "name = \"" + name + "\"\n";
  }
  if (v.clock != 1) {
    text += "boost_clock = " + quantity(g.boost_clock.value() * v.clock, "Hz") + "\n[compute]\n";
    for (const auto& [dt, key] : units::kDTypeNames) {
      if (g.supports(dt)) {
        text += std::string(key) + " = " + quantity(g.peak_for(dt).value() * v.clock, "FLOP/s") + "\n";
      }
    }
  }
  if (v.clock != 1 || v.memory_bandwidth != 1) {
    text += "[memory]\nbandwidth = " + quantity(g.memory_bandwidth.value() * v.memory_bandwidth, "B/s") +
            "\nlatency = " + quantity(g.memory_latency.value(), "s") + "  # DRAM: in seconds whatever the SM clock\n";
  }
  if (v.pcie_gen) {
    text += "[host_link]\npcie_gen = " + std::to_string(*v.pcie_gen) + "\n";
  }
  if (v.clock != 1) {
    text += "[power]\nmax_clock = " + quantity(g.max_clock.value() * v.clock, "Hz") + "\n";
  }
  return catalog::SpecFile{"<what-if " + gpu + ">", text};
}

catalog::Catalog with_gpu_variant(const catalog::Catalog& catalog, const std::string& gpu, const GpuVariant& v) {
  catalog::Catalog out = catalog;
  out.add_file(catalog::SpecKind::kGpu, gpu, gpu_variant_patch(catalog, gpu, v));
  return out;
}

}  // namespace gpusim::app
