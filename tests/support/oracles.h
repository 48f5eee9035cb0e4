// Running the oracles (bpftool) and btfslim for their output, failing the test when either fails.
#pragma once

#include "process.h"

#include <string>
#include <vector>

namespace btfslim::test {

// bpftool is an oracle that the project's setup installs: without it tests fail, never skip. Looks on
// PATH, then in the sbin directories a non-root PATH may lack. "" when absent.
std::string bpftool_program();
// bpftool's stdout for these arguments (it must succeed); each distinct run is made once per process.
std::string bpftool(const std::vector<std::string>& args);
// btfslim's stdout; it must succeed and print nothing on stderr.
std::string ours(const std::vector<std::string>& args);

// The host C compiler (cc or gcc), or "" when there is none.
std::string c_compiler();
// A .ko-style object in `dir`: tests/data/kmod_types.c with DWARF turned into BTF split on `vmlinux`
// (pahole -J --btf_base), and a section named `module_section` (.modinfo or .gnu.linkonce.this_module)
// that marks a kernel module. With an empty `module_section`, the same object without any marker.
std::string build_module(const TempDir& dir, const std::string& vmlinux, const std::string& module_section);

}  // namespace btfslim::test
