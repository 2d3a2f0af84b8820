// gpusim specs list | show ID | check [FILES]
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/options.hpp"
#include "gpusim/spec/diagnostics.hpp"

namespace gpusim::cli {

namespace {

void list(const Catalog& c) {
  std::printf("%-16s %-10s %-5s %5s %10s %10s %10s %7s %10s %10s\n", "gpu", "arch", "form", "SMs", "bf16 TF/s",
              "memory GB", "BW GB/s", "TDP W", "price USD", "cloud $/h");
  for (const auto& id : c.ids(SpecKind::kGpu)) {
    const GpuSpec g = c.gpu(id);
    const DType main = g.supports(DType::kBf16) ? DType::kBf16 : DType::kFp16;
    std::printf("%-16s %-10s %-5s %5d %10.1f %10.1f %10.0f %7.0f %10.0f %10.2f\n", id.c_str(), to_string(g.arch),
                g.form_factor == FormFactor::kSxm ? "sxm" : "pcie", g.sm_count, units::to_teraflops(g.peak_for(main)),
                units::to_gigabytes(g.memory_capacity), units::to_gigabytes_per_second(g.memory_bandwidth),
                g.tdp.value(), g.purchase.value(), units::to_usd_per_hour(g.cloud_rate));
  }
  std::printf("\nlinks:  ");
  for (const auto& id : c.ids(SpecKind::kLink)) {
    std::printf("%s ", id.c_str());
  }
  std::printf("\nmodels: ");
  for (const auto& id : c.ids(SpecKind::kModel)) {
    std::printf("%s ", id.c_str());
  }
  std::printf("\n");
}

SpecKind kind_of_path(const std::string& path) {
  // A file outside gpus/, links/, models/ or arch/ is taken as a GPU file (e.g. a calibration overlay).
  return spec_kind_from_folder(std::filesystem::path(path).parent_path().filename().string()).value_or(SpecKind::kGpu);
}

}  // namespace

int run_specs(const std::vector<std::string>& args) {
  Common c;
  std::vector<std::string> rest;
  po::options_description d("options");
  add_common(d, c, false);
  d.add_options()("args", po::value<std::vector<std::string>>(&rest), "list | show ID | check [FILES]");
  po::positional_options_description pos;
  pos.add("args", -1);
  po::variables_map vm;
  if (!parse(args, d, pos, vm,
             "usage: gpusim specs list | show ID | check [FILES...]\n"
             "  list        the catalog (GPUs with their key figures, links, models)\n"
             "  show ID     the spec file of a GPU, link or model, as the catalog holds it\n"
             "  check       validate every catalog file, or the given files; exit 2 on any problem")) {
    return 0;
  }
  if (rest.empty()) {
    throw UsageError("expected list, show ID or check [FILES]");
  }
  const Catalog catalog = load_catalog(c.specs);
  const std::string& sub = rest[0];
  if (sub == "list") {
    list(catalog);
    return 0;
  }
  if (sub == "show") {
    if (rest.size() != 2) {
      throw UsageError("specs show needs one ID");
    }
    for (const SpecKind k : {SpecKind::kGpu, SpecKind::kLink, SpecKind::kModel, SpecKind::kArch}) {
      if (catalog.has(k, rest[1])) {
        const SpecFile& f = catalog.file(k, rest[1]);
        if (k == SpecKind::kGpu) {
          (void)catalog.gpu(rest[1]);  // validate before showing
        }
        std::cout << "# " << f.path << "\n" << f.text;
        return 0;
      }
    }
    (void)catalog.file(SpecKind::kGpu, rest[1]);  // throws "unknown GPU id" with the known ids
    return 2;
  }
  if (sub == "check") {
    std::vector<Diagnostic> problems;
    std::size_t files = 0;
    if (rest.size() == 1) {
      problems = catalog.check_all();
      files = catalog.ids(SpecKind::kGpu).size() + catalog.ids(SpecKind::kLink).size() +
              catalog.ids(SpecKind::kModel).size();
    } else {
      for (std::size_t i = 1; i < rest.size(); ++i) {
        auto p = check_file(catalog, kind_of_path(rest[i]), rest[i]);
        problems.insert(problems.end(), p.begin(), p.end());
        ++files;
      }
    }
    if (!problems.empty()) {
      throw InputError(problems);
    }
    std::cout << "checked " << files << " spec files: no problems\n";
    return 0;
  }
  throw UsageError("unknown specs subcommand \"" + sub + "\" (list, show ID, check [FILES])");
}

}  // namespace gpusim::cli
