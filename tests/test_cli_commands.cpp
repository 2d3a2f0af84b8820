// The contract of every command besides estimate: exit codes (0 success, 2 bad input, 3 a
// threshold exceeded), keys, row counts, and golden outputs — so a change to the evaluator's
// result shows in the tests of each command, not only in estimate's.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>
#include <string>

#include "cli_helpers.hpp"

using namespace gpusim::test;

namespace {

// A number after `"key": ` in JSON text (the first occurrence from `from`).
double json_number(const std::string& json, const std::string& key, std::size_t from = 0) {
  const std::string needle = "\"" + key + "\": ";
  const auto at = json.find(needle, from);
  REQUIRE(at != std::string::npos);
  return std::stod(json.substr(at + needle.size()));
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

const std::string kPlanScenario = source("scenarios/llama2-13b-8xa100.toml");

}  // namespace

TEST_CASE("plan ranks its top layouts and says how many it sized and timed", "[cli][plan]") {
  const Run r = run("plan " + kPlanScenario + " --top 3 --format json");
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  CHECK(count_of(r.out, "\"step_time_s\"") == 3);
  for (const char* key : {"\"sized\"", "\"timed\"", "\"tensor\"", "\"pipeline\"", "\"data\"", "\"zero\"",
                          "\"micro_batch\"", "\"recompute\"", "\"mfu\"", "\"train_time_s\"", "\"cloud_usd\""}) {
    CHECK(r.out.find(key) != std::string::npos);
  }
  CHECK(json_number(r.out, "timed") <= json_number(r.out, "sized"));
  CHECK(json_number(r.out, "timed") >= 3);
}

TEST_CASE("plan's best layout is what estimate gives for that layout", "[cli][plan]") {
  const Run r = run("plan " + kPlanScenario + " --top 1 --format json");
  REQUIRE(r.code == 0);
  const auto field = [&](const char* key) {
    const std::string needle = std::string("\"") + key + "\": ";
    const auto at = r.out.find(needle);
    REQUIRE(at != std::string::npos);
    std::string v = r.out.substr(at + needle.size());
    return v.substr(0, v.find_first_of(",\n"));
  };
  const std::string sets =
      " --set parallelism.tensor=" + field("tensor") + " --set parallelism.pipeline=" + field("pipeline") +
      " --set parallelism.data=" + field("data") + " --set parallelism.zero=" + field("zero") +
      " --set training.micro_batch=" + field("micro_batch") + " --set training.recompute=" + field("recompute") +
      " --set parallelism.sequence=" + field("sequence") +
      " --set parallelism.virtual_stages=" + field("virtual_stages");
  const Run e = run("estimate " + kPlanScenario + sets + " --format json");
  REQUIRE(e.code == 0);
  CHECK(json_number(e.out, "time_s") == Approx(json_number(r.out, "step_time_s")).epsilon(1e-5));
  CHECK(json_number(e.out, "mfu") == Approx(json_number(r.out, "mfu")).epsilon(1e-5));
  CHECK(json_number(e.out, "per_gpu_bytes") == Approx(json_number(r.out, "memory_per_gpu_bytes")).epsilon(1e-5));
  CHECK(json_number(e.out, "cloud_usd") == Approx(json_number(r.out, "cloud_usd")).epsilon(1e-5));
}

TEST_CASE("plan's table matches its golden file", "[cli][plan][golden]") {
  const Run r = run("plan " + kPlanScenario + " --top 5");
  REQUIRE(r.code == 0);
  check_golden("tests/golden/plan-llama2-13b-8xa100.txt", r.out);
}

TEST_CASE("plan gives the same bytes every time it is asked the same question", "[cli][plan]") {
  for (const std::string& scenario : {kPlanScenario, source("scenarios/llama3-70b-fp8-4xh100-serve.toml")}) {
    for (const char* format : {"text", "json"}) {
      const std::string args = "plan " + scenario + " --top 3 --format " + format;
      const Run first = run(args);
      const Run second = run(args);
      REQUIRE(first.code == 0);
      CHECK(first.out == second.out);
      CHECK(first.out.find("seconds") == std::string::npos);  // no wall time in the report
    }
  }
}

TEST_CASE("plan --timing adds the search's wall time, rate and peak memory", "[cli][plan]") {
  const Run text = run("plan " + kPlanScenario + " --top 1 --timing");
  REQUIRE(text.code == 0);
  // The wall time is a duration in the unit its size reads in (duration()).
  const std::string wall = "([0-9.]+ (us|ms|s|min)|0)";
  CHECK(std::regex_search(text.out,
                          std::regex(" timed in " + wall + " \\([0-9.]+ M timed/s\\), peak memory [0-9]+ MB\n")));
  const Run json = run("plan " + kPlanScenario + " --top 1 --timing --format json");
  REQUIRE(json.code == 0);
  CHECK(json_number(json.out, "seconds") >= 0);
  const Run serving =
      run("plan " + source("scenarios/llama3-70b-fp8-4xh100-serve.toml") + " --formats fp8 --top 1 --timing");
  REQUIRE(serving.code == 0);
  CHECK(std::regex_search(serving.out, std::regex(" meets? the SLO, in " + wall + "\n")));
}

TEST_CASE("plan rejects bad options with exit 2", "[cli][plan][errors]") {
  CHECK(run("plan " + kPlanScenario + " --objective speed").code == 2);
  CHECK(run("plan " + kPlanScenario + " --top 0").code == 2);
  CHECK(run("plan").code == 2);
}

TEST_CASE("sweep writes one row per grid point, its axes first", "[cli][sweep]") {
  const std::string s = source("scenarios/scaling-llama2-7b.toml");
  const Run r = run("sweep " + s + " --vary system.gpus=8,64,512 --vary training.micro_batch=1,2");
  REQUIRE(r.code == 0);
  const std::string header = r.out.substr(0, r.out.find('\n'));
  CHECK(header.rfind("vary.system.gpus,vary.training.micro_batch,status,scenario,system.gpu,", 0) == 0);
  CHECK(count_of(r.out, "\n") == 1 + 3 * 2);
  CHECK(count_of(r.out, ",ok,") == 6);
  // --shard 1/2 runs the odd points only
  const Run half = run("sweep " + s + " --vary system.gpus=8,64,512 --vary training.micro_batch=1,2 --shard 1/2");
  REQUIRE(half.code == 0);
  CHECK(count_of(half.out, "\n") == 1 + 3);
  const Run json = run("sweep " + s + " --vary system.gpus=8,64 --format json");
  REQUIRE(json.code == 0);
  CHECK(count_of(json.out, "\"status\": \"ok\"") == 2);
}

TEST_CASE("CSV has the JSON report's fields under their dotted keys, with the same exact numbers", "[cli][csv]") {
  const std::string s = source("scenarios/gpt2-124m-rtx4090.toml");
  const Run csv = run("estimate " + s + " --format csv");
  const Run json = run("estimate " + s + " --format json");
  REQUIRE(csv.code == 0);
  REQUIRE(json.code == 0);
  const std::string header = csv.out.substr(0, csv.out.find('\n'));
  const std::string row = csv.out.substr(header.size() + 1);
  // RFC 4180: the quoted scenario name holds a comma; outside quotes, commas split fields.
  auto fields = [](const std::string& line) {
    std::vector<std::string> out(1);
    bool quoted = false;
    for (const char c : line) {
      if (c == '"') {
        quoted = !quoted;
      } else if (c == ',' && !quoted) {
        out.emplace_back();
      } else if (c != '\n') {
        out.back() += c;
      }
    }
    return out;
  };
  const auto names = fields(header);
  const auto values = fields(row);
  REQUIRE(names.size() == values.size());
  const auto at = std::find(names.begin(), names.end(), "step.time_s");
  REQUIRE(at != names.end());
  const std::string value = values[static_cast<std::size_t>(at - names.begin())];
  // The same digits in JSON's "step": {"time_s": ...}: both print the shortest exact form.
  CHECK_THAT(json.out, Catch::Contains("\"time_s\": " + value + ","));
  CHECK(std::find(names.begin(), names.end(), "memory.per_gpu_bytes") != names.end());
  CHECK(values.front() == "GPT-2 124M, 10B tokens on 1 x RTX 4090 (llm.c recipe)");
}

TEST_CASE("sweep's rows match its golden file", "[cli][sweep][golden]") {
  const Run r = run("sweep " + source("scenarios/scaling-llama2-7b.toml") + " --vary system.gpus=8,64,512,1024");
  REQUIRE(r.code == 0);
  check_golden("tests/golden/sweep-scaling-llama2-7b.csv", r.out);
}

TEST_CASE("a sweep point that cannot run carries its reason, the sweep goes on and exits 4, and none running is exit 2",
          "[cli][sweep]") {
  const std::string s = source("scenarios/scaling-llama2-7b.toml");
  const Run some = run("sweep " + s + " --vary system.gpus=8,12");
  REQUIRE(some.code == 4);
  CHECK(count_of(some.out, ",ok,") == 1);
  CHECK_THAT(some.out, Catch::Contains("12,") && Catch::Contains("must be a multiple"));
  // RFC 4180: every record has the header's field count, the failed point's empty fields included.
  auto field_count = [](const std::string& line) {
    std::size_t n = 1;
    bool quoted = false;
    for (const char c : line) {
      quoted = c == '"' ? !quoted : quoted;
      n += c == ',' && !quoted ? 1 : 0;
    }
    return n;
  };
  std::istringstream lines(some.out);
  std::string header, line;
  std::getline(lines, header);
  int records = 0;
  while (std::getline(lines, line)) {
    CHECK(field_count(line) == field_count(header));
    ++records;
  }
  CHECK(records == 2);
  // An out-of-range value is one more point that cannot run, with its range; the next point still runs.
  const Run range = run("sweep " + s + " --vary system.gpus=2147483648,16 --format json");
  CHECK(range.code == 4);
  CHECK_THAT(range.out, Catch::Contains("must be between 1 and 10000000, got 2147483648"));
  CHECK(count_of(range.out, "\"status\": \"ok\"") == 1);
  const Run none = run("sweep " + s + " --vary system.gpus=12,20");
  CHECK(none.code == 2);
  CHECK(none.out.empty());
  CHECK_THAT(none.err, Catch::Contains("no point can run"));
  // One reason shared by every point (an unknown key) is said once, not once per point.
  const Run unknown = run("sweep " + s + " --vary system.gpuz=8,16,32");
  CHECK(unknown.code == 2);
  CHECK(count_of(unknown.err, "unknown key") == 1);
  CHECK_THAT(unknown.err, Catch::Contains("no point can run (all 3): system.gpuz: unknown key"));
  CHECK(run("sweep " + s + " --vary system.gpus=").code == 2);
  CHECK(run("sweep " + s + " --vary system.gpus=8 --shard 2/2").code == 2);
  CHECK(run("sweep " + s).code == 2);
}

TEST_CASE("compare prints one row per GPU, in JSON with its keys and in CSV", "[cli][compare]") {
  const std::string s = source("scenarios/workstation-4x4090-1b.toml");
  const Run json = run("compare " + s + " --gpus rtx4090,rtx5090,a100-sxm4-80gb --format json");
  REQUIRE(json.code == 0);
  CHECK(count_of(json.out, "\"gpu\"") == 3);
  for (const char* key : {"\"runs\"", "\"time_s\"", "\"gpu_hours\"", "\"cloud_usd\"", "\"owned_usd\"",
                          "\"usd_per_million_tokens\"", "\"fits\"", "\"bottleneck\""}) {
    CHECK(json.out.find(key) != std::string::npos);
  }
  const Run csv = run("compare " + s + " --gpus rtx4090,rtx5090 --format csv");
  REQUIRE(csv.code == 0);
  CHECK(count_of(csv.out, "\n") == 3);
}

TEST_CASE("compare's table matches its golden file", "[cli][compare][golden]") {
  const Run r = run("compare " + source("scenarios/workstation-4x4090-1b.toml") +
                    " --gpus rtx4090,rtx5090,a100-sxm4-80gb,h100-sxm5-80gb");
  REQUIRE(r.code == 0);
  check_golden("tests/golden/compare-workstation-4x4090-1b.txt", r.out);
}

TEST_CASE("compare on a serving scenario shows latency, throughput and cost per token columns", "[cli][compare]") {
  const Run r = run("compare " + source("scenarios/llama3-70b-fp8-4xh100-serve.toml") +
                    " --gpus h100-sxm5-80gb,h200-sxm,a100-sxm4-80gb");
  REQUIRE(r.code == 0);
  for (const char* column : {"TTFT p50", "TTFT p99", "TPOT p50", "out tok/s", "req/s", "USD/Mtok"}) {
    CHECK_THAT(r.out, Catch::Contains(column));
  }
  CHECK_THAT(r.out, !Catch::Contains("MFU"));
  // the A100 has no fp8: its row says why instead of numbers
  CHECK_THAT(r.out, Catch::Contains("a100-sxm4-80gb  cannot run") && Catch::Contains("no fp8 support"));
}

TEST_CASE("breakeven prints the curve and draws it", "[cli][breakeven]") {
  const auto svg = scratch() / "be.svg";
  const Run r = run("breakeven " + source("scenarios/breakeven-desktop.toml") + " --svg " + svg.string());
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("owning is cheaper over the lifetime above"));
  CHECK(std::filesystem::file_size(svg) > 1000);
  check_golden("tests/golden/breakeven-desktop.txt", r.out);
  CHECK(run("breakeven").code == 2);
  CHECK(run("breakeven " + source("scenarios/breakeven-desktop.toml") + " --format csv").code == 2);
}

