// Chart layout rules, checked on every chart kind for every shipped scenario it applies to: no two
// texts overlap, everything drawn lies inside the canvas, every axis title has a unit, and every
// title names the GPU that ran. Text boxes are measured with plot::text_box, the measure the
// charts place their labels with, from the coordinates, size, anchor and rotation in the file.
#include <cstring>
#include <filesystem>
#include <regex>

#include "cli_helpers.hpp"
#include "gpusim/report.hpp"

using namespace gpusim;
using namespace gpusim::test;
namespace plot = gpusim::report::plot;

namespace {

struct Text {
  plot::Box box;
  std::string text;
  std::string role;
};

struct Picture {
  double width = 0;
  double height = 0;
  std::vector<Text> texts;
  std::vector<plot::Box> marks;  // lines, rects, circles, polylines and polygons, as boxes
};

// The text of an element, its five entities read back (report/svg.hpp's xml_escape).
std::string unescape(const std::string& s) {
  static const std::pair<const char*, char> kEntities[] = {
      {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&amp;", '&'}};
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    bool matched = false;
    for (const auto& [entity, c] : kEntities) {
      if (s.compare(i, std::strlen(entity), entity) == 0) {
        out += c;
        i += std::strlen(entity);
        matched = true;
        break;
      }
    }
    if (!matched) {
      out += s[i++];
    }
  }
  return out;
}

double attr(const std::string& element, const std::string& name, double otherwise = 0) {
  std::smatch m;
  const std::regex re(" " + name + "=\"([-0-9.]+)\"");
  return std::regex_search(element, m, re) ? std::stod(m[1]) : otherwise;
}

Picture parse(const std::string& svg) {
  Picture p;
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex(R"re(<svg [^>]*width="([0-9.]+)" height="([0-9.]+)")re")));
  p.width = std::stod(m[1]);
  p.height = std::stod(m[2]);
  const std::regex text(R"re(<text ([^>]*)>([^<]*)</text>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator(); ++it) {
    const std::string a = (*it)[1];
    std::smatch am;
    std::string anchor = "start", role;
    double rotate = 0;
    if (std::regex_search(a, am, std::regex(R"re(text-anchor="(\w+)")re"))) {
      anchor = am[1];
    }
    if (std::regex_search(a, am, std::regex(R"re(rotate\(([-0-9.]+))re"))) {
      rotate = std::stod(am[1]);
    }
    if (std::regex_search(a, am, std::regex(R"re(class="([^"]+)")re"))) {
      role = am[1];
    }
    const plot::Anchor an = anchor == "middle" ? plot::Anchor::kMiddle
                            : anchor == "end"  ? plot::Anchor::kEnd
                                               : plot::Anchor::kStart;
    const std::string s = unescape((*it)[2]);
    const std::string spaced = std::string(" ").append(a);
    p.texts.push_back(
        {plot::text_box(attr(spaced, "x"), attr(spaced, "y"), s, attr(spaced, "font-size"), an, rotate), s, role});
  }
  const std::regex line(R"re(<line ([^>]*)/>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), line); it != std::sregex_iterator(); ++it) {
    const std::string a = std::string(" ").append((*it)[1].str());
    p.marks.push_back({std::min(attr(a, "x1"), attr(a, "x2")), std::min(attr(a, "y1"), attr(a, "y2")),
                       std::max(attr(a, "x1"), attr(a, "x2")), std::max(attr(a, "y1"), attr(a, "y2"))});
  }
  const std::regex rect(R"re(<rect ([^>]*)/>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect); it != std::sregex_iterator(); ++it) {
    const std::string a = std::string(" ").append((*it)[1].str());
    p.marks.push_back({attr(a, "x"), attr(a, "y"), attr(a, "x") + attr(a, "width"), attr(a, "y") + attr(a, "height")});
  }
  const std::regex circle(R"re(<circle ([^>]*)/>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), circle); it != std::sregex_iterator(); ++it) {
    const std::string a = std::string(" ").append((*it)[1].str());
    const double cx = attr(a, "cx"), cy = attr(a, "cy"), r = attr(a, "r");
    p.marks.push_back({cx - r, cy - r, cx + r, cy + r});
  }
  const std::regex points(R"re(<poly(?:line|gon) points="([^"]*)")re");
  const std::regex pair(R"re(([-0-9.]+),([-0-9.]+))re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), points); it != std::sregex_iterator(); ++it) {
    const std::string pts = (*it)[1];
    for (auto q = std::sregex_iterator(pts.begin(), pts.end(), pair); q != std::sregex_iterator(); ++q) {
      const double x = std::stod((*q)[1]), y = std::stod((*q)[2]);
      p.marks.push_back({x, y, x, y});
    }
  }
  return p;
}

// The layout rules every chart keeps; `what` names the chart in failure messages. A chart with
// axes has both titled; one without says that nothing fits.
void check_layout(const std::string& what, const std::string& svg) {
  const Picture p = parse(svg);
  const plot::Box canvas{0, 0, p.width, p.height};
  REQUIRE(!p.texts.empty());
  for (std::size_t i = 0; i < p.texts.size(); ++i) {
    INFO(what << ": \"" << p.texts[i].text << "\"");
    CHECK(plot::within(p.texts[i].box, canvas));
    for (std::size_t j = i + 1; j < p.texts.size(); ++j) {
      INFO("overlaps \"" << p.texts[j].text << "\"");
      CHECK_FALSE(plot::overlaps(p.texts[i].box, p.texts[j].box, 0.5));
    }
  }
  for (const plot::Box& b : p.marks) {
    INFO(what << ": a mark at " << b.left << "," << b.top << " .. " << b.right << "," << b.bottom);
    CHECK(plot::within(b, canvas));
  }
  int axis_titles = 0;
  for (const Text& t : p.texts) {
    if (t.role == "axis-title") {
      ++axis_titles;
      INFO(what << ": axis title \"" << t.text << "\"");
      CHECK(std::regex_search(t.text, std::regex(R"(\([^)]+\))")));
    }
  }
  INFO(what);
  if (axis_titles == 0) {
    CHECK_THAT(svg, Catch::Contains("fits"));
  } else {
    CHECK(axis_titles >= 2);
  }
}

std::vector<std::string> shipped_scenarios() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(source("scenarios"))) {
    if (e.path().extension() == ".toml") {
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The chart `args` write, or "" when the command does not apply (exit other than 0 and 4).
std::string chart(const std::string& args) {
  const auto path = scratch() / "layout.svg";
  std::filesystem::remove(path);
  const Run r = run(args + " --svg " + path.string());
  if ((r.code != 0 && r.code != 4) || !std::filesystem::exists(path)) {
    return "";
  }
  return read_text(path);
}

std::string json_string(const std::string& json, const std::string& key) {
  std::smatch m;
  REQUIRE(std::regex_search(json, m, std::regex("\"" + key + "\": \"([^\"]*)\"")));
  return m[1];
}

}  // namespace

TEST_CASE("the text measure widens with the text, anchors as SVG does and turns with a rotation", "[charts][layout]") {
  const double size = 10;
  const double wide = plot::text_width("WWW", size), narrow = plot::text_width("iii", size);
  CHECK(wide > 3 * narrow);  // W is Helvetica's widest letter (944), i among its narrowest (222)
  CHECK(plot::text_width("ab", size) == Approx(plot::text_width("a", size) + plot::text_width("b", size)));
  const plot::Box start = plot::text_box(100, 50, "label", size, plot::Anchor::kStart);
  const plot::Box end = plot::text_box(100, 50, "label", size, plot::Anchor::kEnd);
  const plot::Box middle = plot::text_box(100, 50, "label", size, plot::Anchor::kMiddle);
  CHECK(start.left == Approx(100));
  CHECK(end.right == Approx(100));
  CHECK((middle.left + middle.right) / 2 == Approx(100));
  CHECK(start.top < 50);
  CHECK(start.bottom > 50);  // the descent below the baseline
  const plot::Box up = plot::text_box(100, 50, "label", size, plot::Anchor::kMiddle, -90);
  CHECK(up.bottom - up.top == Approx(start.right - start.left));  // the width now runs vertically
  CHECK((up.top + up.bottom) / 2 == Approx(50));
}

TEST_CASE("the label placer puts twenty labels at one point without an overlap, with leaders or not at all",
          "[charts][layout]") {
  const plot::Box bounds{0, 0, 400, 300};
  const double px = 200, py = 150, r = 4;
  std::vector<plot::Box> taken{{px - r, py - r, px + r, py + r}};  // the point's own marker
  int placed = 0, leaders = 0;
  constexpr int kLabels = 20;
  for (int i = 0; i < kLabels; ++i) {
    const auto p = plot::place_label(px, py, r, "label number " + std::to_string(i), 10, taken, bounds);
    if (!p) {
      continue;
    }
    CHECK(plot::within(p->box, bounds));
    for (const plot::Box& t : taken) {
      CHECK_FALSE(plot::overlaps(p->box, t, 0.5));
    }
    taken.push_back(p->box);
    ++placed;
    leaders += p->leader ? 1 : 0;
  }
  // Four labels fit next to the point (right, left, above, below); the rest need leaders or fail.
  CHECK(placed > 4);
  CHECK(leaders == placed - 4);
  // A space too small for a label: no place, so the chart lists it in a key instead.
  CHECK_FALSE(plot::place_label(10, 10, 2, "a label far wider than its bounds", 10, {}, {0, 0, 40, 20}));
}

TEST_CASE("no two labels of any shipped chart overlap and every mark lies inside the canvas", "[charts][layout]") {
  int charts = 0;
  for (const std::string& sc : shipped_scenarios()) {
    const std::string name = std::filesystem::path(sc).stem().string();
    for (const auto& [kind, args] : std::vector<std::pair<std::string, std::string>>{
             {"roofline", "roofline " + sc},
             {"breakeven", "breakeven " + sc},
             {"plan", "plan " + sc},
             {"compare", "compare " + sc + " --gpus h100-sxm5-80gb,a100-sxm4-80gb,l40s,rtx4090"}}) {
      const std::string svg = chart(args);
      if (!svg.empty()) {
        check_layout(kind + " " + name, svg);
        ++charts;
      }
    }
  }
  CHECK(charts >= 3 * static_cast<int>(shipped_scenarios().size()));  // roofline, breakeven and plan apply to all
  check_layout("roofline overlay", chart("roofline --gpus rtx4090,a100-sxm4-80gb,h100-sxm5-80gb"));
  // Whole systems, a training and a serving job, one system that cannot run the job.
  for (const char* sc : {"scenarios/llama2-13b-lora-which-box.toml", "scenarios/llama3-8b-serve-2rps.toml"}) {
    check_layout(std::string("systems ") + sc,
                 chart(std::string("compare ") + source(sc) +
                       " --systems 1xrtx4090,2xrtx3090,1xa100-sxm4-80gb,2x8xh100-sxm5-80gb,1xrtx3060-12gb"));
  }
}

TEST_CASE("a sweep with a point that cannot run marks it with a cross and keeps its labels apart", "[charts][layout]") {
  // A micro-batch of 512 sequences of GPT-2 does not fit a 24 GB RTX 4090: those points fail.
  const std::string svg = chart("sweep " + source("scenarios/gpt2-124m-rtx4090.toml") +
                                " --vary system.gpus=1,2,4,8 --vary training.micro_batch=4,16,512 --metric step.time_s "
                                "-o " +
                                (scratch() / "sweep.csv").string());
  REQUIRE(!svg.empty());
  check_layout("sweep", svg);
  CHECK_THAT(svg, Catch::Contains("did not run"));
  CHECK_THAT(svg, Catch::Contains("step time (s)"));
  CHECK_THAT(svg, !Catch::Contains(">training.micro_batch"));  // keys are shown as words
  // Three series, each with its own dash: solid, then two dash patterns.
  const std::regex dash("stroke-dasharray");
  CHECK(std::distance(std::sregex_iterator(svg.begin(), svg.end(), dash), std::sregex_iterator()) >= 2);
}

TEST_CASE("every chart title names the GPU that ran and its count, not the scenario file's", "[charts][layout]") {
  // The scenario is a single RTX 4090; each run below is on two RTX 3090s instead.
  const std::string sc = source("scenarios/gpt2-124m-rtx4090.toml");
  const std::string sets = " --set system.gpu=rtx3090 --set system.gpus=2";
  const Run est = run("estimate " + sc + sets + " --format json");
  REQUIRE(est.code == 0);
  const std::string gpu_name = json_string(est.out, "gpu_name");
  const std::string file_gpu = json_string(run("estimate " + sc + " --format json").out, "gpu_name");
  REQUIRE(gpu_name != file_gpu);
  const std::string ran = "2 × " + gpu_name;
  for (const auto& [kind, args] : std::vector<std::pair<std::string, std::string>>{
           {"roofline", "roofline " + sc + sets},
           {"breakeven", "breakeven " + sc + sets},
           {"plan", "plan " + sc + sets},
           {"sweep", "sweep " + sc + sets + " --vary training.micro_batch=4,8 -o " + (scratch() / "s.csv").string()}}) {
    const std::string svg = chart(args);
    INFO(kind);
    REQUIRE(!svg.empty());
    const Picture p = parse(svg);
    REQUIRE(p.texts.size() >= 2);
    const std::string title = p.texts[0].text + " " + p.texts[1].text;  // the title and the line under it
    CHECK_THAT(title, Catch::Contains(ran));
    CHECK_THAT(title, !Catch::Contains(file_gpu));
  }
  // plan --gpu: the title follows the GPU asked for.
  const std::string svg = chart("plan " + sc + " --gpu rtx3090 --set system.gpus=2");
  const Picture p = parse(svg);
  REQUIRE(p.texts.size() >= 2);
  CHECK_THAT(p.texts[1].text, Catch::Contains(ran));
}

TEST_CASE("the serving plan draws its SLO's TPOT limit and the roofline classes ops by their ridge",
          "[charts][layout]") {
  const std::string serve = chart("plan " + source("scenarios/llama3-70b-fp8-4xh100-serve.toml"));
  REQUIRE(!serve.empty());
  CHECK_THAT(serve, Catch::Contains("SLO: TPOT &lt;="));
  // The roofline's JSON: an op is compute-bound exactly when its intensity reaches the ridge of the
  // step's dtype on that GPU.
  const Run r = run("roofline " + source("scenarios/llama3-8b-8xh100.toml") + " --format json");
  REQUIRE(r.code == 0);
  std::smatch m;
  REQUIRE(std::regex_search(r.out, m, std::regex(R"re("dtype": "bf16",[^}]*"ridge_flop_per_byte": ([0-9.e+]+))re")));
  const double ridge = std::stod(m[1]);
  int ops = 0;
  const std::regex op(R"re("intensity": ([0-9.e+-]+),[^}]*"bound": "(\w+)")re");
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), op); it != std::sregex_iterator(); ++it) {
    const double intensity = std::stod((*it)[1]);
    if (intensity > 0) {
      INFO("intensity " << intensity << " against ridge " << ridge);
      CHECK(((*it)[2] == "compute") == (intensity >= ridge));
      ++ops;
    }
  }
  CHECK(ops > 0);
}
