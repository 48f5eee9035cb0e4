// Writing the archives btfhub packs kernels' BTF in, for the tests that read them.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace btfslim::test {

// Writes a tar archive at `path` (xz-compressed when `xz`) holding `members` {name, bytes}, as btfhub
// packs each kernel's BTF.
void write_archive(const std::string& path, const std::vector<std::pair<std::string, std::string>>& members, bool xz);

}  // namespace btfslim::test
