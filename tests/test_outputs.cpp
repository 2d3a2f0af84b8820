// Where outputs go: through symbolic links to the file they name, in place into devices and pipes,
// never over an input or over another output, and either whole or not at all (exit 1 when the
// device fails a write, exit 2 when the destination cannot be used, nothing left behind).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>

#include "cli_helpers.hpp"

using namespace gpusim::test;
namespace fs = std::filesystem;

namespace {

const std::string kScenario = "scenarios/gpt2-124m-rtx4090.toml";

// A fresh empty folder of this test's own.
fs::path fresh_dir(const std::string& name) {
  const fs::path dir = scratch() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::size_t entries(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) {
    ++n;
  }
  return n;
}

// Reads a FIFO to its end on a thread of its own while `write` runs, and returns what arrived.
template <typename Write>
std::string read_fifo_while(const fs::path& fifo, Write write) {
  std::string got;
  std::thread reader([&] {
    const int fd = ::open(fifo.c_str(), O_RDONLY);
    if (fd < 0) {
      return;
    }
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) {
      got.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
  });
  write();
  // Should the write never have opened the FIFO, open it here so that the reader sees its end.
  const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
  if (fd >= 0) {
    ::close(fd);
  }
  reader.join();
  return got;
}

}  // namespace

TEST_CASE("an output path through a symbolic link writes the link's target and keeps the link", "[cli][outputs]") {
  const fs::path dir = fresh_dir("out-link");
  write_temp("out-link/target.json", "old\n");
  fs::create_symlink("target.json", dir / "link.json");
  const Run r = run("estimate " + source(kScenario) + " --format json -o " + (dir / "link.json").string());
  CHECK(r.code == 0);
  CHECK(fs::is_symlink(fs::symlink_status(dir / "link.json")));
  CHECK(fs::read_symlink(dir / "link.json") == "target.json");
  const std::string written = read_text(dir / "target.json");
  CHECK_THAT(written, Catch::StartsWith("{"));
  CHECK(written == run("estimate " + source(kScenario) + " --format json").out);
  CHECK(entries(dir) == 2);  // no temporary file left beside them
}

TEST_CASE("an output path through a dangling symbolic link creates the file it names and keeps the link",
          "[cli][outputs]") {
  const fs::path dir = fresh_dir("out-dangling");
  fs::create_symlink("made.txt", dir / "link.txt");
  const Run r = run("estimate " + source(kScenario) + " -o " + (dir / "link.txt").string());
  CHECK(r.code == 0);
  CHECK(fs::is_symlink(fs::symlink_status(dir / "link.txt")));
  CHECK_THAT(read_text(dir / "made.txt"), Catch::Contains("bottleneck"));
}

TEST_CASE("an output path through a link to standard output's descriptor delivers the report and keeps the link",
          "[cli][outputs]") {
  // As `-o /dev/stdout`: /proc/self/fd/1 is the pipe the test reads, written in place.
  const fs::path dir = fresh_dir("out-fd-link");
  fs::create_symlink("/proc/self/fd/1", dir / "stdout-link");
  const Run r = run("estimate " + source(kScenario) + " -o " + (dir / "stdout-link").string());
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("bottleneck"));
  CHECK(fs::is_symlink(fs::symlink_status(dir / "stdout-link")));
  CHECK(entries(dir) == 1);
}

TEST_CASE("an output to a FIFO, or to a link to one, writes into the FIFO and keeps both", "[cli][outputs]") {
  const fs::path dir = fresh_dir("out-fifo");
  const fs::path fifo = dir / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  fs::create_symlink("pipe", dir / "pipe-link");
  const std::string expected = run("estimate " + source(kScenario)).out;
  for (const fs::path& path : {fifo, dir / "pipe-link"}) {
    INFO(path.string());
    Run r;
    const std::string got =
        read_fifo_while(fifo, [&] { r = run("estimate " + source(kScenario) + " -o " + path.string()); });
    CHECK(r.code == 0);
    CHECK(got == expected);
  }
  CHECK(fs::is_fifo(fs::symlink_status(fifo)));
  CHECK(fs::is_symlink(fs::symlink_status(dir / "pipe-link")));
  CHECK(entries(dir) == 2);
}

