// Running the gpusim binary as a user does: exit code, stdout and stderr apart; scratch files of
// this test process's own; approval (golden) files.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "helpers.hpp"

namespace gpusim::test {

struct Run {
  int code = 0;
  std::string out;
  std::string err;
};

// A directory of this test process's own, so parallel test processes never share files.
inline std::filesystem::path scratch() { return process_scratch("gpusim-test"); }

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs gpusim with `args`, optionally prefixed by environment assignments ("VAR=value").
inline Run run_env(const std::string& env, const std::string& args) {
  const std::string err_file = (scratch() / "stderr").string();
  const std::string cmd = env + " " + std::string(GPUSIM_BINARY) + " " + args + " 2>" + err_file;
  Run r;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) {
    r.out += buf.data();
  }
  const int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_text(err_file);
  std::filesystem::remove(err_file);
  return r;
}

inline Run run(const std::string& args) { return run_env("", args); }

inline std::string source(const std::string& rel) { return std::string(GPUSIM_SOURCE_DIR) + "/" + rel; }

inline std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = scratch() / name;
  std::ofstream(path) << text;
  return path.string();
}

// Approval test: on a mismatch the new output is written beside the golden file as .received,
// for a person to review and, if right, to move over the golden file.
inline void check_golden(const std::string& rel, const std::string& actual) {
  const std::string path = source(rel);
  const std::string golden = read_text(path);
  if (golden != actual) {
    std::ofstream(path + ".received") << actual;
  }
  CHECK(golden == actual);
}

}  // namespace gpusim::test