TEST_CASE("breakeven's JSON curve follows purchase / (u (cloud - electricity)) at each utilization",
          "[cli][breakeven]") {
  const Run r = run("breakeven " + source("scenarios/breakeven-desktop.toml") + " --format json");
  REQUIRE(r.code == 0);
  CHECK(count_of(r.out, "\"utilization\"") == 22);  // 2 %, 3 %, then every 5 %
  // At the crossover utilization the owned busy hour costs what the rented one does; the curve is
  // owned = purchase / (lifetime_h u) + electricity, so owned(u) − electricity scales as 1/u.
  const auto at = r.out.find("\"utilization\": 0.5");
  REQUIRE(at != std::string::npos);
  const double owned_half = json_number(r.out, "owned_usd_per_busy_hour", at);
  const auto at1 = r.out.find("\"utilization\": 1");
  const double owned_full = json_number(r.out, "owned_usd_per_busy_hour", at1);
  const double electricity = 2 * owned_full - owned_half;  // owned(u) = a/u + e: 2·owned(1) − owned(0.5) = e
  CHECK(owned_half - electricity == Approx(2 * (owned_full - electricity)));
  CHECK(electricity > 0);
}

TEST_CASE("an output path that cannot be written is bad input, refused before any work", "[cli][errors]") {
  const auto dir = scratch() / "no-such-dir";
  const auto svg = scratch() / "written-anyway.svg";
  std::filesystem::remove(svg);
  const Run r = run("breakeven " + source("scenarios/breakeven-desktop.toml") + " --svg " + svg.string() + " -o " +
                    (dir / "out.txt").string());
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("--output: no directory " + dir.string()));
  CHECK_FALSE(std::filesystem::exists(svg));
  const Run is_dir = run("plan " + source("scenarios/llama2-13b-8xa100.toml") + " --svg " + scratch().string());
  CHECK(is_dir.code == 2);
  CHECK_THAT(is_dir.err, Catch::Contains("--svg: is a directory"));
}

