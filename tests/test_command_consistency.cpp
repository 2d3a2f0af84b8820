// Commands do not contradict themselves: compare's exit code and rows agree with what ran, the
// bottleneck names the part of the step (or the memory) that actually bounds it, and `model
// import` writes only spec files that `specs check` accepts.
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"

using namespace gpusim::test;

namespace {

const std::string kGpt2 = source("scenarios/gpt2-124m-rtx4090.toml");
const std::string kOffload = source("scenarios/llama3-70b-lora-2x4090-offload.toml");

std::size_t lines_of(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// A spec directory whose host of the offload scenario has `memory` of RAM.
std::string host_with_memory(const std::string& dir_name, const std::string& memory) {
  const auto dir = scratch() / dir_name;
  std::filesystem::create_directories(dir / "hosts");
  std::string text = read_text(source("specs/hosts/workstation-ddr5.toml"));
  const std::string catalog_memory = "memory = \"256 GiB\"";
  const auto at = text.find(catalog_memory);
  REQUIRE(at != std::string::npos);
  std::ofstream(dir / "hosts" / "workstation-ddr5.toml")
      << text.replace(at, catalog_memory.size(), "memory = \"" + memory + "\"");
  return dir.string();
}

}  // namespace

TEST_CASE("compare where no GPU can run the job exits 2 in every format with each GPU's reason", "[cli][compare]") {
  // fp8 needs Hopper or Ada: neither a V100 nor a T4 computes in it.
  const std::string args = "compare " + kGpt2 + " --gpus v100-sxm2-32gb,t4 --set training.precision=fp8";
  for (const char* format : {"text", "csv", "json"}) {
    const Run r = run(args + " --format " + format);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains("cannot run on v100-sxm2-32gb") && Catch::Contains("cannot run on t4") &&
                          Catch::Contains("fp8"));
  }
  const std::string svg = (scratch() / "none-runs.svg").string();
  std::filesystem::remove(svg);
  const Run pictured = run(args + " --svg " + svg);
  CHECK(pictured.code == 2);
  CHECK_FALSE(std::filesystem::exists(svg));
}

TEST_CASE("compare keeps a row that says why for each GPU the job cannot run on, in CSV and JSON", "[cli][compare]") {
  const std::string args = "compare " + kGpt2 + " --gpus h100-sxm5-80gb,a100-sxm4-80gb --set training.precision=fp8";
  const Run csv = run(args + " --format csv");
  REQUIRE(csv.code == 0);
  CHECK(lines_of(csv.out) == 1 + 2);  // the header and one record per GPU
  CHECK(csv.out.rfind("gpu,status,scenario,", 0) == 0);
  CHECK_THAT(csv.out, Catch::Contains("\nh100-sxm5-80gb,ok,"));
  CHECK_THAT(csv.out, Catch::Contains("\na100-sxm4-80gb,training.precision: the NVIDIA A100 SXM4 80GB has no fp8"));
  const Run json = run(args + " --format json");
  REQUIRE(json.code == 0);
  CHECK_THAT(json.out, Catch::Contains("\"runs\": false") && Catch::Contains("\"problem\": \"training.precision"));
}

TEST_CASE("the bottleneck names offload when exposed offload traffic is the largest part of the step",
          "[explain][offload]") {
  const Run r = run("estimate " + kOffload +
                    " --set training.offload_params=nvme --set training.offload_optimizer=nvme --format json");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("\"bottleneck\": \"offload\""));
  CHECK_THAT(r.out, Catch::Contains("\"bottleneck_reason\": \"") &&
                        Catch::Contains("of step time waiting on offload traffic"));
  const Run text =
      run("estimate " + kOffload + " --set training.offload_params=nvme --set training.offload_optimizer=nvme");
  REQUIRE(text.code == 0);
  CHECK_THAT(text.out, Catch::Contains("bottleneck  offload — "));
  // Offloading one step less (NVMe to host memory) fits and is faster: advised with its figures.
  CHECK_THAT(text.out, Catch::Contains("offload_params = \"cpu\": -"));
}

TEST_CASE("the bottleneck names host memory when what the job offloads does not fit the host", "[explain][offload]") {
  const std::string specs = host_with_memory("small-host", "16 GiB");
  const Run r = run("estimate " + kOffload + " --specs " + specs);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("bottleneck  host-memory — ") &&
                        Catch::Contains("GiB of host memory per GPU but the host has 8.0 GiB per GPU"));
  CHECK_THAT(r.out, !Catch::Contains("bottleneck  capacity"));
  // The GPU's own memory holds its part: the memory line says so, and only the host line falls short.
  CHECK_THAT(r.out, Catch::Contains(" GiB fits   weights") && !Catch::Contains("GiB DOES NOT FIT   weights") &&
                        Catch::Contains("(DOES NOT FIT in the host's memory)"));
  const Run json = run("estimate " + kOffload + " --specs " + specs + " --format json");
  REQUIRE(json.code == 0);
  CHECK_THAT(json.out, Catch::Contains("\"fits\": false") && Catch::Contains("\"gpu_fits\": true") &&
                           Catch::Contains("\"host_fits\": false") &&
                           Catch::Contains("\"host_capacity_bytes\": 8589934592"));
  // Moving the offloads to the host's NVMe drive makes them fit: advised with the host memory.
  CHECK_THAT(r.out, Catch::Contains("offload_params = \"nvme\": host memory"));
  // With the catalog's 256 GiB the same job fits, and the bottleneck is a part of the step.
  const Run fits = run("estimate " + kOffload + " --format json");
  REQUIRE(fits.code == 0);
  CHECK_THAT(fits.out,
             !Catch::Contains("\"bottleneck\": \"host-memory\"") && !Catch::Contains("\"bottleneck\": \"capacity\""));
}

