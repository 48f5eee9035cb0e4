#include "libbpf_oracle.h"

#include "process.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <catch2/catch.hpp>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <tuple>

namespace btfslim::test {

BtfPtr parse_btf(const std::string& path, struct btf* base) {
  errno = 0;
  BtfPtr b(btf__parse_split(path.c_str(), base));
  INFO("libbpf's btf__parse_split(" << path << "): " << std::strerror(errno));
  REQUIRE(b != nullptr);
  return b;
}
namespace {

// Where the print callback appends; libbpf's print hook is process-wide, and tests run on one thread.
std::string* capture = nullptr;

int capture_print(enum libbpf_print_level, const char* format, va_list args) {
  if (!capture) return 0;
  va_list copy;
  va_copy(copy, args);
  char small[1024];
  const int n = std::vsnprintf(small, sizeof small, format, copy);
  va_end(copy);
  if (n < 0) return 0;
  if (static_cast<std::size_t>(n) < sizeof small) {
    capture->append(small, static_cast<std::size_t>(n));
  } else {
    std::string big(static_cast<std::size_t>(n) + 1, '\0');
    std::vsnprintf(big.data(), big.size(), format, args);
    big.resize(static_cast<std::size_t>(n));
    capture->append(big);
  }
  return n;
}

int silent_print(enum libbpf_print_level, const char*, va_list) { return 0; }

// Installs a print callback for its lifetime and puts the previous one back.
class PrintHook {
 public:
  PrintHook(libbpf_print_fn_t fn, std::string* sink) : previous_(libbpf_set_print(fn)) { capture = sink; }
  ~PrintHook() {
    capture = nullptr;
    libbpf_set_print(previous_);
  }
  PrintHook(const PrintHook&) = delete;
  PrintHook& operator=(const PrintHook&) = delete;

 private:
  libbpf_print_fn_t previous_;
};

// ---- small parsing helpers over string_view ----

bool eat(std::string_view& s, std::string_view prefix) {
  if (s.substr(0, prefix.size()) != prefix) return false;
  s.remove_prefix(prefix.size());
  return true;
}

template <typename Int>
bool eat_number(std::string_view& s, Int& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || end == s.data()) return false;
  s.remove_prefix(static_cast<std::size_t>(end - s.data()));
  return true;
}

// "prog 'P': relo #R: rest" -> P, R, rest.
bool relo_line(std::string_view s, std::string& program, int& relo_idx, std::string_view& rest) {
  if (!eat(s, "prog '")) return false;
  const std::size_t quote = s.find("': ");
  if (quote == std::string_view::npos) return false;
  program = std::string(s.substr(0, quote));
  s.remove_prefix(quote + 3);
  if (!eat(s, "relo #") || !eat_number(s, relo_idx) || !eat(s, ": ")) return false;
  rest = s;
  return true;
}

// "<kind> [id] rest" (a spec as bpf_core_format_spec prints it) -> kind, id.
bool spec_text(std::string_view s, std::string& kind, std::uint32_t& id) {
  if (!eat(s, "<")) return false;
  const std::size_t close = s.find('>');
  if (close == std::string_view::npos) return false;
  kind = std::string(s.substr(0, close));
  s.remove_prefix(close + 1);
  return eat(s, " [") && eat_number(s, id);
}

// What libbpf said about one relocation before its outcome.
struct Pending {
  std::string kind;
  std::uint32_t local_type_id = 0;
  std::string local_spec;
  std::vector<std::uint32_t> matching_targets;
  std::string reason;
};

}  // namespace

const char* outcome_name(LibbpfRelo::Outcome outcome) {
  switch (outcome) {
    case LibbpfRelo::Patched: return "patched";
    case LibbpfRelo::Poisoned: return "poisoned";
    case LibbpfRelo::Failed: return "failed";
  }
  return "?";
}

const LibbpfRelo* LibbpfRelocation::find(const std::string& program, int relo_idx) const {
  for (const LibbpfRelo& r : relocations)
    if (r.program == program && r.relo_idx == relo_idx) return &r;
  return nullptr;
}

