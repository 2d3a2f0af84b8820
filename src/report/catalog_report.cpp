// The catalog at a glance (`gpusim specs list`).
#include "gpusim/report.hpp"
#include "report/format.hpp"

namespace gpusim::report {

std::string catalog_text(const catalog::Catalog& c) {
  // Memory in GiB (binary, as devices report it); bandwidth in GB/s (decimal, as specified).
  Table t;
  t.header = {"gpu",          "arch",      "form",    "SMs",         "bf16 (TF/s)",
              "memory (GiB)", "BW (GB/s)", "TDP (W)", "price (USD)", "cloud (USD/h)"};
  t.right = {false, false, false, true, true, true, true, true, true, true};
  for (const auto& id : c.ids(catalog::SpecKind::kGpu)) {
    const hardware::GpuSpec g = c.gpu(id);
    const DType main = g.supports(DType::kBf16) ? DType::kBf16 : DType::kFp16;
    t.rows.push_back({id, hardware::to_string(g.arch), base::name_in(hardware::kFormFactorNames, g.form_factor),
                      std::to_string(g.sm_count), strfmt("%.1f", units::to_teraflops(g.peak_for(main))),
                      strfmt("%.1f", gib(g.memory_capacity)),
                      strfmt("%.0f", units::to_gigabytes_per_second(g.memory_bandwidth)),
                      strfmt("%.0f", units::to_watts(g.tdp)), amount(units::to_usd(g.purchase)),
                      amount(units::to_usd_per_hour(g.cloud_rate))});
  }
  std::string out = render(t, "");
  out += strfmt("\n%-16s %-9s %-12s %-9s %-10s %-30s %s\n", "runtime", "kind", "launch", "attention", "optimizer",
                "fused: norm+res act rope loss", "bgrad normbwd overlap dp/gather/tp/pp");
  for (const auto& id : c.ids(catalog::SpecKind::kRuntime)) {
    const workload::Runtime rt = c.runtime(id);
    const auto yn = [](bool b) { return b ? "yes" : "no"; };
    out += strfmt(
        "%-16s %-9s %-12s %-9s %-10s %-44s %.2g/%.2g/%.2g/%.2g\n", id.c_str(),
        base::name_in(workload::kRuntimeKindNames, rt.kind), rt.cuda_graphs ? "cuda-graphs" : "eager",
        base::name_in(workload::kAttentionNames, rt.attention),
        base::name_in(workload::kOptimizerImplNames, rt.optimizer),
        strfmt("       %-8s %-3s %-4s %-4s  %-5s %-7s", yn(rt.fusion.norm_residual), yn(rt.fusion.bias_activation),
               yn(rt.fusion.rope), yn(rt.fusion.cross_entropy), yn(rt.fusion.bias_grad), yn(rt.fusion.norm_backward))
            .c_str(),
        rt.overlap.data_parallel, rt.overlap.parameter_gather, rt.overlap.tensor_parallel, rt.overlap.pipeline);
  }
  out += "\nlinks:  ";
  for (const auto& id : c.ids(catalog::SpecKind::kLink)) {
    out += id + " ";
  }
  out += "\nmodels: ";
  for (const auto& id : c.ids(catalog::SpecKind::kModel)) {
    out += id + " ";
  }
  out += "\ncollective libraries: ";
  for (const auto& id : c.ids(catalog::SpecKind::kComm)) {
    out += id + " ";
  }
  out += "\nhosts:  ";
  for (const auto& id : c.ids(catalog::SpecKind::kHost)) {
    out += id + " ";
  }
  return out + "\n";
}

}  // namespace gpusim::report