TEST_CASE("a write the device fails exits 1 with the reason and leaves no file behind", "[cli][errors]") {
  // /dev/full fails every write with ENOSPC: the SVG staged beside it is removed, not left half done
  const auto svg = scratch() / "staged.svg";
  std::filesystem::remove(svg);
  const Run full =
      run("breakeven " + source("scenarios/breakeven-desktop.toml") + " --svg " + svg.string() + " -o /dev/full");
  CHECK(full.code == 1);
  CHECK_THAT(full.err, Catch::Contains("/dev/full: cannot write the output file: No space left on device"));
  CHECK_FALSE(std::filesystem::exists(svg));
  for (const auto& e : std::filesystem::directory_iterator(scratch())) {
    CHECK(e.path().filename().string().rfind(".gpusim-", 0) == std::string::npos);  // no temporary file
  }
  // Standard output is checked too: its write and flush.
  const Run out = run("estimate " + source("scenarios/gpt2-124m-rtx4090.toml") + " > /dev/full");
  CHECK(out.code == 1);
  CHECK_THAT(out.err, Catch::Contains("cannot write to standard output: No space left on device"));
}

TEST_CASE("init writes a training and a serving template that estimate runs as they are", "[cli][init]") {
  for (const std::string kind : {"training", "serving"}) {
    const auto path = scratch() / ("init-" + kind + ".toml");
    std::filesystem::remove(path);
    REQUIRE(run("init " + kind + " -o " + path.string()).code == 0);
    const Run r = run("estimate " + path.string());
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains(kind == "training" ? "to train" : "first token"));
    const Run again = run("init " + kind + " -o " + path.string());
    CHECK(again.code == 2);  // an existing scenario is never overwritten
    CHECK_THAT(again.err, Catch::Contains("exists"));
  }
  CHECK(run("init").code == 2);
  CHECK(run("init inference").code == 2);
}

