// Roofline reports: an aligned table and an SVG picture (log-log axes, roofs, ridge point, ops
// sized by their share of step time). Formatting only: the numbers come from make_roofline.
#include <algorithm>
#include <cmath>

#include "gpusim/report.hpp"
#include "report/format.hpp"
#include "report/json_writer.hpp"

namespace gpusim::report {

using explain::Roofline;
using explain::RooflinePoint;

std::string roofline_text(const Roofline& r) {
  std::string out = "Roofline of the " + r.gpu_name + "\n";
  out += strfmt("  %-6s %16s %16s %22s\n", "roof", "paper", "achievable", "ridge vs DRAM (FLOP/B)");
  for (const auto& c : r.compute) {
    out += strfmt("  %-6s %9.1f TFLOP/s %9.1f TFLOP/s %22.0f\n", units::to_string(c.dtype),
                  units::to_teraflops(c.paper), units::to_teraflops(c.achievable), c.ridge);
  }
  for (const auto& m : r.memory) {
    out += strfmt("  %-6s %12.2f TB/s %12.2f TB/s\n", m.name.c_str(), units::to_terabytes_per_second(m.paper),
                  units::to_terabytes_per_second(m.achievable));
  }
  if (r.points.empty()) {
    return out;
  }
  out += "\n  ops of the step (kernels counted by bytes only show no FLOPs):\n";
  out += strfmt("  %-26s %-9s %12s %12s %9s %10s %-8s %6s\n", "op", "phase", "GFLOP", "MB", "FLOP/B", "TFLOP/s",
                "bound", "share");
  for (const auto& p : r.points) {
    out += strfmt("  %-26s %-9s %12.1f %12.1f %9.1f %10.1f %-8s %5.1f%%\n", p.name.c_str(),
                  lowering::to_string(p.phase), units::to_gigaflop(p.flops), units::to_megabytes(p.bytes), p.intensity,
                  units::to_teraflops(p.attained), p.compute_bound ? "compute" : "memory", 100 * p.share);
  }
  return out;
}

std::string roofline_json(const Roofline& r) {
  JsonWriter w;
  w.begin_object();
  w.value("gpu", r.gpu_id);
  w.begin_array("compute_roofs");
  for (const auto& c : r.compute) {
    w.begin_object();
    w.value("dtype", units::to_string(c.dtype));
    w.value("paper_flops", c.paper.value());
    w.value("achievable_flops", c.achievable.value());
    w.value("ridge_flop_per_byte", c.ridge);
    w.end_object();
  }
  w.end_array();
  w.begin_array("memory_roofs");
  for (const auto& m : r.memory) {
    w.begin_object();
    w.value("name", m.name);
    w.value("paper_bytes_per_s", m.paper.value());
    w.value("achievable_bytes_per_s", m.achievable.value());
    w.end_object();
  }
  w.end_array();
  w.begin_array("ops");
  for (const auto& p : r.points) {
    w.begin_object();
    w.value("name", p.name);
    w.value("phase", lowering::to_string(p.phase));
    w.value("flops", p.flops.value());
    w.value("bytes", p.bytes.value());
    w.value("intensity", p.intensity);
    w.value("attained_flops", p.attained.value());
    w.value("attained_bytes_per_s", p.bandwidth.value());
    w.value("bound", p.compute_bound ? "compute" : "memory");
    w.value("share", p.share);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.take() + "\n";
}

std::string roofline_text(const std::vector<Roofline>& rs) {
  std::string text;
  for (const Roofline& r : rs) {
    if (!text.empty()) {
      text += '\n';
    }
    text += roofline_text(r);
  }
  return text;
}

std::string roofline_json(const std::vector<Roofline>& rs) {
  if (rs.size() == 1) {
    return roofline_json(rs.front());
  }
  std::string json = "[\n";
  for (const Roofline& r : rs) {
    std::string one = roofline_json(r);
    one.pop_back();  // its newline: the array separates its items
    if (json.size() > 2) {
      json += ",\n";
    }
    json += one;
  }
  return json + "\n]\n";
}

}  // namespace gpusim::report
