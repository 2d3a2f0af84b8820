// A sweep bounds its work: a grid over the point limit is refused before any work, with its point
// count and the limit (--max-points raises it), counted without overflow; rows are handed on as they
// are computed and written in constant memory, put in place whole or not at all.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli_helpers.hpp"
#include "helpers.hpp"

using namespace gpusim;
using test::Run;
using test::run;
using test::source;

namespace {

const std::string kScenario = source("scenarios/gpt2-124m-rtx4090.toml");

// "--vary KEY=1,2,...,n"
std::string axis(const std::string& key, int n) {
  std::string v = " --vary " + key + "=";
  for (int i = 1; i <= n; ++i) {
    if (i > 1) {
      v += ',';
    }
    v += std::to_string(i);
  }
  return v;
}

// The peak resident memory (KiB) of `command` run by the shell; -1 when it fails.
long peak_kib_of(const std::string& command) {
  std::array<int, 2> fds{};
  REQUIRE(::pipe(fds.data()) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {  // a fresh process, so that its children's peak is the command's alone
    ::close(fds[0]);
    const int rc = std::system(command.c_str());
    rusage u{};
    ::getrusage(RUSAGE_CHILDREN, &u);
    const long peak = rc == 0 ? u.ru_maxrss : -1;
    (void)!::write(fds[1], &peak, sizeof peak);
    ::_exit(0);
  }
  ::close(fds[1]);
  long peak = -1;
  (void)!::read(fds[0], &peak, sizeof peak);
  ::close(fds[0]);
  ::waitpid(pid, nullptr, 0);
  return peak;
}

}  // namespace

TEST_CASE("a sweep grid over the point limit is refused before any work with its count and the limit", "[sweep]") {
  // 1000 x 1000 x 1000 = 10^9 points, a hundred times the limit of 10^7.
  const std::string out = (test::scratch() / "grid.csv").string();
  std::filesystem::remove(out);
  const Run r = run("sweep " + kScenario + axis("training.tokens", 1000) + axis("cost.pue", 1000) +
                    axis("model.vocab", 1000) + " -o " + out);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("1000000000 points (1000 x 1000 x 1000 values)") &&
                        Catch::Contains("limit of " + std::to_string(search::kMaxSweepPoints) + " points") &&
                        Catch::Contains("--max-points"));
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("a sweep grid beyond 64 bits of points is refused with its size, not an overflow", "[sweep]") {
  // Ten axes of 100 values: 10^20 points, more than 2^64 (about 1.8e19).
  std::string axes;
  for (const char* key :
       {"training.tokens", "cost.pue", "model.vocab", "training.seq_len", "model.layers", "training.micro_batch",
        "system.oversubscription", "model.max_seq", "input.workers", "training.global_batch"}) {
    axes += axis(key, 100);
  }
  const Run r = run("sweep " + kScenario + axes);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("about 1e+20 points") && Catch::Contains("limit of"));
  const std::vector<search::Axis> big(10, search::Axis{"k", std::vector<std::string>(100, "1")});
  CHECK_FALSE(search::grid_points(big).has_value());
  const std::vector<search::Axis> small{{"a", {"1", "2", "3"}}, {"b", {"1", "2"}}};
  CHECK(search::grid_points(small) == std::optional<std::uint64_t>(6));
}