TEST_CASE("estimate --format html is one page with the report, the roofline and the break-even inline", "[cli][html]") {
  const Run r = run("estimate " + source("scenarios/gpt2-124m-rtx4090.toml") + " --format html");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("<!DOCTYPE html>"));
  CHECK(count_of(r.out, "<svg") == 2);
  CHECK_THAT(r.out,
             Catch::Contains("<h2>Kernels of one step</h2>") && Catch::Contains("Roofline: NVIDIA GeForce RTX 4090"));
  CHECK(r.out.find("<script") == std::string::npos);  // nothing to run, nothing to fetch
  CHECK(run("compare " + source("scenarios/gpt2-124m-rtx4090.toml") + " --gpus rtx4090 --format html").code == 2);
}

TEST_CASE("sweep shows progress only on a terminal, and never with --quiet", "[cli][sweep]") {
  // `script` runs the sweep on a pseudo-terminal, as a user's shell would; 64 points (> 50) show it.
  const std::string sweep = std::string(GPUSIM_BINARY) + " sweep " + source("scenarios/gpt2-124m-rtx4090.toml") +
                            " --vary system.gpus=1,2,4,8,16,32,64,128 --vary training.micro_batch=1,2,4,8,16,32,64,128";
  auto on_tty = [](const std::string& cmd) {
    std::string out;
    FILE* p = ::popen(("script -qec '" + cmd + " >/dev/null' /dev/null").c_str(), "r");
    REQUIRE(p != nullptr);
    std::array<char, 4096> buf{};
    while (std::fgets(buf.data(), buf.size(), p) != nullptr) {
      out += buf.data();
    }
    ::pclose(p);
    return out;
  };
  CHECK_THAT(on_tty(sweep), Catch::Contains("sweep: 64 of 64 points"));
  CHECK_THAT(on_tty(sweep + " --quiet"), !Catch::Contains("sweep:"));
  const Run piped =
      run_env("", "sweep " + source("scenarios/gpt2-124m-rtx4090.toml") +
                      " --vary system.gpus=1,2,4,8,16,32,64,128 --vary training.micro_batch=1,2,4,8,16,32,64,128");
  CHECK(piped.err.empty());  // stderr is a file here: no progress lines
}

