// scenario::Variants: every combination of a grid gives what resolve() gives for the same
// overrides, whether it was rebuilt from earlier combinations or resolved from the file; the file
// is read only until each value has been resolved once, and keys it cannot rebuild are resolved
// from the file every time.
#include <functional>
#include <random>

#include "helpers.hpp"

using namespace gpusim;
using scenario::Override;
using scenario::ParsedScenario;
using scenario::Variants;

namespace {

struct Grid {
  std::vector<std::string> keys;
  std::vector<std::vector<std::string>> values;
};

// Every combination of the grid, the first key's values changing fastest (a sweep's order).
std::vector<std::vector<std::size_t>> combinations(const Grid& g) {
  std::vector<std::vector<std::size_t>> out(1, std::vector<std::size_t>(g.keys.size(), 0));
  for (std::size_t k = g.keys.size(); k-- > 0;) {
    std::vector<std::vector<std::size_t>> next;
    for (const auto& c : out) {
      for (std::size_t v = 0; v < g.values[k].size(); ++v) {
        next.push_back(c);
        next.back()[k] = v;
      }
    }
    out = std::move(next);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::lexicographical_compare(a.rbegin(), a.rend(), b.rbegin(), b.rend());
  });
  return out;
}

// A resolved scenario as its report shows it: every field of the estimate, and the parts of the
// node shape and layout a report shows only through them.
std::string describe(const Scenario& sc) {
  answer::Options o;
  o.advice = false;
  std::string out = sc.runtime.id + "|" + std::to_string(sc.system.gpus_per_node) + "|" +
                    std::to_string(sc.system.nics_per_node) + "|" + std::to_string(sc.layout.data) + "|";
  for (const answer::Field& f : answer::report_fields(answer::estimate(sc, o))) {
    out += std::string(f.section) + "." + f.key + "=";
    if (const auto* d = std::get_if<double>(&f.value)) {
      out += base::strfmt("%.17g", *d);
    } else if (const auto* b = std::get_if<bool>(&f.value)) {
      out += *b ? "true" : "false";
    } else if (const auto* s = std::get_if<std::string>(&f.value)) {
      out += *s;
    } else {
      out += "null";
    }
    out += ";";
  }
  return out;
}

// describe() of what `resolve` gives, or its error: every message with its position, and the first
// alone (a sweep's status).
struct Outcome {
  std::string text;
  std::string first;
};
Outcome outcome(const std::function<const Scenario&()>& resolve) {
  try {
    return {describe(resolve()), ""};
  } catch (const InputError& e) {
    return {std::string("error: ") + e.what(), e.first_message()};
  }
}

// Combinations checked, how many of them were errors, how many Variants resolved from the file, and
// of the others (rebuilt) how many ran and how many broke a rule.
struct Checked {
  std::size_t points = 0;
  std::size_t errors = 0;
  std::size_t resolved = 0;
  std::size_t rebuilt_ran = 0;
  std::size_t rebuilt_broken = 0;
};

// Checks every combination of `grid` (in `order`) against resolve().
Checked check_grid(const ParsedScenario& parsed, const std::vector<Override>& fixed, const Grid& grid,
                   const std::vector<std::vector<std::size_t>>& order) {
  Variants variants(test::catalog(), parsed, fixed, grid.keys, grid.values);
  Variants exact(test::catalog(), parsed, fixed, grid.keys, grid.values);  // at(): positions and all
  Checked c;
  for (const auto& choice : order) {
    std::vector<Override> o = fixed;
    for (std::size_t k = 0; k < grid.keys.size(); ++k) {
      o.push_back(Override{grid.keys[k], grid.values[k][choice[k]]});
    }
    INFO(parsed.path());
    INFO(o.back().key + "=" + o.back().value);
    Scenario from_file;
    const Outcome resolved = outcome([&]() -> const Scenario& {
      from_file = scenario::resolve(test::catalog(), parsed, o);
      return from_file;
    });
    std::string problem;
    const std::size_t before = variants.resolved();
    const Scenario* found = variants.find(choice, problem);
    if (variants.resolved() == before) {
      (found != nullptr ? c.rebuilt_ran : c.rebuilt_broken) += 1;
    }
    REQUIRE((found == nullptr) == !resolved.first.empty());
    REQUIRE(problem == resolved.first);
    if (found != nullptr) {
      REQUIRE(describe(*found) == resolved.text);
    }
    REQUIRE(outcome([&]() -> const Scenario& { return exact.at(choice); }).text == resolved.text);
    ++c.points;
    c.errors += found == nullptr ? 1 : 0;
  }
  c.resolved = variants.resolved();
  return c;
}

}  // namespace

TEST_CASE("Every combination of a rebuildable grid equals its resolve on every shipped training scenario in any order",
          "[variants]") {
  // Valid and invalid values of every rebuildable key: a GPU count of 3, which tensor 2 and the
  // global batches do not split, a ZeRO stage past 3, a word where a count goes, a precision some
  // GPUs lack (fp8).
  const Grid grid{
      {"system.gpus", "parallelism.zero", "training.micro_batch", "parallelism.tensor", "training.precision",
       "training.global_batch"},
      {{"1", "8", "2", "3"}, {"0", "3", "5"}, {"1", "x", "2"}, {"1", "2"}, {"bf16", "fp8", "fp32"}, {"512", "96"}}};
  std::mt19937 rng(20261127);
  Checked all;
  for (const auto& path : test::shipped_training_scenarios()) {
    auto order = combinations(grid);
    std::shuffle(order.begin(), order.end(), rng);
    order.resize(96);  // a shuffled sample keeps the test short; the order varies the rebuilt state
    const Checked c = check_grid(scenario::parse_scenario_file(path), {}, grid, order);
    all.points += c.points;
    all.errors += c.errors;
    all.rebuilt_ran += c.rebuilt_ran;
    all.rebuilt_broken += c.rebuilt_broken;
  }
  // The comparisons above tested the rebuilding: most combinations that ran were rebuilt, and many
  // that broke a rule gave their problem without reading the file.
  CHECK(all.rebuilt_ran > (all.points - all.errors) / 2);
  CHECK(all.rebuilt_broken > all.points / 20);
}

