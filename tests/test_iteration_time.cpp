// One serving iteration's cost (step::IterationModel): the time alone, which the simulation's
// closed-form decode runs ask for (alone, or with the next iteration's), is the cost's time to the
// last bit; and a cost asked again, after the model has answered other shapes in any order (it
// keeps the parts that depend on the token count and on the row count by count), equals the cost
// a fresh model gives for that shape alone.
#include <algorithm>
#include <random>

#include "helpers.hpp"

using namespace gpusim;

namespace {

// Decode iterations (one token per row) at every batch size up to 300, and mixed iterations (a
// prompt chunk beside the decodes, rows != tokens) across the grid's dense and geometric parts.
std::vector<step::IterationShape> shapes() {
  std::vector<step::IterationShape> out;
  for (int rows = 1; rows <= 300; ++rows) {
    step::IterationShape d;
    d.tokens = d.rows = d.decode_rows = rows;
    d.context = rows * 1100.0;
    out.push_back(d);
  }
  for (const double prompt : {1.0, 17.0, 63.0, 64.0, 65.0, 511.0, 2048.0, 8191.0}) {
    for (const double decodes : {0.0, 3.0, 120.0}) {
      step::IterationShape m;
      m.tokens = prompt + decodes;
      m.rows = 1 + decodes;
      m.decode_rows = decodes;
      m.context = decodes * 900.0;
      m.pairs = prompt * (prompt + 1) / 2;
      out.push_back(m);
    }
  }
  return out;
}

struct Setup {
  Scenario sc;
  physics::Fabric fabric;
};

Setup setup(const std::string& file) {
  Setup s{scenario::load_scenario_file(test::catalog(), file), {}};
  s.fabric = physics::make_fabric(s.sc.system);
  return s;
}

step::IterationModel model(const Setup& s, step::TableCache& cache) {
  const workload::Inference& inf = *s.sc.job.inference;
  return step::IterationModel(s.sc.system, s.fabric, s.sc.job.model, inf, s.sc.runtime, s.sc.layout, 1.0, 10000.0,
                              cache);
}

void check_equal(const step::IterationCost& a, const step::IterationCost& b) {
  CHECK(a.time.value() == b.time.value());
  CHECK(a.compute_bound.value() == b.compute_bound.value());
  CHECK(a.memory_bound.value() == b.memory_bound.value());
  CHECK(a.arithmetic.value() == b.arithmetic.value());
  CHECK(a.communication.value() == b.communication.value());
  CHECK(a.communication_total.value() == b.communication_total.value());
  CHECK(a.dram.value() == b.dram.value());
}

const char* const kScenarios[] = {"scenarios/llama3-70b-fp8-4xh100-serve.toml",
                                  "scenarios/llama2-7b-decode-rtx4090.toml", "scenarios/mi300x-llama3-70b-serve.toml"};

}  // namespace

TEST_CASE("an iteration's time alone, and through the parts of its counts at any context, is its cost's, bit for bit",
          "[serving][iteration]") {
  for (const char* file : kScenarios) {
    INFO(file);
    const Setup s = setup(std::string(GPUSIM_SOURCE_DIR) + "/" + file);
    step::TableCache cache;
    const step::IterationModel m = model(s, cache);
    for (const step::IterationShape& sh : shapes()) {
      INFO("tokens " << sh.tokens << ", rows " << sh.rows);
      const double alone = m.time(sh).value();
      CHECK(alone == m.cost(sh).time.value());
      CHECK(alone > 0);
      CHECK(m.time(sh).value() == alone);  // asked again, the kept parts give the same
      // Through counts(): this one and the next decode iteration's (one more token of context per
      // row), the parts looked up once as a decode stretch does.
      step::IterationShape longer = sh;
      longer.context += sh.rows;
      const step::IterationModel::Counts parts = m.counts(sh);
      CHECK(m.time(parts, sh).value() == alone);
      CHECK(m.time(parts, longer).value() == m.cost(longer).time.value());
      check_equal(m.cost(parts, longer), m.cost(longer));
    }
  }
}

TEST_CASE("a cost asked after other shapes in any order equals a fresh model's for that shape alone",
          "[serving][iteration]") {
  for (const char* file : kScenarios) {
    INFO(file);
    const Setup s = setup(std::string(GPUSIM_SOURCE_DIR) + "/" + file);
    std::vector<step::IterationShape> order = shapes();
    std::mt19937 rng(7);
    std::shuffle(order.begin(), order.end(), rng);
    order.insert(order.end(), order.begin(), order.begin() + 40);  // some shapes twice
    step::TableCache kept_cache;
    const step::IterationModel kept = model(s, kept_cache);
    for (const step::IterationShape& sh : order) {
      INFO("tokens " << sh.tokens << ", rows " << sh.rows);
      step::TableCache own;
      check_equal(kept.cost(sh), model(s, own).cost(sh));
    }
  }
}

TEST_CASE("a decode iteration's time grows with its batch and its context", "[serving][iteration]") {
  // The parts kept by batch size must not leak between sizes: more rows or more context never
  // cost less (dense GEMMs read the same weights for more rows; attention reads more KV).
  const Setup s = setup(std::string(GPUSIM_SOURCE_DIR) + "/" + kScenarios[0]);
  step::TableCache cache;
  const step::IterationModel m = model(s, cache);
  double last = 0;
  for (int rows = 1; rows <= 256; ++rows) {
    step::IterationShape d;
    d.tokens = d.rows = d.decode_rows = rows;
    d.context = rows * 1100.0;
    const double t = m.time(d).value();
    CHECK(t >= last);
    last = t;
    step::IterationShape longer = d;
    longer.context = d.context + rows * 1000.0;
    CHECK(m.time(longer).value() > t);
  }
}

TEST_CASE("no iteration with a token and a sampled row takes less than the model's floor", "[serving][iteration]") {
  for (const char* file : kScenarios) {
    INFO(file);
    const Setup s = setup(std::string(GPUSIM_SOURCE_DIR) + "/" + file);
    step::TableCache cache;
    const step::IterationModel m = model(s, cache);
    const double floor = m.floor().value();
    std::vector<step::IterationShape> all = shapes();
    // Every token count of the grid's dense part, a geometric run to the model's 10,000 tokens and
    // past it (the last segment extended), each with one sampled row and with as many as tokens.
    for (double t = 1; t <= 13000; t = t < 64 ? t + 1 : std::ceil(t * 1.07)) {
      for (const double rows : {1.0, t}) {
        step::IterationShape sh;
        sh.tokens = t;
        sh.rows = rows;
        all.push_back(sh);
      }
    }
    for (const step::IterationShape& sh : all) {
      INFO("tokens " << sh.tokens << ", rows " << sh.rows);
      CHECK(m.time(sh).value() >= floor);
    }
    // The least iteration is one decode at a short context: the floor leaves out only its attention.
    step::IterationShape one;
    one.tokens = one.rows = one.decode_rows = 1;
    one.context = 1;
    CHECK(floor <= m.time(one).value());
    CHECK(floor >= 0.9 * m.time(one).value());
  }
}