void parse_libbpf_log(const std::string& log, LibbpfRelocation& into) {
  std::map<std::pair<std::string, int>, Pending> pending;
  std::map<std::pair<std::string, int>, std::size_t> index;  // -> into.relocations
  std::map<std::string, std::string> program_note;  // a warning that names no relo # (bitfield E2BIG)
  std::string section;  // libbpf relocates one ELF section after the other, announcing each

  // The record of (program, relo), created with what was pending for it.
  auto record = [&](const std::string& program, int relo_idx, LibbpfRelo::Outcome outcome,
                    const std::string& line) -> LibbpfRelo& {
    const auto key = std::make_pair(program, relo_idx);
    if (const auto it = index.find(key); it != index.end()) return into.relocations[it->second];
    LibbpfRelo r;
    r.section = section;
    r.program = program;
    r.relo_idx = relo_idx;
    r.outcome = outcome;
    r.line = line;
    Pending& p = pending[key];
    r.kind = p.kind;
    r.local_type_id = p.local_type_id;
    r.local_spec = p.local_spec;
    r.matching_targets = p.matching_targets;
    r.reason = p.reason;
    if (r.reason.empty() && outcome == LibbpfRelo::Failed) r.reason = program_note[program];
    index[key] = into.relocations.size();
    into.relocations.push_back(std::move(r));
    return into.relocations.back();
  };

  std::istringstream in(log);
  std::string text;
  while (std::getline(in, text)) {
    std::string_view s = text;
    eat(s, "libbpf: ");

    if (eat(s, "sec '")) {
      const std::size_t quote = s.find("': found ");
      int n = 0;
      std::string_view count = s.substr(quote == std::string_view::npos ? s.size() : quote + 9);
      if (quote != std::string_view::npos && eat_number(count, n) && count == " CO-RE relocations") {
        section = std::string(s.substr(0, quote));
        into.section_counts[section] = n;
        into.relocated = true;
      }
      continue;
    }
    if (s.find("failed to perform CO-RE relocations") == 0) {
      into.failed = true;
      into.relocated = true;
      continue;
    }

    std::string program;
    int relo_idx = 0;
    std::string_view rest;
    if (!relo_line(s, program, relo_idx, rest)) {
      // "prog 'P': relo K at insn #I can't be satisfied for bitfield": K is the relocation's kind
      // and I its section-relative instruction, not a relo # (libbpf 1.1.2 prints them so).
      std::string_view t = s;
      if (eat(t, "prog '")) {
        const std::size_t quote = t.find("': relo ");
        if (quote != std::string_view::npos) program_note[std::string(t.substr(0, quote))] = std::string(s);
      }
      continue;
    }
    const std::string line(s);
    Pending& p = pending[{program, relo_idx}];
    std::string_view r = rest;

    std::string kind;
    std::uint32_t id = 0;
    if (p.kind.empty() && spec_text(rest, kind, id)) {
      p.kind = kind;
      p.local_type_id = id;
      p.local_spec = std::string(rest.substr(rest.find('[')));
    } else if (eat(r, "matching candidate #")) {
      int candidate = 0;
      if (eat_number(r, candidate) && eat(r, " ") && spec_text(r, kind, id)) p.matching_targets.push_back(id);
    } else if (eat(r, "non-matching candidate #")) {
      // a target of the right name that does not fit
    } else if (eat(r, "patched insn #")) {
      int insn = 0;
      eat_number(r, insn);
      const bool ldx = eat(r, " (LDX/ST/STX) ");
      if (ldx && eat(r, "mem_sz ")) {
        std::uint32_t from = 0, to = 0;
        if (eat_number(r, from) && eat(r, " -> ") && eat_number(r, to))
          record(program, relo_idx, LibbpfRelo::Patched, line).mem_size = to;
        continue;
      }
      const bool form = ldx ? eat(r, "off ")
                            : (eat(r, " (ALU/ALU64) imm ") || eat(r, " (LDIMM64) imm64 "));
      std::uint64_t from = 0, to = 0;
      if (!form || !eat_number(r, from) || !eat(r, " -> ") || !eat_number(r, to)) continue;
      LibbpfRelo& rec = record(program, relo_idx, LibbpfRelo::Patched, line);
      rec.insn_idx = insn;
      rec.value = to;
    } else if (eat(r, "substituting insn #")) {
      // ldimm64 is poisoned in both halves, the second (#I+1) first: keep the lower index.
      int insn = 0;
      if (!eat_number(r, insn)) continue;
      LibbpfRelo& rec = record(program, relo_idx, LibbpfRelo::Poisoned, line);
      if (rec.insn_idx < 0 || insn < rec.insn_idx) {
        rec.insn_idx = insn;
        rec.line = line;
      }
    } else if (eat(r, "failed to relocate: ")) {
      int err = 0;
      eat_number(r, err);
      LibbpfRelo& rec = record(program, relo_idx, LibbpfRelo::Failed, line);
      rec.outcome = LibbpfRelo::Failed;
      rec.error = err;
      rec.line = line;
      into.failed = true;
    } else if (eat(r, "failed to patch insn #")) {
      int insn = 0, err = 0;
      eat_number(r, insn);
      eat(r, ": ");
      eat_number(r, err);
      LibbpfRelo& rec = record(program, relo_idx, LibbpfRelo::Failed, line);
      rec.outcome = LibbpfRelo::Failed;
      rec.insn_idx = insn;
      rec.error = err;
      rec.line = line;
      into.failed = true;
    } else {
      // "no matching targets found", "field offset ambiguity: ...", "... accesses field incorrectly",
      // "target candidate search failed ...": the latest explains the outcome.
      p.reason = std::string(rest);
    }
  }
  if (!into.relocations.empty()) into.relocated = true;
}

