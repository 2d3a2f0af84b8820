// A Hugging Face hub id ("meta-llama/Meta-Llama-3-8B") found in the local hub cache, the layout
// huggingface_hub downloads into [hf-hub-cache]: <cache>/models--<org>--<name>/refs/main holds the
// commit of the main revision, and <cache>/models--<org>--<name>/snapshots/<commit>/config.json its
// config. The cache is $HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub,
// else ~/.cache/huggingface/hub. Nothing is downloaded: gpusim reads no network.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "parse/parse.hpp"

namespace gpusim::parse {

namespace fs = std::filesystem;

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

}  // namespace

bool looks_like_hub_id(std::string_view s) {
  const std::size_t slash = s.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == s.size() || s.find('/', slash + 1) != s.npos) {
    return false;
  }
  if (s.front() == '.' || s[slash + 1] == '.' || (s.size() >= 5 && s.substr(s.size() - 5) == ".json")) {
    return false;  // "./x", "../x" and "dir/config.json" are paths
  }
  return std::all_of(s.begin(), s.end(), [](char c) { return c == '/' || name_char(c); });
}

std::string hub_cache() {
  if (std::string v = env("HF_HUB_CACHE"); !v.empty()) {
    return v;
  }
  if (std::string v = env("HF_HOME"); !v.empty()) {
    return (fs::path(v) / "hub").string();
  }
  if (std::string v = env("XDG_CACHE_HOME"); !v.empty()) {
    return (fs::path(v) / "huggingface" / "hub").string();
  }
  return (fs::path(env("HOME")) / ".cache" / "huggingface" / "hub").string();
}

std::optional<std::string> find_hub_config(std::string_view id) {
  if (!looks_like_hub_id(id)) {
    return std::nullopt;
  }
  std::string folder = "models--" + std::string(id);
  folder.replace(folder.find('/'), 1, "--");
  const fs::path repo = fs::path(hub_cache()) / folder;
  std::error_code ec;
  // The main revision's snapshot, when refs/main names one that holds a config.
  std::ifstream ref(repo / "refs" / "main");
  std::string commit;
  if (ref >> commit && !commit.empty() && commit.find('/') == std::string::npos) {
    const fs::path config = repo / "snapshots" / commit / "config.json";
    if (fs::is_regular_file(config, ec)) {
      return config.string();
    }
  }
  // Otherwise the snapshots that hold one, the first in name order (a cache without refs/main).
  std::vector<fs::path> found;
  for (fs::directory_iterator it(repo / "snapshots", ec), end; !ec && it != end; it.increment(ec)) {
    if (fs::is_regular_file(it->path() / "config.json", ec)) {
      found.push_back(it->path() / "config.json");
    }
  }
  if (found.empty()) {
    return std::nullopt;
  }
  std::sort(found.begin(), found.end());
  return found.front().string();
}

}  // namespace gpusim::parse
