// Publications, citations and leave-one-publication-out cross-validation.
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "helpers.hpp"

using namespace gpusim;
using namespace gpusim::validation;

namespace {

std::vector<Measurement> shipped_rows() {
  return load_measurements(test::catalog(), {std::string(GPUSIM_SOURCE_DIR) + "/measurements"});
}

std::set<std::string> ids_of(const std::vector<Measurement>& rows) {
  std::set<std::string> ids;
  for (const auto& m : rows) {
    ids.insert(m.id);
  }
  return ids;
}

// A stream-copy row of `gpu` from `publication` whose measured bandwidth is `eta` of the spec's.
Measurement stream_row(const std::string& id, const std::string& publication, double eta, Role role = Role::kFit) {
  Measurement m;
  m.id = id;
  m.file = "synthetic.toml";
  m.publication = publication;
  m.role = role;
  m.gpu = "h100-sxm5-80gb";
  m.benchmark = Benchmark::kStreamCopy;
  m.bytes = units::gibibytes(2);
  m.value = test::catalog().gpu("h100-sxm5-80gb").memory_bandwidth.value() * eta;
  return m;
}

// The built-in catalog with the H100's DRAM efficiency patched to `eta`, its line naming `cites`.
Catalog with_cited_dram(double eta, const std::string& cites) {
  Catalog c = test::catalog();
  c.add_file(catalog::SpecKind::kGpu, "h100-sxm5-80gb",
             catalog::SpecFile{"<test>/gpus/h100-sxm5-80gb.toml",
                               "base = \"h100-sxm5-80gb\"\n[efficiency]\ndram = " + std::to_string(eta) +
                                   "  # fitted on " + cites + "\n"});
  return c;
}

const RowResult& result_of(const ValidationReport& r, const std::string& id) {
  for (const RowResult& rr : r.rows) {
    if (rr.measurement->id == id) {
      return rr;
    }
  }
  FAIL("no row " << id);
  return r.rows.front();
}

}  // namespace

TEST_CASE("a spec comment names rows by id, ranges and hyphenated ids included", "[cross-validate][citations]") {
  Catalog c = test::catalog();
  c.add_file(catalog::SpecKind::kRuntime, "zz-test",
             catalog::SpecFile{"<test>/runtimes/zz-test.toml",
                               "# header: rows Q07 and Q11-Q13\n"
                               "name = \"x\"\n"
                               "[efficiency]\n"
                               "remainder = 0.2  # over Q01, Q02-big and Q04-Q05.\n"
                               "quantized = 1.0  # none here (Q0, q01)\n"});
  const std::set<std::string> ids{"Q01", "Q02-big", "Q04", "Q05", "Q07", "Q11", "Q12", "Q13"};
  std::map<std::string, std::vector<std::string>> by_key;
  std::vector<std::string> elsewhere;
  for (const SpecLine& l : spec_lines(c, ids)) {
    if (l.id != "zz-test") {
      continue;
    }
    if (l.key.empty()) {
      elsewhere.insert(elsewhere.end(), l.rows.begin(), l.rows.end());
    } else {
      by_key[l.key] = l.rows;
    }
  }
  CHECK(by_key["efficiency.remainder"] == std::vector<std::string>{"Q01", "Q02-big", "Q04", "Q05"});
  CHECK(by_key["efficiency.quantized"].empty());
  CHECK(by_key.count("name") == 1);  // a value line is kept even when it names no row
  CHECK(elsewhere == std::vector<std::string>{"Q07", "Q11", "Q12", "Q13"});
}

TEST_CASE("every row a shipped spec file names is a fit row", "[cross-validate][citations]") {
  // A row a spec value was set, fitted or borrowed from is not evidence (docs/measurements.md).
  const std::vector<Measurement> rows = shipped_rows();
  std::map<std::string, Role> role;
  for (const auto& m : rows) {
    role[m.id] = m.role;
  }
  for (const SpecLine& l : spec_lines(test::catalog(), ids_of(rows))) {
    for (const std::string& id : l.rows) {
      INFO(l.path << ":" << l.line << " names row " << id);
      CHECK(role.at(id) == Role::kFit);
    }
  }
}

TEST_CASE("shipped row ids are unique across files, so a spec's citation names one row", "[cross-validate]") {
  std::map<std::string, std::string> seen;
  for (const auto& m : shipped_rows()) {
    const auto [it, inserted] = seen.emplace(m.id, m.file);
    INFO(m.id << " in " << m.file << " and " << it->second);
    CHECK(inserted);
  }
}

TEST_CASE("every shipped row belongs to a publication of docs/sources.md", "[cross-validate]") {
  std::ifstream in(std::string(GPUSIM_SOURCE_DIR) + "/docs/sources.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string sources = text.str();
  for (const auto& m : shipped_rows()) {
    INFO(m.id << " (" << m.file << ") belongs to \"" << m.publication << "\"");
    CHECK(sources.find("**`" + m.publication + "`**") != std::string::npos);
  }
}

TEST_CASE("a row's publication is its own, else its file's, else its source", "[cross-validate]") {
  const auto dir = test::process_scratch("gpusim-cv") / "pub";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "m.toml") << R"([meta]
source = "somewhere"
publication = "pub-a"
role = "check"

[[measurement]]
id = "r1"
gpu = "h100-sxm5-80gb"
benchmark = "stream_copy"
value = "2.9 TB/s"

[[measurement]]
id = "r2"
publication = "pub-b"
gpu = "h100-sxm5-80gb"
benchmark = "stream_copy"
value = "2.9 TB/s"
)";
  std::ofstream(dir / "n.toml") << R"([meta]
