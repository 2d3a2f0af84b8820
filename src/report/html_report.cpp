// One estimate as a single self-contained HTML page: the text report's content, the roofline of
// the step, the kernel breakdown and the owning-versus-renting curves, every picture inline SVG,
// no script, no stylesheet or font fetched from anywhere (the page works offline and from a file).
#include <algorithm>

#include "gpusim/report.hpp"
#include "report/format.hpp"
#include "report/svg.hpp"

namespace gpusim::report {

namespace {

// The kernel breakdown: each op's share of kernel time as a bar, with its bound.
std::string kernel_table(const answer::Estimate& e) {
  const step::Evaluation& ev = e.eval;
  std::string rows;
  const double total = ev.step.compute.value();
  for (std::size_t i = 0; i < ev.ops.size() && i < 25; ++i) {
    const step::OpShare& op = ev.ops[i];
    const double share = total > 0 ? op.time / ev.step.compute : 0.0;
    rows += strfmt(
        "<tr><td>%s</td><td>%s</td><td class=\"num\">%s</td><td>%s</td><td class=\"num\">%.1f %%</td>"
        "<td><div class=\"bar\" style=\"width:%.1fpx\"></div></td></tr>\n",
        xml_escape(op.name).c_str(), lowering::to_string(op.phase), duration(op.time).c_str(),
        op.compute_bound ? "compute" : "memory", pct(share), 300 * share);
  }
  return "<table>\n<tr><th>kernel</th><th>phase</th><th>time per "
         "step</th><th>bound</th><th>share</th><th></th></tr>\n" +
         rows + "</table>\n" +
         (ev.ops.size() > 25 ? strfmt("<p class=\"note\">%zu more kernels not shown.</p>\n", ev.ops.size() - 25)
                             : std::string());
}

}  // namespace

std::string estimate_html(const answer::Estimate& e, const explain::Roofline& roofline, const Breakeven& breakeven) {
  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>gpusim: " +
      xml_escape(run_title(e) + strfmt(" — %d × %s", e.gpus, e.gpu_name.c_str())) +
      "</title>\n<style>\n"
      "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\n"
      "pre{background:#f6f6f6;padding:1em;white-space:pre-wrap;font-size:13px}\n"
      "table{border-collapse:collapse;font-size:13px}td,th{padding:2px 8px;text-align:left}\n"
      "tr:nth-child(even){background:#f6f6f6}.num{text-align:right}\n"
      ".bar{height:10px;background:#1f77b4}.note{color:#555;font-size:13px}\n"
      "svg{max-width:100%;height:auto}\n"
      "</style>\n</head>\n<body>\n";
  page += "<h1>" + xml_escape(run_title(e) + strfmt(" — %d × %s", e.gpus, e.gpu_name.c_str())) + "</h1>\n";
  page +=
      "<p class=\"note\">gpusim estimate: every figure below comes from the formulas and sources named in "
      "gpusim's documentation (docs/report.md lists each key).</p>\n";
  page += "<h2>Report</h2>\n<pre>" + xml_escape(estimate_text(e)) + "</pre>\n";
  // A job that cannot run has no step to place on the roofs, no kernels and no cost: the report
  // above says why.
  if (step::runs(e.eval)) {
    page += "<h2>Roofline</h2>\n" + roofline_svg(roofline);
    page += "<h2>Kernels of one step</h2>\n" + kernel_table(e);
    page += "<h2>Owning against renting</h2>\n" + breakeven_svg(breakeven);
  }
  page += "</body>\n</html>\n";
  return page;
}

}  // namespace gpusim::report