TEST_CASE("what reaches the TOML parser is bounded: size, key depth, nesting and line length, each with a position",
          "[cli][errors][limits]") {
  const std::string base = read_text(source("scenarios/gpt2-124m-rtx4090.toml"));
  const int base_lines = static_cast<int>(count_of(base, "\n"));
  // /dev/zero never ends: read up to 16 MiB, then refused.
  const Run zero = run("estimate /dev/zero");
  CHECK(zero.code == 2);
  CHECK_THAT(zero.err, Catch::Contains("/dev/zero: larger than 16 MiB"));
  // A regular file one byte past the limit likewise; one at the limit is read whole and parsed:
  // the scenario, then comment lines of 64 bytes, then one comment line that fills it to 16 MiB.
  const std::size_t limit = 16 * 1024 * 1024;
  const std::string over = write_temp("over-limit.toml", std::string(limit + 1, '#'));
  CHECK_THAT(run("estimate " + over).err, Catch::Contains("larger than 16 MiB"));
  std::string full = base;
  const std::string line = "#" + std::string(62, 'x') + "\n";
  while (full.size() + line.size() < limit) {
    full += line;
  }
  full += "#" + std::string(limit - full.size() - 2, 'x') + "\n";
  REQUIRE(full.size() == limit);
  CHECK(run("estimate " + write_temp("at-limit.toml", full)).code == 0);
  // A header of 60,000 dotted parts overflowed toml++'s stack (SIGSEGV); it is refused at the dot
  // that starts the 65th part: "[" in column 1, then "a." pairs, so that dot is in column 1 + 64 * 2.
  std::string deep = "[a";
  for (int i = 1; i < 60000; ++i) {
    deep += ".a";
  }
  const std::string deep_file = write_temp("deep.toml", base + deep + "]\n");
  const Run d = run("estimate " + deep_file);
  CHECK(d.code == 2);
  CHECK_THAT(d.err, Catch::Contains(deep_file + ":" + std::to_string(base_lines + 1) + ":" +
                                    std::to_string(1 + 64 * 2) + ": a key of more than 64 dotted parts"));
  // Arrays 100 deep: the 65th '[' after "x = " (4 columns) is refused.
  const std::string nest_file =
      write_temp("nest.toml", base + "x = " + std::string(100, '[') + std::string(100, ']') + "\n");
  const Run n = run("estimate " + nest_file);
  CHECK(n.code == 2);
  CHECK_THAT(n.err, Catch::Contains(":" + std::to_string(base_lines + 1) + ":" + std::to_string(4 + 65) +
                                    ": arrays or tables nested more than 64 deep"));
  const Run l = run("estimate " + write_temp("long.toml", base + "x = \"" + std::string(70000, 'a') + "\"\n"));
  CHECK(l.code == 2);
  CHECK_THAT(l.err, Catch::Contains("a line longer than 65536 bytes"));
  // Measurement files go through the same bounds.
  const Run m = run("validate " + write_temp("deep-measurements.toml", deep + "]\n"));
  CHECK(m.code == 2);
  CHECK_THAT(m.err, Catch::Contains("a key of more than 64 dotted parts"));
  // Floats, dotted keys within the limit and brackets inside strings are not counted.
  const Run ok =
      run("estimate " + write_temp("fine.toml", base + "\n[cost.x]\n") + " --set cost.electricity='\"0.5 USD/kWh\"'");
  CHECK(ok.code == 2);  // [cost.x] is an unknown table: the parser saw the file, the loader refused the key
  CHECK_THAT(ok.err, Catch::Contains("cost.x"));
}

