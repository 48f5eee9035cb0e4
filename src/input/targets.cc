// Expanding a `--btf` list to kernels: directory walks and the raw BTF members of archives.
//
// A walk takes what starts like BTF or ELF and what is named like a tar archive, and sorts it, so that
// the same tree gives the same list, in the same order, on every machine (minimize --shard relies on it).
#include "btfslim/targets.h"

#include "btfslim/archive.h"
#include "btfslim/error.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace btfslim {

bool looks_like_btf(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  unsigned char m[4] = {};
  if (!f.read(reinterpret_cast<char*>(m), sizeof m)) return false;
  return (m[0] == 0x9f && m[1] == 0xeb) || (m[0] == 0xeb && m[1] == 0x9f) ||
         (m[0] == 0x7f && m[1] == 'E' && m[2] == 'L' && m[3] == 'F');
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
    const std::filesystem::path root(arg);
    for (std::filesystem::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string path = it->path().string();
      if (it->is_regular_file(ec) && (is_archive_path(path) || looks_like_btf(path)))
        found.push_back({path, it->path().lexically_relative(root).string()});
    }
    if (ec) fail(arg, "cannot list directory: {}", ec.message());
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