source = "a bench run"
role = "check"

[[measurement]]
id = "r3"
gpu = "h100-sxm5-80gb"
benchmark = "stream_copy"
value = "2.9 TB/s"
)";
  const auto rows = load_measurements(test::catalog(), {dir.string()});
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].publication == "pub-a");
  CHECK(rows[1].publication == "pub-b");
  CHECK(rows[2].publication == "a bench run");
}

TEST_CASE("leaving a publication out takes its fitted value back to the architecture's", "[cross-validate]") {
  // The H100's DRAM efficiency 0.5 was fitted on X01 (publication P); without P it is Hopper's.
  const Catalog c = with_cited_dram(0.5, "X01");
  const std::vector<Measurement> rows{stream_row("X01", "P", 0.5), stream_row("Y01", "Q", 0.9, Role::kCheck)};
  const CrossValidation cv = cross_validate(rows, c);
  const double bw = c.gpu("h100-sxm5-80gb").memory_bandwidth.value();
  const double hopper = test::catalog().gpu("h100-sxm5-80gb").efficiency.dram;  // the arch default it inherits
  // Shipped: both rows predicted at 0.5 of the spec bandwidth.
  CHECK(*result_of(cv.shipped, "X01").prediction.value == Approx(bw * 0.5));
  // Held out: X01 under Hopper's default (no other publication's fit row for this GPU to refit on);
  // Y01's publication set nothing, so it keeps the shipped prediction.
  CHECK(*result_of(cv.held_out, "X01").prediction.value == Approx(bw * hopper));
  CHECK(*result_of(cv.held_out, "Y01").prediction.value == Approx(bw * 0.5));
  REQUIRE(cv.folds.size() == 1);
  CHECK(cv.folds[0].publication == "P");
  REQUIRE(cv.folds[0].taken_back.size() == 1);
  CHECK(cv.folds[0].taken_back[0].key == "efficiency.dram");
  CHECK(cv.held_out.cross_validated);
  CHECK(cv.held_out.all.count == 2);
}

TEST_CASE("a value taken back is fitted again on the other publications' fit rows", "[cross-validate]") {
  // The line names both X01 (P, at 0.6) and X02 (R, at 0.8): without P, calibration refits the
  // efficiency on X02 alone, so X01 is predicted at 0.8 of the bandwidth.
  const Catalog c = with_cited_dram(0.7, "X01 and X02");
  const std::vector<Measurement> rows{stream_row("X01", "P", 0.6), stream_row("X02", "R", 0.8)};
  const CrossValidation cv = cross_validate(rows, c);
  const double bw = c.gpu("h100-sxm5-80gb").memory_bandwidth.value();
  CHECK(*result_of(cv.held_out, "X01").prediction.value == Approx(bw * 0.8).epsilon(1e-6));
  CHECK(*result_of(cv.held_out, "X02").prediction.value == Approx(bw * 0.6).epsilon(1e-6));
  REQUIRE(cv.folds.size() == 2);
  for (const Fold& f : cv.folds) {
    REQUIRE(f.taken_back.size() == 1);
    CHECK(f.taken_back[0].refit.has_value());
  }
}

TEST_CASE("rows behind a value no sibling holds are not held out and leave the summaries", "[cross-validate]") {
  // A name is no number: no sibling's value can stand in for it, so the row it came from is listed, not scored.
  Catalog c = test::catalog();
  const std::vector<Measurement> rows{stream_row("X01", "P", 0.9)};
  c.add_file(catalog::SpecKind::kGpu, "h100-sxm5-80gb",
             catalog::SpecFile{"<test>/gpus/h100-sxm5-80gb.toml",
                               "base = \"h100-sxm5-80gb\"\nname = \"H100\"  # as X01 names it\n"});
  const CrossValidation cv = cross_validate(rows, c);
  const RowResult& x = result_of(cv.held_out, "X01");
  CHECK_FALSE(x.not_held_out.empty());
  CHECK(cv.held_out.all.count == 0);
  CHECK(cv.shipped.all.count == 1);
  CHECK_THAT(report::cross_validation_text(cv), Catch::Contains("not held out"));
}

TEST_CASE("a publication no spec value names is predicted by the shipped specs", "[cross-validate]") {
  const std::vector<Measurement> rows{stream_row("Z01", "S", 0.87, Role::kCheck)};
  const CrossValidation cv = cross_validate(rows, test::catalog());
  CHECK(cv.folds.empty());
  CHECK(*cv.held_out.rows[0].prediction.value == *cv.shipped.rows[0].prediction.value);
}

TEST_CASE("cross-validated summaries count fit rows too and split by kind and segment", "[cross-validate]") {
  const std::vector<Measurement> rows{stream_row("X01", "P", 0.9), stream_row("Y01", "Q", 0.8, Role::kCheck)};
  const CrossValidation cv = cross_validate(rows, test::catalog());
  REQUIRE(cv.held_out.by_kind.size() == 1);
  CHECK(cv.held_out.by_kind[0].group == "microbenchmark");
  CHECK(cv.held_out.by_kind[0].count == 2);
  REQUIRE(cv.held_out.by_segment.size() == 1);
  CHECK(cv.held_out.by_segment[0].group == "datacenter");
  // Plain validation counts only the check row in the same summaries.
  CHECK(validate(resolve(rows, test::catalog())).by_kind[0].count == 1);
}
