// Measurement TOML writer (see toml_writer.hpp). String escaping follows TOML v1.0.0 "Basic
// strings": any Unicode character except `"`, `\` and the control characters U+0000-U+001F and
// U+007F, which must be escaped.
#include "gpusim_bench/toml_writer.hpp"

#include <cstdio>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "gpusim_bench/format.hpp"

namespace gpusim::bench {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not one (overlong forms,
// surrogates and code points above U+10FFFF are invalid).
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto byte = [&s](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  std::size_t len = 0;
  std::uint32_t cp = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    cp = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    cp = b0 & 0x0Fu;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    cp = b0 & 0x07u;
  } else {
    return 0;
  }
  if (i + len > s.size()) {
    return 0;
  }
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0u) != 0x80u) {
      return 0;
    }
    cp = (cp << 6) | (byte(i + k) & 0x3Fu);
  }
  const bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
  const bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
  if (overlong || surrogate || cp > 0x10FFFF) {
    return 0;
  }
  return len;
}

std::string scalar_to_toml(const TomlScalar& v) {
  if (const auto* b = std::get_if<bool>(&v)) {
    return *b ? "true" : "false";
  }
  if (const auto* i = std::get_if<std::int64_t>(&v)) {
    return std::to_string(*i);
  }
  if (const auto* d = std::get_if<double>(&v)) {
    return toml_float(*d);
  }
  return toml_string(std::get<std::string>(v));
}

void validate(const std::vector<Measurement>& rows) {
  static const std::set<std::string> kStandard{"id", "gpu", "gpus", "benchmark", "value", "bytes", "conditions"};
  const auto& names = benchmark_names();
  const std::set<std::string> known(names.begin(), names.end());
  std::set<std::string> ids;
  for (const auto& r : rows) {
    const std::string where = "measurement '" + r.id + "'";
    if (r.id.empty()) {
      throw std::invalid_argument("a measurement has an empty id");
    }
    if (!ids.insert(r.id).second) {
      throw std::invalid_argument("duplicate measurement id '" + r.id + "'");
    }
    if (r.gpu.empty()) {
      throw std::invalid_argument(where + " has no gpu id");
    }
    if (r.gpus < 1) {
      throw std::invalid_argument(where + " has gpus < 1");
    }
    if (known.count(r.benchmark) == 0) {
      throw std::invalid_argument(where + " has unknown benchmark '" + r.benchmark + "'");
    }
    if (r.value.empty()) {
      throw std::invalid_argument(where + " has no value");
    }
    std::set<std::string> keys;
    for (const auto& [key, value] : r.extra) {
      if (key.empty() || kStandard.count(key) != 0 || !keys.insert(key).second) {
        throw std::invalid_argument(where + " repeats key '" + key + "'");
      }
    }
  }
}

void line(std::ostream& out, std::string_view key, const std::string& literal) {
  out << toml_key(key) << " = " << literal << '\n';
}

}  // namespace

Measurement& Measurement::set(std::string key, std::string v) {
  extra.emplace_back(std::move(key), TomlScalar{std::move(v)});
  return *this;
}
Measurement& Measurement::set(std::string key, const char* v) { return set(std::move(key), std::string(v)); }
Measurement& Measurement::set(std::string key, bool v) {
  extra.emplace_back(std::move(key), TomlScalar{v});
  return *this;
}
Measurement& Measurement::set(std::string key, std::int64_t v) {
  extra.emplace_back(std::move(key), TomlScalar{v});
  return *this;
}
Measurement& Measurement::set(std::string key, int v) { return set(std::move(key), static_cast<std::int64_t>(v)); }
Measurement& Measurement::set(std::string key, double v) {
  extra.emplace_back(std::move(key), TomlScalar{v});
  return *this;
}

const std::vector<std::string>& benchmark_names() {
  static const std::vector<std::string> names{
      "stream_copy",  "stream_triad", "stream_read",    "l2_bandwidth",    "latency_l1", "latency_l2",
      "latency_dram", "gemm",         "attention",      "launch_overhead", "h2d",        "d2h",
      "p2p",          "allreduce",    "reduce_scatter", "all_gather",      "power"};
  return names;
}

std::string toml_string(std::string_view text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const std::size_t len = utf8_sequence(text, i);
      if (len == 0) {
        out += "\\uFFFD";
        ++i;
      } else {
        out.append(text.substr(i, len));
        i += len;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  return out + "\"";
}

std::string toml_key(std::string_view key) {
  bool bare = !key.empty();
  for (char c : key) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    bare = bare && ok;
  }
  return bare ? std::string(key) : toml_string(key);
}

void write_measurements(std::ostream& out, const Meta& meta, const std::vector<Measurement>& rows) {
  validate(rows);
  out << "[meta]\n";
  const std::pair<const char*, const std::string*> meta_fields[] = {{"source", &meta.source},
                                                                    {"role", &meta.role},
                                                                    {"date", &meta.date},
                                                                    {"gpu_name", &meta.gpu_name},
                                                                    {"driver", &meta.driver},
                                                                    {"cuda_runtime", &meta.cuda_runtime},
                                                                    {"sm_clock", &meta.sm_clock},
                                                                    {"memory_clock", &meta.memory_clock},
                                                                    {"power_limit", &meta.power_limit}};
  for (const auto& [key, value] : meta_fields) {
    if (!value->empty()) {
      line(out, key, toml_string(*value));
    }
  }
  for (const auto& r : rows) {
    out << "\n[[measurement]]\n";
    line(out, "id", toml_string(r.id));
    line(out, "gpu", toml_string(r.gpu));
    line(out, "gpus", std::to_string(r.gpus));
    line(out, "benchmark", toml_string(r.benchmark));
    line(out, "value", toml_string(r.value));
    if (!r.bytes.empty()) {
      line(out, "bytes", toml_string(r.bytes));
    }
    for (const auto& [key, value] : r.extra) {
      line(out, key, scalar_to_toml(value));
    }
    if (!r.conditions.empty()) {
      line(out, "conditions", toml_string(r.conditions));
    }
  }
}

std::string measurements_to_string(const Meta& meta, const std::vector<Measurement>& rows) {
  std::ostringstream out;
  write_measurements(out, meta, rows);
  return out.str();
}

}  // namespace gpusim::bench
