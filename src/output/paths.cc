// Shortest unique path suffixes (paths.h): every suffix that starts after a '/' is counted once per
// distinct path, and each path takes its shortest suffix counted once. Linear in the total length of
// the paths' components, so a btfhub tree of thousands of kernels costs nothing to name.
#include "btfslim/paths.h"

#include <unordered_map>
#include <unordered_set>

namespace btfslim {
namespace {

// Calls `f` with `path` and each of its suffixes that starts after a '/', longest first. A trailing
// '/' (or the second of two) starts none.
template <typename F>
void for_each_suffix(std::string_view path, F&& f) {
  f(path);
  for (std::size_t i = 0; i + 1 < path.size(); ++i)
    if (path[i] == '/' && path[i + 1] != '/') f(path.substr(i + 1));
}

}  // namespace

std::vector<std::string_view> shortest_unique_suffixes(std::span<const std::string> paths) {
  // How many distinct paths end in each suffix.
  std::unordered_set<std::string_view> distinct(paths.begin(), paths.end());
  std::unordered_map<std::string_view, std::size_t> holders;
  for (const std::string_view p : distinct) {
    std::unordered_set<std::string_view> own;  // "a//b" ends in "b" once, not twice
    for_each_suffix(p, [&](std::string_view s) {
      if (own.insert(s).second) ++holders[s];
    });
  }
  std::vector<std::string_view> shown;
  shown.reserve(paths.size());
  for (const std::string& path : paths) {
    std::string_view best = path;
    for_each_suffix(path, [&](std::string_view s) {
      if (holders[s] == 1 && s.size() < best.size()) best = s;
    });
    shown.push_back(best);
  }
  return shown;
}

}  // namespace btfslim