TEST_CASE("an output to a character device writes into the device in place", "[cli][outputs]") {
  const fs::path dir = fresh_dir("out-device");
  fs::create_symlink("/dev/null", dir / "null-link");
  for (const std::string& path : {std::string("/dev/null"), (dir / "null-link").string()}) {
    INFO(path);
    const Run r = run("estimate " + source(kScenario) + " -o " + path);
    CHECK(r.code == 0);
    CHECK(r.out.empty());
  }
  CHECK(fs::is_character_file(fs::status("/dev/null")));
  CHECK(fs::is_symlink(fs::symlink_status(dir / "null-link")));
  CHECK(entries(dir) == 1);
}

TEST_CASE("an output naming one of the command's inputs is refused and the input stays as it was",
          "[cli][outputs][errors]") {
  const fs::path dir = fresh_dir("out-input");
  const std::string scenario = (dir / "in.toml").string();
  fs::copy_file(source(kScenario), scenario);
  const std::string before = read_text(scenario);
  fs::create_symlink("in.toml", dir / "alias.toml");
  for (const std::string& args :
       {"estimate " + scenario + " -o " + scenario, "estimate " + scenario + " -o " + (dir / "alias.toml").string(),
        "breakeven " + scenario + " --svg " + scenario}) {
    INFO(args);
    const Run r = run(args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::Contains("a file this command reads"));
    CHECK(read_text(scenario) == before);
  }
  // model import's config.json too.
  const std::string config = (dir / "config.json").string();
  fs::copy_file(source("tests/data/hf/Meta-Llama-3-8B.json"), config);
  const std::string json = read_text(config);
  CHECK(run("model import " + config + " -o " + config).code == 2);
  CHECK(read_text(config) == json);
  fs::remove(config);
  const Run first = run("estimate " + scenario + " -o " + scenario);
  CHECK_THAT(first.err, Catch::Contains(scenario + ": --output: is a file this command reads"));
  CHECK(entries(dir) == 2);
}

TEST_CASE("an output naming a measurement file, given itself or in a folder given, is refused",
          "[cli][outputs][errors]") {
  const fs::path dir = fresh_dir("out-measurements");
  const std::string measurement = (dir / "m.toml").string();
  fs::copy_file(source("measurements/amd-mi300x.toml"), measurement);
  const std::string rows = read_text(measurement);
  for (const std::string& input : {measurement, dir.string()}) {
    INFO(input);
    const Run r = run("validate " + input + " -o " + measurement);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(measurement + ": --output: is "));
    CHECK(read_text(measurement) == rows);
  }
  CHECK(entries(dir) == 1);
}

TEST_CASE("two outputs naming one file are refused and nothing is written", "[cli][outputs][errors]") {
  const fs::path dir = fresh_dir("out-twice");
  const std::string same = (dir / "same.out").string();
  const Run r = run("breakeven " + source(kScenario) + " --svg " + same + " -o " + same);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("--output and --svg name one file"));
  CHECK(entries(dir) == 0);
  // One file under two names: an existing file and a link to it.
  write_temp("out-twice/report.txt", "kept\n");
  fs::create_symlink("report.txt", dir / "alias.txt");
  const Run aliased = run("breakeven " + source(kScenario) + " --svg " + (dir / "alias.txt").string() + " -o " +
                          (dir / "report.txt").string());
  CHECK(aliased.code == 2);
  CHECK(read_text(dir / "report.txt") == "kept\n");
  CHECK(entries(dir) == 2);
  // Standard output too: named twice, or a regular file another output names.
  const Run both = run("breakeven " + source(kScenario) + " --svg -");
  CHECK(both.code == 2);
  CHECK(both.out.empty());
  CHECK_THAT(both.err, Catch::Contains("--svg and standard output both name standard output"));
  const Run redirected = run("breakeven " + source(kScenario) + " --svg " + (dir / "report.txt").string() + " > " +
                             (dir / "report.txt").string());
  CHECK(redirected.code == 2);
  CHECK_THAT(redirected.err, Catch::Contains("--svg and standard output name one file"));
}

