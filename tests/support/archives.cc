#include "archives.h"

#include <archive.h>
#include <archive_entry.h>
#include <catch2/catch.hpp>

#include <memory>

namespace btfslim::test {

void write_archive(const std::string& path, const std::vector<std::pair<std::string, std::string>>& members, bool xz) {
  std::unique_ptr<struct archive, int (*)(struct archive*)> a(archive_write_new(), archive_write_free);
  REQUIRE(a);
  if (xz) REQUIRE(archive_write_add_filter_xz(a.get()) == ARCHIVE_OK);
  REQUIRE(archive_write_set_format_pax_restricted(a.get()) == ARCHIVE_OK);
  REQUIRE(archive_write_open_filename(a.get(), path.c_str()) == ARCHIVE_OK);
  for (const auto& [name, bytes] : members) {
    std::unique_ptr<struct archive_entry, void (*)(struct archive_entry*)> e(archive_entry_new(), archive_entry_free);
    archive_entry_set_pathname(e.get(), name.c_str());
    archive_entry_set_size(e.get(), static_cast<la_int64_t>(bytes.size()));
    archive_entry_set_filetype(e.get(), AE_IFREG);
    archive_entry_set_perm(e.get(), 0644);
    REQUIRE(archive_write_header(a.get(), e.get()) == ARCHIVE_OK);
    REQUIRE(archive_write_data(a.get(), bytes.data(), bytes.size()) == static_cast<la_ssize_t>(bytes.size()));
  }
  REQUIRE(archive_write_close(a.get()) == ARCHIVE_OK);
}

}  // namespace btfslim::test