TEST_CASE("the sweep point limit counts the points of this shard", "[sweep]") {
  CHECK(search::shard_points(10, 0, 1) == 10);
  CHECK(search::shard_points(10, 1, 3) == 3);  // 1, 4, 7
  CHECK(search::shard_points(10, 0, 3) == 4);  // 0, 3, 6, 9
  CHECK(search::shard_points(2, 5, 10) == 0);
  search::SweepOptions o;
  o.max_points = 3;
  const std::vector<search::Axis> six{{"a", {"1", "2", "3"}}, {"b", {"1", "2"}}};
  CHECK_THROWS_AS(search::check_grid(six, o), InputError);
  o.shard = 1;
  o.shards = 2;  // points 1, 3, 5
  CHECK_NOTHROW(search::check_grid(six, o));
  // On the command line: 12 points over a limit of 5, split in three shards of 4.
  const std::string grid = axis("training.tokens", 4) + axis("cost.pue", 3) + " --max-points 5";
  const Run whole = run("sweep " + kScenario + grid);
  CHECK(whole.code == 2);
  CHECK_THAT(whole.err, Catch::Contains("12 points") && Catch::Contains("limit of 5 points"));
  const Run shard = run("sweep " + kScenario + grid + " --shard 2/3");
  CHECK(shard.code == 0);
  CHECK(std::count(shard.out.begin(), shard.out.end(), '\n') == 1 + 4);
}

TEST_CASE("sweep --max-points raises the point limit and takes only a whole number in its range", "[sweep]") {
  const Run raised = run("sweep " + kScenario + axis("cost.pue", 3) + " --max-points 3");
  CHECK(raised.code == 0);
  for (const char* bad : {"0", "-1", "1.5", "x", "1000000000001", "99999999999999999999"}) {
    const Run r = run("sweep " + kScenario + axis("cost.pue", 3) + " --max-points " + bad);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    // Text that is no whole number is quoted as given; a whole number out of range is named.
    CHECK_THAT(r.err,
               Catch::Contains("--max-points must be a whole number from 1 to 1000000000000") &&
                   (Catch::Contains(std::string("\"") + bad + "\"") || Catch::Contains(std::string("got ") + bad)));
  }
}

TEST_CASE("sweep hands each point on as soon as it is estimated, in grid order", "[sweep]") {
  const ParsedScenario parsed = scenario::parse_scenario_file(kScenario);
  const std::vector<search::Axis> axes{{"cost.pue", {"1.1", "1.2", "1.3"}}, {"training.micro_batch", {"1", "2"}}};
  std::vector<std::string> seen;
  std::size_t progressed = 0;
  search::SweepOptions o;
  o.progress = [&](std::size_t done, std::size_t total) {
    CHECK(done == seen.size());  // each point reached the visitor before its progress
    CHECK(total == 6);
    progressed = done;
  };
  search::sweep(test::catalog(), parsed, {}, axes, o, [&](const search::SweepPoint& p) {
    REQUIRE(p.estimate.has_value());
    seen.push_back(p.values[0] + "/" + p.values[1]);
  });
  CHECK(seen == std::vector<std::string>{"1.1/1", "1.2/1", "1.3/1", "1.1/2", "1.2/2", "1.3/2"});
  CHECK(progressed == 6);
  // The kept form holds the same points.
  CHECK(search::sweep(test::catalog(), parsed, {}, axes).size() == 6);
}

TEST_CASE("sweep writes its rows as it computes them: ten times the points take no more memory", "[sweep]") {
  // Kept until the end, 4,500 more estimates would take well over 10 MB; written as they come,
  // the peak stays that of one point (and the 1 MiB write buffer).
  const std::string out = (test::scratch() / "large.csv").string();
  // Under AddressSanitizer freed memory waits in a quarantine of up to 256 MB before reuse, which
  // would grow with the points: the command runs without one (the variable is ignored otherwise).
  auto command = [&](int values) {
    return "ASAN_OPTIONS=\"$ASAN_OPTIONS:quarantine_size_mb=0\" " + std::string(GPUSIM_BINARY) + " sweep " + kScenario +
           axis("training.tokens", values) + axis("cost.pue", 50) + " -o " + out + " 2>/dev/null";
  };
  const long small = peak_kib_of(command(10));   // 500 points
  const long large = peak_kib_of(command(100));  // 5,000 points
  REQUIRE(small > 0);
  REQUIRE(large > 0);
  CHECK(large - small < 4 * 1024);
  const std::string rows = test::read_text(out);
  CHECK(std::count(rows.begin(), rows.end(), '\n') == 1 + 5000);
}