TEST_CASE("a legal 255-byte output name is written", "[cli][outputs]") {
  const fs::path dir = fresh_dir("out-long-name");
  const fs::path out = dir / std::string(255, 'a');
  const Run r = run("estimate " + source(kScenario) + " -o " + out.string());
  CHECK(r.code == 0);
  CHECK_THAT(read_text(out), Catch::Contains("bottleneck"));
  CHECK(entries(dir) == 1);
}

TEST_CASE("a new output file gets the umask's permissions and a replaced file keeps its own", "[cli][outputs]") {
  const fs::path dir = fresh_dir("out-mode");
  const Run made = run_env("umask 022;", "estimate " + source(kScenario) + " -o " + (dir / "new.txt").string());
  CHECK(made.code == 0);
  CHECK((fs::status(dir / "new.txt").permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read));
  write_temp("out-mode/kept.txt", "x");
  fs::permissions(dir / "kept.txt", fs::perms::owner_read | fs::perms::owner_write);
  CHECK(run("estimate " + source(kScenario) + " -o " + (dir / "kept.txt").string()).code == 0);
  CHECK((fs::status(dir / "kept.txt").permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write));
}

TEST_CASE("a full disk fails the write with exit 1 and leaves no file behind", "[cli][outputs][errors]") {
  const fs::path dir = fresh_dir("out-full");
  fs::create_symlink("/dev/full", dir / "full-link");
  const Run r = run("breakeven " + source(kScenario) + " --svg " + (dir / "chart.svg").string() + " -o " +
                    (dir / "full-link").string());
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Catch::Contains("No space left on device"));
  CHECK(entries(dir) == 1);  // the link only: no chart, no temporary file
  CHECK(fs::is_symlink(fs::symlink_status(dir / "full-link")));
}

TEST_CASE("an output in a folder that cannot be written exits 2 and leaves nothing", "[cli][outputs][errors]") {
  if (::geteuid() == 0) {
    WARN("not checked: permissions do not bind the superuser");
    return;
  }
  const fs::path dir = fresh_dir("out-read-only");
  fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
  const Run r = run("estimate " + source(kScenario) + " -o " + (dir / "out.txt").string());
  fs::permissions(dir, fs::perms::owner_all);
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("--output: cannot write in " + fs::canonical(dir).string()) &&
                        Catch::Contains("Permission denied"));
  CHECK(entries(dir) == 0);
}

TEST_CASE("a failed calibrate -o leaves no files and no folder it created", "[cli][outputs][errors][calibrate]") {
  const fs::path dir = fresh_dir("out-calibrate");
  // A file size limit of 512 bytes, below the overlay's largest file: its write fails with EFBIG
  // (the signal that would end the process ignored, as a shell's `ulimit -f` run does).
  const Run r =
      run_env("trap '' XFSZ; prlimit --fsize=512",
              "calibrate " + source("measurements") + " -o " + (dir / "overlay" / "nested").string() + " > /dev/null");
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Catch::Contains("File too large"));
  CHECK(entries(dir) == 0);
}

TEST_CASE("help and version written to a full disk exit 1", "[cli][outputs][errors]") {
  for (const char* args : {"--help", "--version", "estimate --help"}) {
    INFO(args);
    const Run r = run(std::string(args) + " > /dev/full");
    CHECK(r.code == 1);
    CHECK_THAT(r.err, Catch::Contains("cannot write to standard output: No space left on device"));
  }
}

TEST_CASE("gpusim with no arguments prints its usage on stderr and exits 2", "[cli][outputs][errors]") {
  const Run r = run("");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_THAT(r.err, Catch::Contains("usage:"));
}

TEST_CASE("a report to a closed standard output is a failed write: exit 1", "[cli][outputs][errors]") {
  const Run r = run("estimate " + source(kScenario) + " >&-");
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Catch::Contains("cannot write to standard output: Bad file descriptor"));
  // With -o the report does not need standard output.
  const fs::path dir = fresh_dir("out-closed");
  CHECK(run("estimate " + source(kScenario) + " -o " + (dir / "r.txt").string() + " >&-").code == 0);
  CHECK_THAT(read_text(dir / "r.txt"), Catch::Contains("bottleneck"));
}
