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

}  // namespace btfslim
