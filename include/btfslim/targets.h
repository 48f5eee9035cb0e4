// What a `--btf` list names, expanded to the kernels in it: files named, the BTF files and archives found
// under directories named (a btfhub tree), and the raw BTF members of archives. `check` and `minimize`
// walk the same way, so that one tree means the same kernels to both.
#pragma once

#include "btfslim/btf.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace btfslim {

// A file a `--btf` argument named or led to.
struct TargetFile {
  std::string path;      // as it is opened (or a shorthand such as "vmlinux", for a file argument)
  std::string relative;  // below the directory argument it was found in; for a file argument, its file name
};

// Whether a file starts like BTF (either byte order) or ELF: what a directory walk takes as a target.
bool looks_like_btf(const std::string& path);

// The files named, and the BTF files and archives under each directory named (sorted by path within
// it), in argument order. Throws InputError for a directory that cannot be listed or holds none.
std::vector<TargetFile> expand_target_files(const std::vector<std::string>& given);

// Calls fn(member, btf) for each raw BTF member of the archive at `path`, in archive order, one at a
// time; the BTF is named "path:member" and continues `base` when given. Other members are passed over.
// Throws InputError for an archive that cannot be read, holds no raw BTF, or a member that is not valid
// BTF (members before it have been handed over).
void for_each_archive_btf(const std::string& path, const std::shared_ptr<const Btf>& base,
                          const std::function<void(const std::string& member, std::shared_ptr<const Btf> btf)>& fn);

}  // namespace btfslim
