// Reading BTF files out of archives with libarchive: btfhub ships one `.btf.tar.xz` per kernel.
//
// Members are read into memory one at a time and handed to the caller, which parses and drops each
// before the next: a tree of thousands of kernels costs the memory of one. A member larger than
// kMaxMemberBytes, or an archive libarchive cannot read, is an InputError naming the archive (and the
// member): a hostile archive cannot make us inflate without bound.
//
// libarchive is opened with dlopen on the first archive, not linked: it brings a dozen libraries
// (libxml2, ICU, nettle, every compressor) whose loading and relocation would cost every run of every
// command several milliseconds, a third of a whole `btfslim check`.
#include "btfslim/archive.h"
#include "btfslim/error.h"

#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>

namespace btfslim {
namespace {

constexpr std::uint64_t kMaxMemberBytes = std::uint64_t{1} << 30;

// The libarchive functions used, resolved from the shared library on first use.
struct Libarchive {
  decltype(&archive_read_new) read_new;
  decltype(&archive_read_free) read_free;
  decltype(&archive_read_support_filter_all) support_filter_all;
  decltype(&archive_read_support_format_tar) support_format_tar;
  decltype(&archive_read_open_filename) open_filename;
  decltype(&archive_error_string) error_string;
  decltype(&archive_read_next_header) next_header;
  decltype(&archive_read_data) read_data;
  decltype(&archive_entry_filetype) entry_filetype;
  decltype(&archive_entry_pathname) entry_pathname;
  decltype(&archive_entry_size_is_set) entry_size_is_set;
  decltype(&archive_entry_size) entry_size;
};

const Libarchive& libarchive(const std::string& path) {
  static Libarchive lib;
  static std::string problem;
  static std::once_flag once;
  std::call_once(once, [] {
    void* handle = ::dlopen(BTFSLIM_LIBARCHIVE_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      problem = fmt::format("reading archives needs {} (Debian: libarchive13): {}", BTFSLIM_LIBARCHIVE_SONAME,
                            ::dlerror());
      return;
    }
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(handle, name));
      if (!fn && problem.empty()) problem = fmt::format("{} has no {}", BTFSLIM_LIBARCHIVE_SONAME, name);
    };
    get(lib.read_new, "archive_read_new");
    get(lib.read_free, "archive_read_free");
    get(lib.support_filter_all, "archive_read_support_filter_all");
    get(lib.support_format_tar, "archive_read_support_format_tar");
    get(lib.open_filename, "archive_read_open_filename");
    get(lib.error_string, "archive_error_string");
    get(lib.next_header, "archive_read_next_header");
    get(lib.read_data, "archive_read_data");
    get(lib.entry_filetype, "archive_entry_filetype");
    get(lib.entry_pathname, "archive_entry_pathname");
    get(lib.entry_size_is_set, "archive_entry_size_is_set");
    get(lib.entry_size, "archive_entry_size");
  });
  if (!problem.empty()) fail(path, "{}", problem);
  return lib;
}

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
  const Libarchive& lib = libarchive(path);
  std::unique_ptr<struct archive, int (*)(struct archive*)> a(lib.read_new(), lib.read_free);
  if (!a) fail(path, "out of memory opening the archive");
  auto error = [&](const char* otherwise) {
    const char* e = lib.error_string(a.get());
    return e ? e : otherwise;
  };
  lib.support_filter_all(a.get());
  lib.support_format_tar(a.get());
  if (lib.open_filename(a.get(), path.c_str(), 1 << 16) != ARCHIVE_OK)
    fail(path, "cannot read archive: {}", error("unknown error"));
  struct archive_entry* entry = nullptr;
  for (;;) {
    const int r = lib.next_header(a.get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) fail(path, "corrupt archive: {}", error("unknown error"));
    if (lib.entry_filetype(entry) != AE_IFREG) continue;
    const char* name = lib.entry_pathname(entry);
    const std::string member = name ? name : "(unnamed)";
    const la_int64_t declared = lib.entry_size_is_set(entry) ? lib.entry_size(entry) : 0;
    if (declared < 0 || static_cast<std::uint64_t>(declared) > kMaxMemberBytes)
      fail(path, "member {} declares {} bytes (at most {} are read)", esc(member), declared, kMaxMemberBytes);
    auto bytes = std::make_shared<std::vector<std::uint8_t>>();
    bytes->reserve(static_cast<std::size_t>(declared));
    std::array<std::uint8_t, 1 << 16> chunk;
    for (;;) {
      const la_ssize_t n = lib.read_data(a.get(), chunk.data(), chunk.size());
      if (n == 0) break;
      if (n < 0) fail(path, "member {}: {}", esc(member), error("read error"));
      if (bytes->size() + static_cast<std::size_t>(n) > kMaxMemberBytes)
        fail(path, "member {} inflates past {} bytes", esc(member), kMaxMemberBytes);
      bytes->insert(bytes->end(), chunk.begin(), chunk.begin() + n);
    }
    fn(member, std::move(bytes));
  }
}

}  // namespace btfslim
