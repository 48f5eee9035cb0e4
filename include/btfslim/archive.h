// BTF files inside archives (btfhub's .btf.tar.xz), read with libarchive.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace btfslim {

// Whether a path names a tar archive (plain or compressed: .tar, .tar.xz, .tar.gz, .tar.bz2, .tar.zst...).
bool is_archive_path(std::string_view path);

// Calls fn(member name, bytes) for each regular file in the archive, in archive order, one at a time.
// Throws InputError naming the archive for what cannot be read.
void for_each_archive_member(
    const std::string& path,
    const std::function<void(const std::string& member, std::shared_ptr<const std::vector<std::uint8_t>> bytes)>& fn);

}  // namespace btfslim
