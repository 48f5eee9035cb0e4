// Expanding a `--btf` list to kernels: directory walks and the raw BTF members of archives.
//
// A walk takes what starts like BTF or ELF, compressed BTF named so (.btf.xz), and what is named like a
// tar archive, and sorts it, so that the same tree gives the same list, in the same order, on every
// machine (minimize --shard relies on it). A kernel module is not a kernel: a walk passes modules over,
// and a tree of modules alone is refused with what to do instead.
#include "btfslim/targets.h"

#include "btfslim/archive.h"
#include "btfslim/compression.h"
#include "btfslim/error.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace btfslim {

bool looks_like_btf(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::uint8_t m[6] = {};
  if (!f.read(reinterpret_cast<char*>(m), sizeof m)) return false;
  if (const Compression c = compression_of(m); c != Compression::None) {
    std::string_view name(path);
    if (compression_of_name(name) == c) name.remove_suffix(compression_suffix(c).size());
    return name.ends_with(".btf") || name.ends_with("/vmlinux") || name == "vmlinux";
  }
  return (m[0] == 0x9f && m[1] == 0xeb) || (m[0] == 0xeb && m[1] == 0x9f) ||
         (m[0] == 0x7f && m[1] == 'E' && m[2] == 'L' && m[3] == 'F');
}

bool is_module_file(std::string_view path) {
  if (const Compression c = compression_of_name(path); c != Compression::None) path.remove_suffix(compression_suffix(c).size());
  const auto slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return name.size() > 3 && name.ends_with(".ko");
}

std::string module_name(std::string_view path) {
  if (const auto slash = path.rfind('/'); slash != std::string_view::npos) path.remove_prefix(slash + 1);
  if (const auto ko = path.rfind(".ko"); ko != std::string_view::npos && ko > 0 &&
                                         (ko + 3 == path.size() || path[ko + 3] == '.'))
    path = path.substr(0, ko);
  std::string name(path);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

std::vector<std::string> module_files(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (std::filesystem::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string path = it->path().string();
    if (is_module_file(path) && it->is_regular_file(ec)) found.push_back(path);
  }
  if (ec) fail(dir, "cannot list the modules: {}", ec.message());
  if (found.empty()) fail(dir, "holds no kernel modules (.ko, .ko.xz, .ko.zst, .ko.gz)");
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<std::string> module_arguments(const std::vector<std::string>& given) {
  std::vector<std::string> paths;
  for (const std::string& g : given) {
    std::error_code ec;
    if (!std::filesystem::is_directory(g, ec)) {
      paths.push_back(g);
      continue;
    }
    std::vector<std::string> found = module_files(g);
    paths.insert(paths.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
  }
  return paths;
}

std::vector<std::string> module_index_files(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with("modules.") && it->is_regular_file(ec)) found.push_back(name);
  }
  if (ec) fail(dir, "cannot list the directory: {}", ec.message());
  std::sort(found.begin(), found.end());
  return found;
}

std::vector<TargetFile> expand_target_files(const std::vector<std::string>& given) {
  std::vector<TargetFile> out;
  for (const std::string& arg : given) {
    std::error_code ec;
    if (!std::filesystem::is_directory(arg, ec)) {
      out.push_back({arg, std::filesystem::path(arg).filename().string()});
      continue;
    }
    std::vector<TargetFile> found;
    std::size_t modules = 0;
    const std::filesystem::path root(arg);
    for (std::filesystem::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string path = it->path().string();
      if (!it->is_regular_file(ec)) continue;
      if (is_module_file(path))
        ++modules;
      else if (is_archive_path(path) || looks_like_btf(path))
        found.push_back({path, it->path().lexically_relative(root).string()});
    }
    if (ec) fail(arg, "cannot list directory: {}", ec.message());
    if (found.empty() && modules)
      fail(arg, "holds {} kernel modules and no kernel: name the kernel with --btf VMLINUX and its modules with --modules {}",
           modules, esc(arg));
    if (found.empty()) fail(arg, "directory holds no BTF files (raw BTF, ELF with .BTF, or .tar.xz archives of them)");
    std::sort(found.begin(), found.end(), [](const TargetFile& a, const TargetFile& b) { return a.path < b.path; });
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

void for_each_archive_btf(const std::string& path, const std::shared_ptr<const Btf>& base,
                          const std::function<void(const std::string& member, std::shared_ptr<const Btf> btf)>& fn) {
  std::size_t members = 0;
  for_each_archive_member(path, [&](const std::string& member, std::shared_ptr<const std::vector<std::uint8_t>> bytes) {
    const std::span<const std::uint8_t> span(*bytes);
    if (span.size() < 2 || !((span[0] == 0x9f && span[1] == 0xeb) || (span[0] == 0xeb && span[1] == 0x9f))) return;
    ++members;
    fn(member, Btf::parse(path + ":" + member, bytes, span, base));
  });
  if (members == 0) fail(path, "archive holds no raw BTF files");
}

}  // namespace btfslim