std::string bpf_unavailable_reason() {
  // The smallest program there is (r0 = 0; exit), loaded as a socket filter: what any bpf_object__load
  // needs before it relocates anything.
  static const std::string reason = [] {
    PrintHook hook(silent_print, nullptr);
    const bpf_insn insns[] = {
        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .src_reg = 0, .off = 0, .imm = 0},
        {.code = BPF_JMP | BPF_EXIT, .dst_reg = 0, .src_reg = 0, .off = 0, .imm = 0},
    };
    const int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, nullptr, "GPL", insns, 2, nullptr);
    if (fd >= 0) {
      close(fd);
      return std::string();
    }
    const int err = errno;
    return "this process may not load BPF programs (bpf(BPF_PROG_LOAD): " + std::string(std::strerror(err)) +
           "), and libbpf relocates CO-RE only inside bpf_object__load";
  }();
  return reason;
}

const LibbpfRelocation& libbpf_relocate(const std::string& object, const std::string& target_btf,
                                        const std::vector<std::string>& only_programs) {
  static std::map<std::tuple<std::string, std::string, std::vector<std::string>>, LibbpfRelocation> cache;
  const auto key = std::make_tuple(object, target_btf, only_programs);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;

  LibbpfRelocation result;
  result.unavailable_reason = bpf_unavailable_reason();
  if (!result.unavailable_reason.empty()) {
    result.available = false;
    return cache[key] = result;
  }

  std::string log;
  {
    PrintHook hook(capture_print, &log);
    LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = target_btf.c_str());
    bpf_object* obj = bpf_object__open_file(object.c_str(), &opts);
    if (!obj) {
      const int err = errno;
      throw std::runtime_error("libbpf cannot open " + object + " (" + std::strerror(err) + "):\n" + log);
    }
    result.opened = true;
    bpf_program* prog;
    bpf_object__for_each_program(prog, obj) {
      const std::string name = bpf_program__name(prog);
      result.programs.push_back(name);
      if (!only_programs.empty())
        bpf_program__set_autoload(prog, std::find(only_programs.begin(), only_programs.end(), name) !=
                                            only_programs.end());
    }
    result.load_error = bpf_object__load(obj);
    bpf_object__close(obj);
  }
  result.log = std::move(log);
  parse_libbpf_log(result.log, result);
  return cache[key] = std::move(result);
}

std::vector<std::string> core_corpus_objects(bool big_endian) {
  std::vector<std::string> out;
  for (const char* name : {"core_fields", "core_bitfields", "core_types", "core_enums", "core_errors"})
    out.push_back(build_data_dir() + "/" + name + (big_endian ? ".bpfeb.o" : ".bpf.o"));
  return out;
}

std::vector<std::string> core_corpus_targets() {
  std::vector<std::string> out;
  for (const char* name : {"moved", "missing", "errors", "moved.clang"})
    out.push_back(build_data_dir() + "/core_target_" + name + ".o");
  return out;
}

std::vector<std::string> trace_objects() {
  std::vector<std::string> out;
  const char* names = std::getenv("BTFSLIM_TEST_TRACE_OBJECTS");
  std::istringstream in(names ? names : "");
  std::string name;
  while (std::getline(in, name, ':'))
    if (!name.empty()) out.push_back(build_data_dir() + "/" + name + ".bpf.o");
  return out;
}

}  // namespace btfslim::test
