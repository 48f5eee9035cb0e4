// The running kernel as the oracle for "does this object load?": libbpf opens the object (with a test
// target BTF as btf_custom_path, or the running kernel's own BTF), relocates it and hands each
// program to the verifier, which rejects a poisoned instruction only where a path reaches it.
//
// Each program is loaded on its own (autoload off for the others), so that one program's failure does
// not hide another's verdict. What the loader alone would fix is neutralised, so that only BTF
// decides: pin paths are cleared, maps of 0 entries (sized at run time by Go loaders) get some, and
// programs in sections libbpf has no type for get one from the section's name. Each failure is
// classified from libbpf's log: a poisoned instruction reached ("invalid func unknown#195896080"), a
// CO-RE relocation that failed, or something else (an attach target, a kfunc, a map): only the first
// two are CO-RE verdicts.
#pragma once

#include <string>
#include <vector>

namespace btfslim::test {

struct ProgramLoad {
  enum Outcome {
    Loaded,
    Poisoned,   // the verifier reached a poisoned instruction
    CoreFailed, // libbpf failed a CO-RE relocation (ambiguous, an error): no program of the object loads
    Other,      // failed for a reason that is not CO-RE (attach target, kfunc, map, verifier, ...)
  };
  std::string name;
  std::string section;
  Outcome outcome = Loaded;
  std::string reason;  // for Other: the line of libbpf's log that says why
  std::string log;     // everything libbpf and the verifier said
};

struct ObjectLoad {
  bool available = true;  // false where this process may not load BPF: tests skip
  std::string unavailable_reason;
  bool opened = false;    // false: libbpf cannot open the object (legacy 'maps' section, ...)
  std::string open_error;
  std::vector<ProgramLoad> programs;
};

const char* outcome_name(ProgramLoad::Outcome outcome);

// Loads every program of `object` on the running kernel, one at a time, relocated against
// `target_btf` ("" for the running kernel's BTF and its modules). Cached per argument pair.
const ObjectLoad& kernel_load(const std::string& object, const std::string& target_btf);

}  // namespace btfslim::test
