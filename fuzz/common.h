// What every fuzz target shares: reading a parsed BTF the way the commands do, and inputs as files.
//
// The contract under test: whatever bytes come in, btfslim either says what is wrong (an InputError,
// which the targets catch as the expected outcome) or hands back a model that every reader can walk.
// Anything else - another exception, a sanitizer report, a hang, a huge allocation - is a finding, so
// nothing but InputError is caught here.
#pragma once

#include "btfslim/btf.h"
#include "btfslim/error.h"
#include "btfslim/output.h"

#include <memory>

#include <cstddef>
#include <initializer_list>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace btfslim::fuzz {

// Reads `btf` as `dump` and `measure` do: raw and JSON dumps, every name, every type summary, the file
// footprint, the full Footprint (graph, dominators, retained bytes) and the measure report as table
// and JSON, into /dev/null. With `c`, also `dump -f c`: check_c_printable first (inside dump_c), and
// libbpf's btf_dump only on what it passes, which is the contract `dump -f c` relies on.
void walk(const Btf& btf, bool c);

// The input as a file: a memfd whose /proc/self/fd path the loaders open like any other (mapped, as a
// real file is). Closed when the object goes.
class MemFile {
 public:
  explicit MemFile(std::span<const std::uint8_t> bytes);
  ~MemFile();
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

// What btfslim prints, checked: everything written to `out()` must be text (valid UTF-8, no control
// byte but line feed and tab, no invisible code point: tests/support/text.h's not_text), whatever names
// the input holds. check() reads back what was written since the last check, aborts with the offending
// bytes when it is not text, and empties the sink.
class TextSink {
 public:
  TextSink();
  ~TextSink();
  TextSink(const TextSink&) = delete;
  TextSink& operator=(const TextSink&) = delete;
  OutputBuffer& out() { return out_; }
  void check(const char* what) { (void)take(what); }
  // The same, handing back what was written.
  std::string take(const char* what);

 private:
  int fd_;
  OutputBuffer out_;
};

// An InputError is the expected outcome of bad input, when its message is one line of text: anything
// else (a line break, a control byte, ill-formed UTF-8 from a name in the input) is a finding.
void expect_error_line(const InputError& e);

// Where an object template's bytes are mutated: its executable sections, its SHT_REL sections, its
// .BTF.ext, its .BTF.
enum class Region { Code, Rel, Ext, Btf };

// A BPF object the build compiled, mutated in place so that its ELF still opens: the input is XORed
// over the chosen regions' bytes, back to back in the order given (a seed of zeros is the object).
struct ObjectTemplate {
  std::string bytes;
  std::vector<std::pair<std::size_t, std::size_t>> regions;  // (file offset, size), in XOR order
  std::string mutated(std::span<const std::uint8_t> mask) const;
};
ObjectTemplate read_template(const std::string& path, std::initializer_list<Region> order);

// A small CO-RE target built with btf__add_*: a task_struct like minimal.bpf.c's, and a few shapes the
// corpus' roots may meet (a union, bitfields, enums, an array, a typedef, a forward declaration).
std::shared_ptr<const Btf> small_core_target();

// What the CO-RE targets relocate against: small_core_target(), and the corpus' "moved" kernel
// (tests/data/core_target_moved.c as pahole encodes it).
std::vector<std::shared_ptr<const Btf>> core_targets();

}  // namespace btfslim::fuzz
