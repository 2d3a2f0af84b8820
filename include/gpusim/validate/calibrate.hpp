// Least-squares calibration of efficiency parameters from measurements (`gpusim calibrate`).
//
// Each parameter enters its prediction linearly (or its measured time linearly), so each fit is
// an ordinary least-squares problem solved with Eigen (QR):
//   stream / L2 / host link:  measured_i = η · B_i                          (B_i: spec bandwidth)
//   attention:                measured_i = η · r_i                          (r_i: rate at η = 1)
//   GEMM:                     t_i = c_i · (1/η) + o                         (c_i: wave-quantized compute
//                                                                            time at η = 1; o: kernel gap)
//   collectives in a node:    t_i = a_i · (1/η) + s_i · α                   (a_i = S·f(n)/B_link,
//                                                                            s_i = ring steps)
//   power:                    (P_i − idle) / (TDP − idle) = activity        (memory- or compute-bound)
//   launch overhead:          t_i = launch cost (eager or CUDA graph)
// Per GPU, and per architecture over all its GPUs' rows (defaults for GPUs without rows). A
// parameter with too few rows, or whose fit is not finite and positive, keeps its prior value
// and the result says why; so does a fit that raises the median |error| of its own rows (least
// squares and the median judge differently).
#pragma once

#include <string>
#include <vector>

#include "gpusim/spec/catalog.hpp"
#include "gpusim/validate/measurement.hpp"

namespace gpusim {

struct FittedParam {
  std::string scope;  // GPU id, or "arch:<architecture>"
  std::string table;  // "efficiency" or "power"
  std::string key;    // e.g. "dram", "peer_latency"
  double prior = 0;
  double value = 0;
  bool is_time = false;            // written with a unit ("2.1 us")
  std::vector<std::string> rows;   // measurement ids it was fitted on
  std::vector<std::string> files;  // measurement files they came from
};

struct CalibrationResult {
  std::vector<FittedParam> params;
  std::vector<std::string> kept;  // "h100-sxm5-80gb efficiency.gemm: 1 row, needs 2 (kept 0.80)"
};

CalibrationResult calibrate(const std::vector<Measurement>& rows, const Catalog& catalog);

// The overlay as spec files: gpus/<id>.toml and arch/<arch>.toml, each `base = "<own id>"`
// (a patch over the built-in file), every value commented with its rows and files.
struct OverlayFile {
  std::string relative_path;
  std::string text;
};
std::vector<OverlayFile> overlay_files(const CalibrationResult& r);
std::vector<OverlayFile> overlay_files(const std::vector<FittedParam>& params);
// `base` with the fitted values patched in (what `--specs DIR` gives after write_overlay).
Catalog with_overlay(const Catalog& base, const std::vector<FittedParam>& params);
// Writes them under `dir`; a catalog with `add_directory(dir)` then uses the fitted values.
void write_overlay(const CalibrationResult& r, const std::string& dir);

}  // namespace gpusim
