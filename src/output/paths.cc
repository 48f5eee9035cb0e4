// Shortest unique path suffixes (paths.h): every suffix that starts after a '/' is counted once per
// distinct path, and each path takes its shortest suffix counted once. Linear in the total length of
// the paths' components, so a btfhub tree of thousands of kernels costs nothing to name.
#include "btfslim/paths.h"

#include <sys/utsname.h>

#include <algorithm>
#include <cctype>
#include <string>
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

std::string_view kernel_release(std::string_view target) {
  if (target == "/sys/kernel/btf/vmlinux") {
    static const std::string running = [] {
      struct utsname u {};
      return ::uname(&u) == 0 ? std::string(u.release) : std::string();
    }();
    return running;
  }
  std::string_view name = target.substr(target.rfind('/') + 1);  // npos + 1 is 0
  // An archive's member: btfhub names it as its archive, without ".tar.xz".
  if (const auto colon = name.rfind(':'); colon != std::string_view::npos) name.remove_prefix(colon + 1);
  for (const std::string_view compressed : {".xz", ".zst", ".gz"})
    if (name.ends_with(compressed)) name.remove_suffix(compressed.size());
  if (name.ends_with(".btf")) name.remove_suffix(4);
  if (name.starts_with("vmlinux-")) name.remove_prefix(8);
  const bool release = !name.empty() && std::isdigit(static_cast<unsigned char>(name[0])) &&
                       name.find('.') != std::string_view::npos &&
                       std::all_of(name.begin(), name.end(), [](char c) {
                         return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("._+-~").find(c) != std::string_view::npos;
                       });
  return release ? name : std::string_view();
}

std::vector<std::string> kernel_short_names(std::span<const std::string> targets) {
  // Each kernel's path with its release as the file name; two inputs that would be one path so keep
  // their own paths.
  std::vector<std::string> renamed;
  renamed.reserve(targets.size());
  for (const std::string& t : targets) {
    const std::string_view release = kernel_release(t);
    if (release.empty()) {
      renamed.push_back(t);
      continue;
    }
    const auto slash = t.rfind('/');
    renamed.push_back((slash == std::string::npos ? std::string() : t.substr(0, slash + 1)) + std::string(release));
  }
  std::unordered_map<std::string_view, std::string_view> first_input;  // renamed path -> the input it came from
  std::unordered_set<std::string_view> shared;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const auto [it, fresh] = first_input.try_emplace(renamed[i], targets[i]);
    if (!fresh && it->second != targets[i]) shared.insert(it->first);
  }
  std::vector<bool> own_path(targets.size());
  for (std::size_t i = 0; i < targets.size(); ++i) own_path[i] = shared.count(renamed[i]) != 0;
  for (std::size_t i = 0; i < targets.size(); ++i)
    if (own_path[i]) renamed[i] = targets[i];
  std::vector<std::string> shown;
  shown.reserve(targets.size());
  for (const std::string_view s : shortest_unique_suffixes(renamed)) shown.emplace_back(s);
  return shown;
}

}  // namespace btfslim