TEST_CASE(
    "a serving iteration's tensor-parallel all-reduces across nodes are its communication, and the bottleneck "
    "names the network they cross",
    "[explain][serving]") {
  // PCIe cards are one per node by default: a tensor group of four all-reduces twice per layer over
  // the network between nodes, which at a small batch outlasts the layer's kernels.
  const std::string base = "estimate " + source("scenarios/llama3-70b-fp8-4xh100-serve.toml") +
                           " --set system.gpu=h100-nvl --set system.gpus=4 --set parallelism.tensor=4";
  const Run r = run(base + " --format json");
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const double comm = j["step"]["communication_s"];
  const double overhead = j["step"]["overhead_s"];
  const double compute = j["step"]["compute_s"];
  const double time = j["step"]["time_s"];
  CHECK(comm > 0);
  CHECK(j["step"]["communication_total_s"].get<double>() >= comm * (1 - 1e-12));
  // The parts add up to the iteration: nothing is counted twice.
  CHECK(compute + comm + overhead == Approx(time).epsilon(1e-9));
  CHECK(j["bottleneck"] == "communication");
  const Run text = run(base);
  CHECK_THAT(text.out, Catch::Contains("waiting on tensor-parallel all-reduces and pipeline sends over") &&
                           Catch::Contains("between nodes") && !Catch::Contains("data-parallel"));
  // The advice: the tensor group in one server, and fewer ranks per replica; each claims more
  // output tokens/s, and estimating the scenario with its change bears the claim out.
  CHECK_THAT(text.out, Catch::Contains("advice      gpus_per_node = 4 (each tensor group of 4 GPUs in one server") &&
                           Catch::Contains("tensor 4 -> 2 with twice the replicas on the same GPUs"));
  const double before = j["inference"]["output_tokens_per_s"];
  for (const std::string change :
       {" --set system.gpus_per_node=4", " --set parallelism.tensor=2 --set parallelism.data=2"}) {
    const Run after = run(base + change + " --format json");
    REQUIRE(after.code == 0);
    INFO(change);
    CHECK(nlohmann::json::parse(after.out)["inference"]["output_tokens_per_s"].get<double>() > before);
  }
  // With the group in one server, the all-reduces cross the server's PCIe, take a smaller share of
  // the iteration, and the advice does not repeat itself.
  const Run in_node = run(base + " --set system.gpus_per_node=4 --format json");
  REQUIRE(in_node.code == 0);
  const nlohmann::json k = nlohmann::json::parse(in_node.out);
  CHECK(k["step"]["communication_s"].get<double>() / k["step"]["time_s"].get<double>() < comm / time);
  const Run in_node_text = run(base + " --set system.gpus_per_node=4");
  CHECK_THAT(in_node_text.out, !Catch::Contains("between nodes") && !Catch::Contains("gpus_per_node = 4 ("));
}

TEST_CASE("the bottleneck names the pipeline bubble when it is the largest part of the step", "[explain]") {
  // Eight pipeline stages fed eight micro-batches of one sample: stages idle for close to half the step.
  const Run r = run("estimate " + source("scenarios/llama2-13b-8xa100.toml") +
                    " --set parallelism.pipeline=8 --set parallelism.data=1 --set training.global_batch=8"
                    " --set training.micro_batch=1");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("bottleneck  bubble — ") && Catch::Contains("of step time in the pipeline bubble"));
  // Twice the micro-batches per step is advised with its effect.
  CHECK_THAT(r.out, Catch::Contains("global_batch 8 -> 16 (twice the micro-batches per step)"));
}

TEST_CASE(
    "model import refuses a config whose spec specs check would reject, naming the config field and writing "
    "nothing",
    "[cli][model]") {
  const auto dir = scratch() / "refused-import" / "models";
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "all-dense.toml").string();
  std::filesystem::remove(out);
  const Run r = run("model import " + source("tests/data/hf/deepseek-v3-all-dense-layers.json") + " -o " + out);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("deepseek-v3-all-dense-layers.json") && Catch::Contains("first_k_dense_replace") &&
                        Catch::Contains("dense_layers (4)") && Catch::Contains("nothing was written"));
  CHECK_FALSE(std::filesystem::exists(out));
  CHECK(run("model import " + source("tests/data/hf/deepseek-v3-all-dense-layers.json")).out.empty());
}

TEST_CASE("every config.json fixture either imports to a spec specs check accepts or is refused with nothing written",
          "[cli][model]") {
  const auto dir = scratch() / "round-trip" / "models";
  std::filesystem::create_directories(dir);
  int imported = 0;
  int refused = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(source("tests/data"))) {
    if (entry.path().extension() != ".json") {
      continue;
    }
    const std::string out = (dir / (entry.path().stem().string() + ".toml")).string();
    std::filesystem::remove(out);
    const Run r = run("model import " + entry.path().string() + " -o " + out);
    INFO(entry.path().string() << ": " << r.err);
    if (r.code == 0) {
      ++imported;
      const Run check = run("specs check " + out);
      CHECK(check.code == 0);
      CHECK(check.err.empty());
    } else {
      ++refused;
      CHECK(r.code == 2);
      CHECK_FALSE(std::filesystem::exists(out));
    }
  }
  CHECK(imported >= 14);  // the published configs
  CHECK(refused >= 1);    // the config with no layer left for its experts
}
