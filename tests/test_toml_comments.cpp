// Comment bodies that toml++ accepts as they are are dropped before it parses a file
// (parse::parse_toml): what it makes of the file must not change. Values, strings that hold a '#',
// the line and column of every later error stay the same; a comment toml++ refuses (a control
// character, a byte that is not UTF-8, an encoded surrogate, a lone carriage return) still reaches
// it and is still refused.
#include "helpers.hpp"

using namespace gpusim;
using test::diagnostics_of;

namespace {

// The small training scenario (test::kSmallTraining) under the first line `head`, a comment line
// of non-ASCII text below it.
std::string with_head(const std::string& head) {
  const std::string small = test::kSmallTraining;
  return head + "\n# a comment with non-ASCII text: A100 \u00d7 8 \u2014 \u2248 1e9 tokens\n" +
         small.substr(small.find('\n') + 1);
}

}  // namespace

TEST_CASE("a '#' inside a string is text, not a comment, in every kind of string", "[parse][comments]") {
  CHECK(test::scenario(with_head(R"(name = "a # b" # the comment)")).name == "a # b");
  CHECK(test::scenario(with_head(R"(name = 'c # d' # the comment)")).name == "c # d");
  CHECK(test::scenario(with_head(R"(name = "e \" # f" # an escaped quote does not end the string)")).name ==
        "e \" # f");
  CHECK(test::scenario(with_head("name = \"\"\"g\n# h\"\"\" # after a multi-line string")).name == "g\n# h");
  CHECK(test::scenario(with_head("name = '''i\n# j''' # after a literal multi-line string")).name == "i\n# j");
}

TEST_CASE("an error after comments is reported at its own line and column", "[parse][comments][errors]") {
  // The value of gpus is 'x' on line 5, column 8; comments before it on that line and above.
  const std::string text =
      "# a comment line × ≈ →\nname = \"n\" # trailing\n[system]  # header comment\n"
      "gpu = \"a100-sxm4-80gb\"  # a100\ngpus = \"x\" # not a count\n";
  const auto ds = diagnostics_of([&] { (void)test::scenario(text); });
  REQUIRE_FALSE(ds.empty());
  CHECK(ds[0].pos.line == 5);
  CHECK(ds[0].pos.column == 8);
  CHECK(ds[0].key == "system.gpus");
  // A TOML syntax error after a comment: the unclosed header on line 3 is reported on line 3.
  const auto syntax = diagnostics_of([&] { (void)test::scenario("name = \"n\" # ok ×\n# more\n[system\n"); });
  REQUIRE(syntax.size() == 1);
  CHECK(syntax[0].pos.line == 3);
  CHECK_THAT(syntax[0].message, Catch::StartsWith("TOML syntax error"));
  // A value missing before a comment: reported at the '#', which is kept.
  const auto missing = diagnostics_of([&] { (void)test::scenario("name = # no value\n"); });
  REQUIRE(missing.size() == 1);
  CHECK(missing[0].pos.line == 1);
  CHECK(missing[0].pos.column == 8);
}

TEST_CASE("a comment toml++ refuses still reaches it and is refused with its line", "[parse][comments][errors]") {
  for (const std::string& bad : {std::string("\x01"), std::string("\x7f"), std::string("\xff"),
                                 std::string("\xc0\xaf"),          // an overlong '/'
                                 std::string("\xed\xa0\x80"),      // U+D800, a surrogate
                                 std::string("\xf4\x90\x80\x80"),  // above U+10FFFF
                                 std::string("\xe2\x82"),          // a sequence cut short
                                 std::string("a\rb")}) {
    INFO("comment byte(s) " << static_cast<int>(static_cast<unsigned char>(bad[0])));
    const auto ds = diagnostics_of([&] { (void)test::scenario(with_head("name = \"n\"\n# bad: " + bad + " here")); });
    REQUIRE_FALSE(ds.empty());
    CHECK(ds[0].pos.line == 2);
    CHECK_THAT(ds[0].message, Catch::StartsWith("TOML syntax error"));
  }
}

TEST_CASE("a file with an ill-formed UTF-8 sequence reaches toml++ whole, comments and all",
          "[parse][comments][errors]") {
  // toml++ 3.3 places this error by where its reader's buffer falls over the text before it: with
  // the comments above dropped, such an error came out a column off. Parsed whole, it names line 13,
  // column 20, as toml++ does for this text (with the comments dropped: 19).
  const std::string text =
      with_head("name = \"n\" # a comment to drop") + "#" + std::string(18, ' ') + "\xed\xa0\x80 here\n";
  const auto ds = diagnostics_of([&] { (void)test::scenario(text); });
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].pos.line == 13);
  CHECK(ds[0].pos.column == 20);
  CHECK_THAT(ds[0].message, Catch::Contains("invalid utf-8"));
}

TEST_CASE("comments with Windows line breaks, tabs and none at the end of the file are dropped cleanly",
          "[parse][comments]") {
  CHECK(test::scenario(with_head("name = \"crlf\" # ends in CR LF\r\n# and a tab:\there\r\n")).name == "crlf");
  const std::string at_end = with_head("name = \"end\"") + "# the last line, without a line break";
  CHECK(test::scenario(at_end).name == "end");
}
