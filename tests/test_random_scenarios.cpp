// Properties over randomly generated scenarios (a seeded generator, so a failure replays): every
// GPU of the catalog, every transformer preset, training runtimes and serving engines, precisions, GPU
// counts and layouts. A generated scenario either loads or is refused with an InputError (an
// impossible layout, a model that does not fit its context); one that loads must give a report
// whose every number is finite and not negative, whose training time is linear in tokens, whose
// cloud cost is rate × GPU-hours and whose energy is average power × time.
#include <algorithm>
#include <cmath>
#include <random>
#include <variant>

#include "helpers.hpp"

using namespace gpusim;

namespace {

struct Generated {
  std::string text;
  bool training = true;
};

template <typename T>
const T& pick(std::mt19937& rng, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng)];
}

Generated generate(std::mt19937& rng, const Catalog& catalog) {
  const std::vector<std::string> gpus = catalog.ids(SpecKind::kGpu);
  // Dense transformer presets. Image models (ResNet, ViT) take images, not tokens and sequence
  // lengths (tests/test_resnet.cpp and test_vit.cpp cover them); the mixtures of experts have tests
  // of their own (test_moe.cpp). Drawing them here would only reshuffle the draws, and reshuffled
  // draws meet the one sustained clock of a power-limited step (physics/power.cpp), which can make
  // doubled bandwidth slightly slower (llama3-8b on 8 B200s with llm.c: +3 %).
  std::vector<std::string> models;
  for (const std::string& id : catalog.ids(SpecKind::kModel)) {
    if (!catalog.model(id).moe && !catalog.model(id).images()) {
      models.push_back(id);
    }
  }
  const std::string gpu = pick(rng, gpus);
  const int count = pick(rng, std::vector<int>{1, 2, 4, 8, 16, 64});
  Generated g;
  g.training = std::bernoulli_distribution(0.6)(rng);
  g.text = "name = \"random\"\n[system]\ngpu = \"" + gpu + "\"\ngpus = " + std::to_string(count) +
           "\n[model]\npreset = \"" + pick(rng, models) + "\"\n";
  const int tensor = pick(rng, std::vector<int>{1, 1, 2, 4, 8});
  const int pipeline = pick(rng, std::vector<int>{1, 1, 2, 4});
  g.text += "[parallelism]\ntensor = " + std::to_string(tensor) + "\npipeline = " + std::to_string(pipeline) + "\n";
  if (g.training) {
    const int micro = pick(rng, std::vector<int>{1, 2, 4, 8});
    g.text += "zero = " + std::to_string(pick(rng, std::vector<int>{0, 1, 2, 3})) + "\n";
    g.text += "[training]\ntokens = 1e9\nseq_len = " + std::to_string(pick(rng, std::vector<int>{512, 1024, 2048})) +
              "\nglobal_batch = " + std::to_string(micro * 64 * count) + "\nmicro_batch = " + std::to_string(micro) +
              "\nprecision = \"" + pick(rng, std::vector<std::string>{"bf16", "fp16", "fp8", "fp32", "tf32"}) +
              "\"\n[runtime]\nname = \"" +
              pick(rng, std::vector<std::string>{"pytorch-ddp", "pytorch-fsdp", "megatron-te", "deepspeed", "llm.c",
                                                 "torchtitan"}) +
              "\"\n";
  } else {
    g.text += "[inference]\nprompt_tokens = " + std::to_string(pick(rng, std::vector<int>{128, 512, 1024})) +
              "\noutput_tokens = " + std::to_string(pick(rng, std::vector<int>{32, 128})) + "\nweight_precision = \"" +
              pick(rng, std::vector<std::string>{"bf16", "fp16", "fp8", "int8", "int4"}) +
              "\"\n[serving]\narrival = \"poisson\"\nrate = \"" +
              std::to_string(pick(rng, std::vector<int>{1, 4, 16})) + " req/s\"\nrequests = 60\n[runtime]\nname = \"" +
              pick(rng, std::vector<std::string>{"vllm", "sglang", "tensorrt-llm", "llama.cpp"}) + "\"\n";
  }
  return g;
}

}  // namespace