TEST_CASE("an inference request longer than the model's context is refused", "[cli][errors]") {
  // Llama-2-7B: max_seq 4096; 100,000 + 128 positions exceed it.
  const Run r =
      run("estimate " + source("scenarios/llama2-7b-decode-rtx4090.toml") + " --set inference.prompt_tokens=100000");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("inference.prompt_tokens") &&
                        Catch::Contains("100128 exceeds the model's context of 4096"));
  CHECK(run("estimate " + source("scenarios/llama2-7b-decode-rtx4090.toml") + " --set inference.prompt_tokens=3968")
            .code == 0);
}

TEST_CASE("plan's --top and --max-gpus are bounded", "[cli][plan][errors]") {
  const std::string sc = source("scenarios/llama2-13b-8xa100.toml");
  const Run top = run("plan " + sc + " --top 1000000");
  CHECK(top.code == 2);
  CHECK_THAT(top.err, Catch::Contains("--top must be between 1 and 1000, got 1000000"));
  const Run gpus = run("plan " + sc + " --max-gpus 10000000");
  CHECK(gpus.code == 2);
  CHECK_THAT(gpus.err, Catch::Contains("--max-gpus must be between 0 and 100000"));
  CHECK(run("plan " + sc + " --max-gpus -8").code == 2);
  CHECK(run("plan " + sc + " --top 1000").code == 0);
}
