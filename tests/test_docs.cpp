// The repository documents itself: every scenario key in docs/scenarios.md, every report key in
// docs/report.md, every cited source in docs/sources.md, and no file leans on documents a clone
// does not have.
#include <filesystem>
#include <regex>
#include <set>

#include "cli_helpers.hpp"
#include "helpers.hpp"

using namespace gpusim;
namespace fs = std::filesystem;

namespace {

// The text of `doc` between the heading line `heading` and the next "## " heading.
std::string section(const std::string& doc, const std::string& heading) {
  const auto at = doc.find("\n" + heading + "\n");
  REQUIRE(at != std::string::npos);
  const auto end = doc.find("\n## ", at + 1);
  return doc.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// Text files of the source tree (not build outputs, not git's own files).
std::vector<fs::path> source_files() {
  std::vector<fs::path> out;
  const fs::path root(GPUSIM_SOURCE_DIR);
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name == ".git" || name.rfind("build", 0) == 0)) {
      it.disable_recursion_pending();
      continue;
    }
    const std::string ext = it->path().extension().string();
    if (it->is_regular_file() && ext != ".received" && ext != ".svg" && it->file_size() < 1'000'000) {
      out.push_back(it->path());
    }
  }
  return out;
}

}  // namespace

TEST_CASE("docs/scenarios.md documents every key the scenario loader accepts, in its table", "[docs]") {
  const std::string doc = test::read_text(test::source("docs/scenarios.md"));
  for (const scenario::TableKeys& t : scenario::schema()) {
    const std::string heading = t.table.empty() ? "## Top level" : "## [" + std::string(t.table) + "]";
    const std::string text = section(doc, heading);
    for (const auto key : t.keys) {
      if (t.table.empty() && key != "name") {
        continue;  // the tables themselves have sections of their own
      }
      INFO(heading << " " << key);
      CHECK(text.find("| `" + std::string(key) + "` |") != std::string::npos);
    }
  }
}

TEST_CASE("docs/report.md documents every key of the JSON report", "[docs]") {
  const std::string doc = test::read_text(test::source("docs/report.md"));
  for (const char* file : {"scenarios/gpt2-124m-rtx4090.toml", "scenarios/llama2-7b-decode-rtx4090.toml"}) {
    const Estimate e = estimate_file(test::catalog(), test::source(file));
    for (const answer::Field& f : answer::report_fields(e)) {
      const std::string key = *f.section == '\0' ? f.key : std::string(f.section) + "." + f.key;
      INFO(key);
      CHECK(doc.find("| `" + key + "` |") != std::string::npos);
    }
  }
  for (const char* key : {"bottleneck_reason", "advice"}) {
    INFO(key);
    CHECK(doc.find("| `" + std::string(key) + "` |") != std::string::npos);
  }
}

TEST_CASE("every source key cited in specs, measurements, scenarios and code is in docs/sources.md", "[docs]") {
  std::set<std::string> defined;
  const std::string bib = test::read_text(test::source("docs/sources.md"));
  const std::regex entry(R"(^- \*\*`([a-z0-9.-]+)`\*\*)", std::regex::multiline);
  for (auto it = std::sregex_iterator(bib.begin(), bib.end(), entry); it != std::sregex_iterator(); ++it) {
    defined.insert((*it)[1]);
  }
  CHECK(defined.size() >= 50);
  const std::regex group(R"(\[([^\]\n]*)\])");
  const std::regex key(R"(^[a-z0-9]+(-[a-z0-9.]+)+$)");
  int cited = 0;
  for (const fs::path& p : source_files()) {
    const std::string ext = p.extension().string();
    const bool tests = p.string().find("/tests/") != std::string::npos;  // regexes and fixtures, not citations
    if (tests || (ext != ".toml" && ext != ".cpp" && ext != ".hpp" && ext != ".md")) {
      continue;
    }
    const std::string text = test::read_text(p);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), group); it != std::sregex_iterator(); ++it) {
      const auto after = static_cast<std::size_t>(it->position() + it->length());
      if (after < text.size() && text[after] == '(') {
        continue;  // a Markdown link
      }
      std::stringstream parts((*it)[1].str());
      for (std::string token; std::getline(parts, token, ',');) {
        token.erase(0, token.find_first_not_of(' '));
        token = token.substr(0, token.find(' '));  // "[dao-2023, §3]": the key is the first word
        if (std::regex_match(token, key) && p.filename() != "sources.md") {
          ++cited;
          INFO(p.string() << ": [" << token << "]");
          CHECK(defined.count(token) == 1);
        }
      }
    }
  }
  CHECK(cited > 100);
}

TEST_CASE("the repository stands alone: no file refers to documents outside it", "[docs]") {
  // Built from pieces so this file does not match itself.
  const std::vector<std::string> outside = {std::string("../") + "shared", std::string("DES") + "IGN"};
  for (const fs::path& p : source_files()) {
    const std::string text = test::read_text(p);
    for (const auto& s : outside) {
      INFO(p.string());
      CHECK(text.find(s) == std::string::npos);
    }
  }
}

TEST_CASE("the README links the format documents and the bibliography", "[docs]") {
  const std::string readme = test::read_text(test::source("README.md"));
  for (const char* doc : {"docs/scenarios.md", "docs/report.md", "docs/measurements.md", "docs/sources.md"}) {
    INFO(doc);
    CHECK(readme.find(doc) != std::string::npos);
  }
}
