// Which spec values cite which measured rows. Spec files name the rows a value was set, fitted or
// borrowed from in the comment of its line ("gemm = 0.94  # `gpusim calibrate` over B03, B16"), and
// the rows they rely on in their header and [meta] sources. A row named anywhere in a spec file is
// no longer evidence of the model (docs/measurements.md, "Role"); a row named on a value's line is
// what cross-validation must take back when it leaves that row's publication out.
//
// The scan reads the files as text, line by line (toml++ keeps no comments): a `[table]` header
// sets the table; `key = value  # comment` is a value whose comment may name rows; any other
// comment or string line may name rows too. An id is a word of letters, digits, '_' and '.',
// joined by hyphens ("C04-1MB", "E14-pp4096"); "A24-A26" names A24, A25 and A26.
#include <cctype>
#include <string_view>

#include "gpusim/validation.hpp"

namespace gpusim::validation {

namespace {

bool id_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.'; }

// The hyphen-joined words of `text`: "row C04-1MB, A24-A26." -> {"row", "C04-1MB", "A24-A26"}.
std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!id_char(text[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < text.size() && (id_char(text[j]) || (text[j] == '-' && j + 1 < text.size() && id_char(text[j + 1])))) {
      ++j;
    }
    std::string w(text.substr(i, j - i));
    while (!w.empty() && w.back() == '.') {  // a sentence's full stop
      w.pop_back();
    }
    out.push_back(std::move(w));
    i = j;
  }
  return out;
}

// "A24" -> {"A", 24, 2 digits}; nullopt for a word that is not letters then digits.
struct Numbered {
  std::string prefix;
  int number = 0;
  std::size_t digits = 0;
};
std::optional<Numbered> numbered(std::string_view w) {
  std::size_t k = 0;
  while (k < w.size() && std::isalpha(static_cast<unsigned char>(w[k])) != 0) {
    ++k;
  }
  if (k == 0 || k == w.size() || w.size() - k > 6) {
    return std::nullopt;
  }
  for (std::size_t d = k; d < w.size(); ++d) {
    if (std::isdigit(static_cast<unsigned char>(w[d])) == 0) {
      return std::nullopt;
    }
  }
  return Numbered{std::string(w.substr(0, k)), std::stoi(std::string(w.substr(k))), w.size() - k};
}

// The known row ids a piece of text names, in order of first mention.
std::vector<std::string> named_rows(std::string_view text, const std::set<std::string>& row_ids) {
  std::vector<std::string> out;
  auto add = [&out](const std::string& id) {
    if (std::find(out.begin(), out.end(), id) == out.end()) {
      out.push_back(id);
    }
  };
  for (const std::string& w : words(text)) {
    if (row_ids.count(w) != 0) {
      add(w);
      continue;
    }
    // A range "A24-A26" (or "A24-26"): every id between its ends.
    const std::size_t dash = w.find('-');
    if (dash == std::string::npos) {
      continue;
    }
    const auto lo = numbered(std::string_view(w).substr(0, dash));
    std::string hi_text = w.substr(dash + 1);
    if (lo && !hi_text.empty() && std::isdigit(static_cast<unsigned char>(hi_text[0])) != 0) {
      hi_text = lo->prefix + hi_text;
    }
    const auto hi = numbered(hi_text);
    if (!lo || !hi || lo->prefix != hi->prefix || hi->number < lo->number || hi->number - lo->number > 200) {
      // Not a range: a hyphenated word may still hold an id ("E04-style"); each part is tried.
      for (std::size_t from = 0; from <= w.size();) {
        const std::size_t to = std::min(w.find('-', from), w.size());
        if (row_ids.count(w.substr(from, to - from)) != 0) {
          add(w.substr(from, to - from));
        }
        from = to + 1;
      }
      continue;
    }
    for (int n = lo->number; n <= hi->number; ++n) {
      std::string id = std::to_string(n);
      while (id.size() < lo->digits) {
        id.insert(id.begin(), '0');
      }
      if (row_ids.count(lo->prefix + id) != 0) {
        add(lo->prefix + id);
      }
    }
  }
  return out;
}

// Where a line's comment starts: the first '#' outside a double-quoted string (npos if none).
std::size_t comment_start(std::string_view line) {
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && quoted) {
      ++i;
    } else if (line[i] == '"') {
      quoted = !quoted;
    } else if (line[i] == '#' && !quoted) {
      return i;
    }
  }
  return std::string_view::npos;
}

std::string trim(std::string_view s) {
  std::size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a])) != 0) {
    ++a;
  }
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1])) != 0) {
    --b;
  }
  return std::string(s.substr(a, b - a));
}

void scan_file(catalog::SpecKind kind, const std::string& id, const catalog::SpecFile& file,
               const std::set<std::string>& row_ids, std::vector<SpecLine>& out) {
  std::string table;
  int line_no = 0;
  std::size_t at = 0;
  const std::string_view text = file.text;
  while (at <= text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) {
      end = text.size();
    }
    const std::string_view line(text.data() + at, end - at);
    ++line_no;
    at = end + 1;
    const std::string body = trim(line.substr(0, std::min(line.size(), comment_start(line))));
    const std::string_view comment =
        comment_start(line) == std::string_view::npos ? std::string_view() : line.substr(comment_start(line));
    SpecLine s{kind, id, file.path, line_no, "", "", {}};
    if (!body.empty() && body.front() == '[' && body.rfind("[[", 0) != 0) {
      table = trim(std::string_view(body).substr(1, body.find(']') - 1));
    } else if (const std::size_t eq = body.find('='); eq != std::string::npos && body.front() != '"') {
      const std::string key = trim(std::string_view(body).substr(0, eq));
      s.key = table.empty() ? key : table + "." + key;
      s.value = trim(std::string_view(body).substr(eq + 1));
    }
    // A value's own line names rows in its comment; any other line anywhere in it.
    s.rows = named_rows(s.key.empty() ? line : comment, row_ids);
    if (!s.key.empty() || !s.rows.empty()) {
      out.push_back(std::move(s));
    }
    if (end == text.size()) {
      break;
    }
  }
}

}  // namespace

std::vector<SpecLine> spec_lines(const catalog::Catalog& catalog, const std::set<std::string>& row_ids) {
  std::vector<SpecLine> out;
  for (const auto& [kind, folder] : catalog::kSpecFolders) {
    for (const std::string& id : catalog.ids(kind)) {
      for (std::size_t layer = 0; layer < catalog.layers(kind, id); ++layer) {
        scan_file(kind, id, catalog.file_layer(kind, id, layer), row_ids, out);
      }
    }
  }
  return out;
}

}  // namespace gpusim::validation
