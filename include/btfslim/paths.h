// Showing files by the shortest suffix of their path that tells them apart.
//
// A table that names 171 objects by their full paths spends its width on the directories they share.
// Each file is shown instead by its last path components, as few as make it unique among the files
// shown together: biolatency.bpf.o when only one file has that name, libbpf-tools/runqlat.bpf.o and
// tools/runqlat.bpf.o when two do. A path that is itself a suffix of another (a/b.o beside x/a/b.o) has
// no unique suffix and is shown whole; a path given twice is shown the same both times. Suffixes start after a '/', so that a
// name is never cut in the middle.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace btfslim {

// For each of `paths`, in order, its shortest unique suffix: a view into that path.
std::vector<std::string_view> shortest_unique_suffixes(std::span<const std::string> paths);

// Kernels are named by their release where their file names hold one, as btfhub's and the distributions'
// do: 6.1.0-57-amd64 for .../6.1.0-57-amd64.btf (compressed or not), an archive member
// .../6.1.0-57-amd64.btf.tar.xz:6.1.0-57-amd64.btf, or .../vmlinux-6.1.0-57-amd64. A release starts with
// a digit and holds a '.'; "" where the last component has none (vmlinux, core_target_moved.o). The
// running kernel's /sys/kernel/btf/vmlinux is named by its release (uname -r).
std::string_view kernel_release(std::string_view target);

// For each of `targets` (kernels, in column order), the name a table shows: its release where no other
// kernel has that release; the shortest unique suffix of its path with the release in place of the file
// name where another does (20.04/x86_64/5.4.0-1009-aws beside 18.04/x86_64/5.4.0-1009-aws); the
// shortest unique suffix of the path itself where it has no release, or where two inputs would have the
// same name so (6.1.0-57.btf beside 6.1.0-57.btf.xz). Not escaped.
std::vector<std::string> kernel_short_names(std::span<const std::string> targets);

}  // namespace btfslim