TEST_CASE("Rebuilt combinations equal their resolve with data given or left out and with a cloud GPU or LoRA",
          "[variants]") {
  const std::string small = test::kSmallTraining;
  const Grid sizes{{"system.gpus", "training.micro_batch"}, {{"8", "16", "4", "1"}, {"1", "8"}}};
  SECTION("data given in [parallelism]: other GPU counts break tensor x pipeline x data = gpus") {
    const ParsedScenario parsed("given-data.toml", small + "[parallelism]\ndata = 8\n");
    check_grid(parsed, {}, sizes, combinations(sizes));
  }
  SECTION("no [parallelism] in the file: the ZeRO axis makes one, and one GPU takes single-device recipes") {
    const ParsedScenario parsed("no-parallelism.toml", small);
    const Grid g{{"parallelism.zero", "system.gpus"}, {{"0", "3", "1"}, {"8", "1", "2"}}};
    check_grid(parsed, {}, g, combinations(g));
  }
  SECTION("a cloud GPU prices each GPU count with its own system") {
    const ParsedScenario parsed("cloud.toml", small + "[cost]\ncloud_gpu = \"h100-sxm5-80gb\"\n");
    const Grid g{{"system.gpus", "training.precision"}, {{"1", "8", "16"}, {"bf16", "fp8"}}};
    check_grid(parsed, {}, g, combinations(g));
  }
  SECTION("torchtune's recipes: one GPU takes the single-device defaults, full or LoRA") {
    const ParsedScenario parsed("torchtune.toml", small + "[runtime]\nname = \"torchtune\"\n");
    const Grid g{{"system.gpus", "training.micro_batch"}, {{"8", "1", "2", "1"}, {"8", "64"}}};
    for (const char* method : {"\"full\"", "\"lora\""}) {
      const Checked c = check_grid(parsed, {Override{"training.method", method}}, g, combinations(g));
      CHECK(c.errors < c.points);
    }
  }
  SECTION("LoRA on the default runtime, which ZeRO-3 changes, with the rank left to the recipe") {
    const ParsedScenario parsed("lora.toml", small);
    const Grid g{{"parallelism.zero", "system.gpus"}, {{"3", "0", "3"}, {"8", "1"}}};
    auto order = combinations(g);
    std::reverse(order.begin(), order.end());
    check_grid(parsed, {Override{"training.method", "\"lora\""}}, g, order);
  }
}

TEST_CASE("The file is read once for the first combination and once for each value first met after it", "[variants]") {
  // 4 GPU counts x 3 micro-batches, all valid: the first combination and the 3 + 2 values first
  // met later are resolved; the other 12 - 6 combinations are rebuilt.
  const ParsedScenario parsed("small.toml", test::kSmallTraining);
  const Grid g{{"system.gpus", "training.micro_batch"}, {{"8", "16", "32", "64"}, {"1", "2", "4"}}};
  const Checked c = check_grid(parsed, {Override{"training.global_batch", "1024"}}, g, combinations(g));
  CHECK(c.errors == 0);
  CHECK(c.resolved == 1 + 3 + 2);
}

TEST_CASE("Keys it cannot rebuild and serving scenarios are resolved from the file every time", "[variants]") {
  const ParsedScenario small("small.toml", test::kSmallTraining);
  SECTION("seq_len is not among the rebuildable keys") {
    const Grid g{{"system.gpus", "training.seq_len"}, {{"8", "16"}, {"512", "1024"}}};
    CHECK(check_grid(small, {}, g, combinations(g)).resolved == 4);
  }
  SECTION("a key given twice: the later value wins, as with --set") {
    Variants v(test::catalog(), small, {}, {"system.gpus", "system.gpus"}, {{"8"}, {"4"}});
    CHECK(v.at({0, 0}).system.gpus == 4);
    CHECK(v.at({0, 0}).system.gpus == 4);
    CHECK(v.resolved() == 2);
  }
  SECTION("a serving scenario") {
    const Grid g{{"system.gpus"}, {{"1", "2", "1", "2"}}};
    CHECK(check_grid(scenario::parse_scenario_file(std::string(GPUSIM_SOURCE_DIR) +
                                                   "/scenarios/llama2-7b-decode-rtx4090.toml"),
                     {}, g, combinations(g))
              .resolved == 4);
  }
}

TEST_CASE("A choice of the wrong length or past a key's values or keys without values are refused", "[variants]") {
  const ParsedScenario small("small.toml", test::kSmallTraining);
  CHECK_THROWS_AS(Variants(test::catalog(), small, {}, {"system.gpus"}, {}), std::invalid_argument);
  Variants v(test::catalog(), small, {}, {"system.gpus"}, {{"8", "4"}});
  CHECK_THROWS_AS(v.at({}), std::invalid_argument);
  CHECK_THROWS_AS(v.at({0, 0}), std::invalid_argument);
  CHECK_THROWS_AS(v.at({2}), std::out_of_range);
  CHECK(v.at({1}).system.gpus == 4);
}
