// libbpf 1.1.2 as the oracle for CO-RE relocation: what it patches, poisons or refuses, read from its
// own debug log.
//
// libbpf exports no CO-RE calculation, but it logs every result while bpf_object__load relocates an
// object against a target BTF (bpf_object_open_opts.btf_custom_path). Relocation runs inside the load,
// after the object's maps are created and before any program goes to the verifier, so the log holds
// the relocations even when the kernel then rejects a program. That needs bpf(): where it is not
// permitted the result says "unavailable" and tests skip visibly.
//
// The lines parsed (libbpf 1.1.2, src/relo_core.c and src/libbpf.c; all prefixed "libbpf: "):
//   prog 'P': relo #R: <kind> [id] struct s.f (0:1 @ offset 4)             the local spec
//   prog 'P': relo #R: matching candidate #C <kind> [id] ...               a target that matched
//   prog 'P': relo #R: patched insn #I (LDX/ST/STX) off A -> B             also (ALU/ALU64) imm A -> B
//   prog 'P': relo #R: patched insn #I (LDIMM64) imm64 A -> B                and (LDX/ST/STX) mem_sz A -> B
//   prog 'P': relo #R: substituting insn #I w/ invalid insn                poisoned (twice for ldimm64)
//   prog 'P': relo #R: failed to relocate: E                               libbpf stops the object here
//   prog 'P': relo #R: failed to patch insn #I: E                          likewise
//   sec 'S': found N CO-RE relocations                                     before the section's records
// R counts the records of the relocation's ELF section (.BTF.ext order); I counts instructions from
// the start of the program (or subprogram) P that holds the instruction.
#pragma once

#include <bpf/btf.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace btfslim::test {

class TempDir;

// A libbpf BTF object, freed with btf__free.
struct BtfFree {
  void operator()(struct btf* b) const { btf__free(b); }
};
using BtfPtr = std::unique_ptr<struct btf, BtfFree>;
// libbpf's own reading of `path` (raw BTF, or an ELF's .BTF), split on `base` when given; the test
// fails when libbpf cannot read it.
BtfPtr parse_btf(const std::string& path, struct btf* base = nullptr);
// A raw BTF that `build` makes with btf__add_* on an empty one, written to `dir`/`name`; its path.
std::string write_btf(const TempDir& dir, const std::string& name, const std::function<void(struct btf*)>& build);

struct LibbpfRelo {
  enum Outcome { Patched, Poisoned, Failed };

  std::string section;  // the ELF section whose .BTF.ext records hold it
  std::string program;
  int relo_idx = -1;
  int insn_idx = -1;  // -1 when libbpf names no instruction (failed to relocate)
  Outcome outcome = Failed;
  std::uint64_t value = 0;  // Patched: the new value B of "A -> B"
  std::string line;         // the line that decided the outcome

  // From the lines before it, when libbpf printed them.
  std::string kind;                           // libbpf's name: byte_off, enumval_value, ...
  std::uint32_t local_type_id = 0;
  std::string local_spec;                     // "[id] struct s.f (0:1 @ offset 4)"
  std::vector<std::uint32_t> matching_targets;  // target type ids of the matching candidates
  std::uint32_t mem_size = 0;                 // Patched LDX/ST/STX whose access size changed: the new one
  int error = 0;                              // Failed: libbpf's error (negative errno)
  std::string reason;                         // Failed or Poisoned: libbpf's warning before the outcome
};

const char* outcome_name(LibbpfRelo::Outcome outcome);

struct LibbpfRelocation {
  bool available = true;           // false when this process may not use bpf(): tests skip
  std::string unavailable_reason;
  bool opened = false;             // bpf_object__open_file succeeded
  int open_error = 0;              // errno when it did not
  bool relocated = false;          // libbpf reached its CO-RE pass (it printed a "found N" line or a result)
  bool failed = false;             // a relocation failed and libbpf stopped relocating the object
  int load_error = 0;              // bpf_object__load's result (programs the verifier rejects make it < 0)
  std::vector<LibbpfRelo> relocations;  // in the order libbpf processed them
  std::map<std::string, int> section_counts;  // ELF section -> number of CO-RE records libbpf found
  std::vector<std::string> programs;  // the object's entry programs (libbpf's names)
  std::string log;                 // everything libbpf printed, for diagnostics

  const LibbpfRelo* find(const std::string& program, int relo_idx) const;
};

// Opens `object` with `target_btf` as the target of its CO-RE relocations (a raw BTF file or an ELF
// with .BTF, anything btf__parse reads), loads it and parses what libbpf logged. With `only_programs`
// the other entry programs are not loaded (autoload off), and libbpf skips their relocations; the
// relocations of subprograms in .text are always done. Beware that libbpf's candidate cache lives for
// one load: the first relocation of a local type drops the candidates that do not match it for every
// later one, so a partial load can differ from a whole one where programs share local types. Runs once
// per distinct argument set per process. Throws only when libbpf cannot even open the object.
const LibbpfRelocation& libbpf_relocate(const std::string& object, const std::string& target_btf,
                                        const std::vector<std::string>& only_programs = {});

// The same, each time anew (nothing cached, nothing thrown: `opened` says whether libbpf took the
// object), for inputs that live one call: the fuzz targets'. With `relocation_only`, no program goes to
// the verifier (each is given a type no kernel loads, which libbpf's relocation does not look at): the
// relocations are logged as on a real load, and load_error says nothing.
LibbpfRelocation run_libbpf_relocation(const std::string& object, const std::string& target_btf,
                                       const std::vector<std::string>& only_programs = {},
                                       bool relocation_only = false);

// Where btfslim check's JSON record `ours` of a relocation (an element of "relocations", with its one
// "results" entry folded in, as object_on_kernel gives it) differs from what libbpf did with it:
//   patched -> "status" "ok" and "value" libbpf's new value; poisoned -> "poisoned"; failed ->
//   "ambiguous" or "error"; and the same section, kind, local type id, instruction index and matching
//   target ids. "" when they agree, else libbpf's outcome beside ours and what differs, over lines.
std::string relocation_difference(const LibbpfRelo& theirs, const nlohmann::json& ours);
// libbpf's outcome in a few words: "patched insn #5 -> 8", "failed (-22): reason".
std::string describe_libbpf(const LibbpfRelo& x);

// The parser on its own, for logs captured elsewhere.
void parse_libbpf_log(const std::string& log, LibbpfRelocation& into);

// What libbpf prints, appended to `into` while this lives (debug lines too, unless `debug` is false); the
// hook it replaced is put back after.
class LibbpfPrint {
 public:
  explicit LibbpfPrint(std::string* into, bool debug = true);
  ~LibbpfPrint();
  LibbpfPrint(const LibbpfPrint&) = delete;
  LibbpfPrint& operator=(const LibbpfPrint&) = delete;

 private:
  struct Hook;
  std::unique_ptr<Hook> hook_;
};

// "" when this process may load BPF programs, else why not.
std::string bpf_unavailable_reason();

// The CO-RE corpus tests/meson.build builds (paths in the build directory): the core_*.bpf.o objects,
// (core_*.bpfeb.o: the same, big-endian), the target BTFs they relocate against
// (tests/data/core_target_*.c), and the trace_*.bpf.o objects for the running kernel (none when the
// build had no /sys/kernel/btf/vmlinux).
std::vector<std::string> core_corpus_objects(bool big_endian = false);
std::vector<std::string> core_corpus_targets();
std::vector<std::string> trace_objects();

}  // namespace btfslim::test
