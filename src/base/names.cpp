// Suggestions for a misspelt name: the optimal string alignment distance (Levenshtein's edits plus
// the transposition of two adjacent characters [damerau-1964]) between the name asked and each
// known one, compared without case. Close spellings are suggested, and, for a short name, the
// known names that contain it ("h100" -> the H100 variants).
#include <algorithm>
#include <cctype>

#include "gpusim/base.hpp"

namespace gpusim::base {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic programme: the one before last is needed for a transposition.
  std::vector<std::size_t> before(b.size() + 1);
  std::vector<std::size_t> last(b.size() + 1);
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    last[j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({last[j] + 1, row[j - 1] + 1, last[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        row[j] = std::min(row[j], before[j - 2] + 1);
      }
    }
    std::swap(before, last);
    std::swap(last, row);
  }
  return last[b.size()];
}

std::vector<std::string> closest_names(std::string_view asked, const std::vector<std::string>& known,
                                       std::size_t most) {
  const std::string a = lower(asked);
  if (a.empty()) {
    return {};
  }
  // A third of the name's length in edits, at least one and at most three.
  const std::size_t limit = std::clamp<std::size_t>(a.size() / 3, 1, 3);
  struct Scored {
    std::size_t rank;  // the edit distance, or limit + 1 for a name that only contains the one asked
    std::string name;
  };
  std::vector<Scored> found;
  for (const std::string& k : known) {
    const std::string l = lower(k);
    const std::size_t d = edit_distance(a, l);
    if (d <= limit) {
      found.push_back({d, k});
    } else if (a.size() >= 2 && l.find(a) != std::string::npos) {
      found.push_back({limit + 1, k});
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const Scored& x, const Scored& y) { return x.rank < y.rank; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < found.size() && i < most; ++i) {
    out.push_back(found[i].name);
  }
  return out;
}

std::string did_you_mean(std::string_view asked, const std::vector<std::string>& known) {
  const std::vector<std::string> near = closest_names(asked, known, 3);
  std::string out;
  for (std::size_t i = 0; i < near.size(); ++i) {
    out += (i == 0 ? "did you mean \"" : i + 1 == near.size() ? " or \"" : ", \"") + near[i] + "\"";
  }
  return out.empty() ? out : out + "?";
}

}  // namespace gpusim::base