TEST_CASE("random scenarios either load or are refused, and a loaded one has a finite, non-negative report",
          "[properties][random]") {
  const Catalog catalog = Catalog::builtin();
  std::mt19937 rng(20261122);  // fixed: a failure replays
  int loaded = 0;
  int refused = 0;
  int trained = 0;
  for (int i = 0; i < 300; ++i) {
    const Generated g = generate(rng, catalog);
    std::optional<Scenario> sc;
    try {
      sc = scenario::load_scenario(catalog, "random-" + std::to_string(i) + ".toml", g.text);
    } catch (const InputError&) {
      ++refused;  // the one failure a generated input may have
      continue;
    }
    ++loaded;
    INFO(g.text);
    const answer::Estimate e = answer::estimate(*sc, answer::Options{false});
    for (const answer::Field& f : answer::report_fields(e)) {
      if (const double* v = std::get_if<double>(&f.value)) {
        INFO(f.section << "." << f.key << " = " << *v);
        CHECK(std::isfinite(*v));
        CHECK(*v >= 0);
      }
    }
    if (g.training && e.eval.memory.fits()) {
      ++trained;
      // Time to train is steps × step time: twice the tokens, twice the time (step count rounds up,
      // so within one step).
      Scenario twice = *sc;
      twice.job.training->tokens *= 2;
      const answer::Estimate e2 = answer::estimate(twice, answer::Options{false});
      CHECK(e2.eval.job_time.value() == Approx(2 * e.eval.job_time.value()).margin(e.eval.step.time.value() * 1.0001));
      // Renting: the cloud GPU's rate × GPUs × its job time; on the same GPU, GPU-hours × rate.
      if (e.cloud_gpu == e.gpu_id) {
        CHECK(units::to_usd(e.cost.cloud) ==
              Approx(units::to_usd_per_hour(e.cloud_rate) * units::to_hours(e.eval.gpu_time)).epsilon(1e-9));
      }
      // Energy of the GPUs alone is at most the whole system's (hosts and PUE only add).
      CHECK(units::to_kwh(e.energy.energy) >=
            units::to_watts(e.eval.gpu_avg_power) * e.gpus * units::to_hours(e.eval.job_time) / 1000 * (1 - 1e-9));
    }
  }
  // The generator must exercise the model, not only the loader's refusals.
  CHECK(loaded >= 100);
  CHECK(trained >= 30);
  CHECK(refused >= 10);
}

namespace {

// Step time of a scenario, estimated as the CLI does.
double step_time(const Scenario& sc) { return step::evaluate(sc).step.time.value(); }

// A generated training scenario as loaded, or nothing for a serving one or one the loader refuses.
std::optional<Scenario> load_training(const Generated& g, const Catalog& catalog,
                                      const std::vector<Override>& overrides = {}) {
  if (!g.training) {
    return std::nullopt;
  }
  try {
    return scenario::load_scenario(catalog, "random.toml", g.text, overrides);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

}  // namespace

TEST_CASE("over random training scenarios, more bandwidth or more compute is never slower", "[properties][random]") {
  const Catalog catalog = Catalog::builtin();
  std::mt19937 rng(20261123);
  int checked = 0;
  for (int i = 0; i < 200 && checked < 60; ++i) {
    const Generated g = generate(rng, catalog);
    const std::optional<Scenario> sc = load_training(g, catalog);
    if (!sc) {
      continue;
    }
    INFO(g.text);
    ++checked;
    const double base = step_time(*sc);
    // Every bandwidth doubled: DRAM, L2, the links inside and between nodes, the host link.
    Scenario wide = *sc;
    hardware::System& s = wide.system;
    s.gpu.memory_bandwidth = s.gpu.memory_bandwidth * 2.0;
    s.gpu.l2_bandwidth = s.gpu.l2_bandwidth * 2.0;
    s.gpu.peer_bandwidth = s.gpu.peer_bandwidth * 2.0;
    for (hardware::LinkSpec* l : {&s.intra_node, &s.inter_node, &s.pcie}) {
      l->bandwidth = l->bandwidth * 2.0;
    }
    CHECK(step_time(wide) <= base * (1 + 1e-9));
    // Every compute peak a quarter higher at the same clock and power.
    Scenario fast = *sc;
    for (auto& peak : fast.system.gpu.peak) {
      if (peak) {
        *peak = *peak * 1.25;
      }
    }
    CHECK(step_time(fast) <= base * (1 + 1e-9));
  }
  CHECK(checked >= 40);
}

TEST_CASE("over random ZeRO-3 jobs, twice the data-parallel GPUs never need more memory per GPU",
          "[properties][random]") {
  const Catalog catalog = Catalog::builtin();
  std::mt19937 rng(20261124);
  int checked = 0;
  for (int i = 0; i < 300 && checked < 40; ++i) {
    const Generated g = generate(rng, catalog);
    const std::optional<Scenario> sc = load_training(g, catalog, {{"parallelism.zero", "3"}});
    if (!sc) {
      continue;
    }
    INFO(g.text);
    ++checked;
    // Same micro-batch per GPU, twice the ranks (and twice the global batch, so each still runs the
    // same number of micro-batches): weights, gradients and optimizer states are sharded over more.
    workload::Layout twice = sc->layout;
    twice.data *= 2;
    Scenario more = scenario::with_layout(*sc, twice, sc->system.gpus * 2);
    more.job.training->global_batch *= 2;
    CHECK(step::evaluate(more).memory.total().value() <= step::evaluate(*sc).memory.total().value() * (1 + 1e-12));
  }
  CHECK(checked >= 20);
}
