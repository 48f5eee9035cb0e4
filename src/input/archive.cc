// Reading BTF files out of archives with libarchive: btfhub ships one `.btf.tar.xz` per kernel.
//
// Members are read into memory one at a time and handed to the caller, which parses and drops each
// before the next: a tree of thousands of kernels costs the memory of one. A member larger than
// kMaxMemberBytes, or an archive libarchive cannot read, is an InputError naming the archive (and the
// member): a hostile archive cannot make us inflate without bound.
#include "btfslim/archive.h"
#include "btfslim/error.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <array>
#include <memory>

namespace btfslim {
namespace {

constexpr std::uint64_t kMaxMemberBytes = std::uint64_t{1} << 30;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

bool is_archive_path(std::string_view path) {
  static constexpr std::array<std::string_view, 9> kSuffixes = {
      ".tar", ".tar.xz", ".txz", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.zst", ".tzst"};
  return std::any_of(kSuffixes.begin(), kSuffixes.end(), [&](std::string_view s) { return ends_with(path, s); });
}

void for_each_archive_member(const std::string& path,
                             const std::function<void(const std::string& member, std::shared_ptr<const std::vector<std::uint8_t>> bytes)>& fn) {
  std::unique_ptr<struct archive, int (*)(struct archive*)> a(archive_read_new(), archive_read_free);
  if (!a) fail(path, "out of memory opening the archive");
  archive_read_support_filter_all(a.get());
  archive_read_support_format_tar(a.get());
  if (archive_read_open_filename(a.get(), path.c_str(), 1 << 16) != ARCHIVE_OK)
    fail(path, "cannot read archive: {}", archive_error_string(a.get()) ? archive_error_string(a.get()) : "unknown error");
  struct archive_entry* entry = nullptr;
  for (;;) {
    const int r = archive_read_next_header(a.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
      fail(path, "corrupt archive: {}", archive_error_string(a.get()) ? archive_error_string(a.get()) : "unknown error");
    if (archive_entry_filetype(entry) != AE_IFREG) continue;
    const char* name = archive_entry_pathname(entry);
    const std::string member = name ? name : "(unnamed)";
    const la_int64_t declared = archive_entry_size_is_set(entry) ? archive_entry_size(entry) : 0;
    if (declared < 0 || static_cast<std::uint64_t>(declared) > kMaxMemberBytes)
      fail(path, "member {} declares {} bytes (at most {} are read)", member, declared, kMaxMemberBytes);
    auto bytes = std::make_shared<std::vector<std::uint8_t>>();
    bytes->reserve(static_cast<std::size_t>(declared));
    std::array<std::uint8_t, 1 << 16> chunk;
    for (;;) {
      const la_ssize_t n = archive_read_data(a.get(), chunk.data(), chunk.size());
      if (n == 0) break;
      if (n < 0)
        fail(path, "member {}: {}", member, archive_error_string(a.get()) ? archive_error_string(a.get()) : "read error");
      if (bytes->size() + static_cast<std::size_t>(n) > kMaxMemberBytes)
        fail(path, "member {} inflates past {} bytes", member, kMaxMemberBytes);
      bytes->insert(bytes->end(), chunk.begin(), chunk.begin() + n);
    }
    fn(member, std::move(bytes));
  }
}

}  // namespace btfslim
