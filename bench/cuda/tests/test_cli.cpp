// gpusim-bench command line.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "gpusim_bench/cli.hpp"

using namespace gpusim::bench;

TEST_CASE("no arguments: every benchmark, stdout, derived gpu id", "[cli]") {
  const Options o = parse_args({});
  CHECK(o.only == benchmark_groups());
  CHECK(o.selected("nccl"));
  CHECK_FALSE(o.output.has_value());
  CHECK_FALSE(o.gpu_id.has_value());
  CHECK_FALSE(o.quick);
  CHECK_FALSE(o.hidden.has_value());
  CHECK_FALSE(o.max_bytes.has_value());
  CHECK_FALSE(o.help);
}

TEST_CASE("every flag is parsed", "[cli]") {
  const Options o = parse_args({"-o", "my-gpu.toml", "--gpu-id", "h100-sxm5-80gb", "--only", "gemm,stream", "--quick",
                                "--hidden", "4096", "--ffn", "11008", "--tokens", "2048", "--max-bytes", "2GiB"});
  CHECK(o.output == "my-gpu.toml");
  CHECK(o.gpu_id == "h100-sxm5-80gb");
  CHECK(o.only == std::vector<std::string>{"stream", "gemm"});  // run order, not flag order
  CHECK(o.selected("gemm"));
  CHECK_FALSE(o.selected("nccl"));
  CHECK(o.quick);
  CHECK(o.hidden == 4096);
  CHECK(o.ffn == 11008);
  CHECK(o.tokens == 2048);
  CHECK(o.max_bytes == 2ull * 1024 * 1024 * 1024);
}

TEST_CASE("flags also take the form flag=value", "[cli]") {
  const Options o = parse_args({"--output=out.toml", "--only=latency", "--max-bytes=512M"});
  CHECK(o.output == "out.toml");
  CHECK(o.only == std::vector<std::string>{"latency"});
  CHECK(o.max_bytes == 512ull * 1024 * 1024);
}

TEST_CASE("ffn and tokens default from hidden", "[cli]") {
  const std::int64_t hidden = 768;
  const Options o = parse_args({"--hidden", "768"});
  CHECK(o.ffn == 4 * hidden);
  CHECK(o.tokens == 4096);
}

TEST_CASE("help flag and usage text", "[cli]") {
  CHECK(parse_args({"-h"}).help);
  CHECK(parse_args({"--help"}).help);
  CHECK(usage().find("--max-bytes") != std::string::npos);
}

TEST_CASE("bad command lines are rejected", "[cli]") {
  const std::vector<std::vector<std::string>> bad{
      {"--frobnicate"},             // unknown flag
      {"-x"},                       // unknown short flag
      {"results.toml"},             // positional argument
      {"-o"},                       // missing value
      {"--gpu-id"},                 // missing value
      {"--gpu-id", ""},             // empty id
      {"--only", "stream,tensor"},  // unknown group
      {"--only", ""},               // empty list
      {"--only", "stream,"},        // trailing comma
      {"--hidden", "0"},            // not positive
      {"--hidden", "12x"},          // not a number
      {"--tokens", "-5"},           // negative
      {"--ffn", "4096"},            // --ffn without --hidden
      {"--max-bytes", "lots"},      // bad size string
      {"--max-bytes", "4096"},      // below 1 MiB
      {"--quick=yes"},              // a switch with a value
  };
  for (const auto& args : bad) {
    INFO(args.front() << (args.size() > 1 ? " " + args[1] : std::string()));
    CHECK_THROWS_AS(parse_args(args), CliError);
  }
}
