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

// Whether a file starts like BTF (either byte order) or ELF, or is compressed BTF named so (NAME.btf.xz,
// vmlinux.zst): what a directory walk takes as a target.
bool looks_like_btf(const std::string& path);

// Whether a file is named as a kernel module: NAME.ko, or compressed NAME.ko.xz, .ko.zst, .ko.gz.
bool is_module_file(std::string_view path);
// The name lsmod shows for a module's file or /sys/kernel/btf entry: the last path component without
// ".ko" (and a compression suffix after it), '-' as '_' ("/lib/.../nf-nat.ko.xz" -> "nf_nat").
std::string module_name(std::string_view path);
// The module files under `dir` and its subdirectories, sorted by path. Throws InputError for a directory
// that cannot be listed or holds no module.
std::vector<std::string> module_files(const std::string& dir);
// Module files as the user names them: each file as it is, each directory as every module under it.
std::vector<std::string> module_arguments(const std::vector<std::string>& given);
// The files a modules tree carries for depmod and modprobe at its top (modules.order, modules.builtin,
// modules.dep...): their names, sorted.
std::vector<std::string> module_index_files(const std::string& dir);

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
