// `btfslim minimize --kernel`: shared between the minimize command and its kernel mode.
#pragma once

#include "btfslim/core.h"

#include <string>
#include <vector>

namespace btfslim::cli {

struct KernelMinimizeArgs {
  std::string kernel;  // --kernel VMLINUX
  std::string output;  // -o: the patched image
  std::string btf_out;  // --btf-out: the slim raw .BTF, for a kernel build's link
  std::string modules;  // --modules DIR: rewrite its .ko files for the slim kernel; -o is then a directory
  std::string keep_for_modules;  // --keep-for-modules DIR: keep what its modules refer to, whole
  std::vector<std::string> objects;
  std::vector<std::string> keep;
  std::vector<std::string> explain;
  std::vector<std::string> families;
  std::vector<std::string> attach_targets;
  bool no_verify = false;
};

void run_minimize_kernel(const KernelMinimizeArgs& args);

// Whether `output` ("" and "-" are no file) is the existing file `input`, however spelt: the same device
// and inode.
bool same_file(const std::string& output, const std::string& input);

// "OBJECT PROGRAM insn #N: KIND ACCESS (SPEC)": where a relocation is, for reports.
std::string relocation_site(const BpfObject& obj, const CoreRelocation& r);

}  // namespace btfslim::cli