TEST_CASE("a sweep point is the estimate of the scenario with its values set, in every report field", "[sweep]") {
  // A training and a serving scenario. The sweep skips the advice and the per-op shares, which no
  // sweep row prints; every report field must still be the estimate's.
  for (const auto& [path, axis] :
       {std::pair<std::string, search::Axis>{kScenario, {"training.micro_batch", {"1", "4"}}},
        std::pair<std::string, search::Axis>{source("scenarios/llama2-7b-decode-rtx4090.toml"),
                                             {"inference.batch", {"1", "8"}}}}) {
    INFO(path);
    const ParsedScenario parsed = scenario::parse_scenario_file(path);
    const std::vector<search::SweepPoint> points = search::sweep(test::catalog(), parsed, {}, {axis});
    REQUIRE(points.size() == axis.values.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
      INFO(axis.key << "=" << axis.values[i]);
      REQUIRE(points[i].estimate.has_value());
      const answer::Estimate direct =
          answer::estimate(scenario::resolve(test::catalog(), parsed, {scenario::Override{axis.key, axis.values[i]}}));
      const std::vector<answer::Field> swept = answer::report_fields(*points[i].estimate);
      const std::vector<answer::Field> expected = answer::report_fields(direct);
      REQUIRE(swept.size() == expected.size());
      for (std::size_t f = 0; f < swept.size(); ++f) {
        INFO(expected[f].section << "." << expected[f].key);
        CHECK(swept[f].value.index() == expected[f].value.index());
        if (const auto* d = std::get_if<double>(&expected[f].value)) {
          CHECK(std::get<double>(swept[f].value) == *d);
        } else if (const auto* b = std::get_if<bool>(&expected[f].value)) {
          CHECK(std::get<bool>(swept[f].value) == *b);
        } else if (const auto* t = std::get_if<std::string>(&expected[f].value)) {
          CHECK(std::get<std::string>(swept[f].value) == *t);
        }
      }
      CHECK(points[i].estimate->eval.ops.empty());
      CHECK_FALSE(direct.eval.ops.empty());
    }
  }
}

TEST_CASE("a --set value reads the same at every use on one parsed file, and so do its errors", "[sweep][overrides]") {
  // A sweep applies the same few values to one parsed tree at every point and puts the tree back
  // after each: a later use must give the same scenario and the same messages as the first (a
  // value copied rather than parsed would lose its source, and its messages would not name the
  // --set).
  const ParsedScenario parsed = scenario::parse_scenario_file(kScenario);
  const std::vector<scenario::Override> good = {{"training.micro_batch", "2"}, {"training.precision", "fp16"}};
  const Scenario first = scenario::resolve(test::catalog(), parsed, good);
  const Scenario again = scenario::resolve(test::catalog(), parsed, good);
  CHECK(first.layout.micro_batch == 2);
  CHECK(again.layout.micro_batch == 2);
  CHECK(again.job.training->precision == first.job.training->precision);
  CHECK(answer::estimate(again).eval.job_time.value() == answer::estimate(first).eval.job_time.value());
  // A value of the wrong type, and a bare word where a number goes: the message names the --set
  // both times.
  for (const scenario::Override& bad :
       {scenario::Override{"training.micro_batch", "two"}, scenario::Override{"training.micro_batch", "[1"}}) {
    std::vector<std::string> messages;
    for (int use = 0; use < 2; ++use) {
      try {
        (void)scenario::resolve(test::catalog(), parsed, {bad});
        FAIL("resolved with " << bad.key << "=" << bad.value);
      } catch (const InputError& e) {
        messages.emplace_back(e.what());
      }
    }
    REQUIRE(messages.size() == 2);
    CHECK(messages[0] == messages[1]);
    CHECK(messages[0].find("--set training.micro_batch=" + bad.value) != std::string::npos);
  }
}
