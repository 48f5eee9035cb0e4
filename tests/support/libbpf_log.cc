// libbpf 1.1.2's CO-RE log (libbpf_oracle.h): running its relocation and reading what it printed. No
// test framework here: the fuzz targets use it too.
#include "libbpf_oracle.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string_view>

namespace btfslim::test {
namespace {

// Where the print callback appends, and whether debug lines too; libbpf's print hook is process-wide,
// and tests run on one thread.
std::string* capture = nullptr;
bool capture_debug = true;

int capture_print(enum libbpf_print_level level, const char* format, va_list args) {
  if (!capture || (level == LIBBPF_DEBUG && !capture_debug)) return 0;
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
  PrintHook(libbpf_print_fn_t fn, std::string* sink, bool debug = true) : previous_(libbpf_set_print(fn)) {
    capture = sink;
    capture_debug = debug;
  }
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

struct LibbpfPrint::Hook : PrintHook {
  Hook(std::string* into, bool debug) : PrintHook(capture_print, into, debug) {}
};
LibbpfPrint::LibbpfPrint(std::string* into, bool debug) : hook_(std::make_unique<Hook>(into, debug)) {}
LibbpfPrint::~LibbpfPrint() = default;

LibbpfRelocation run_libbpf_relocation(const std::string& object, const std::string& target_btf,
                                       const std::vector<std::string>& only_programs, bool relocation_only) {
  LibbpfRelocation result;
  result.unavailable_reason = bpf_unavailable_reason();
  if (!result.unavailable_reason.empty()) {
    result.available = false;
    return result;
  }

  std::string log;
  {
    PrintHook hook(capture_print, &log);
    LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = target_btf.c_str());
    bpf_object* obj = bpf_object__open_file(object.c_str(), &opts);
    if (obj) {
      result.opened = true;
      bpf_program* prog;
      bpf_object__for_each_program(prog, obj) {
        const std::string name = bpf_program__name(prog);
        result.programs.push_back(name);
        if (!only_programs.empty())
          bpf_program__set_autoload(prog, std::find(only_programs.begin(), only_programs.end(), name) !=
                                              only_programs.end());
        // A type no kernel loads: the first program is refused at once, after libbpf relocated them all.
        if (relocation_only) bpf_program__set_type(prog, BPF_PROG_TYPE_UNSPEC);
      }
      result.load_error = bpf_object__load(obj);
      bpf_object__close(obj);
    } else {
      result.open_error = errno;
    }
  }
  result.log = std::move(log);
  parse_libbpf_log(result.log, result);
  return result;
}

using nlohmann::json;

std::string describe_libbpf(const LibbpfRelo& x) {
  std::ostringstream s;
  s << outcome_name(x.outcome);
  if (x.insn_idx >= 0) s << " insn #" << x.insn_idx;
  if (x.outcome == LibbpfRelo::Patched) s << " -> " << x.value;
  if (x.outcome == LibbpfRelo::Failed) s << " (" << x.error << ")";
  if (!x.reason.empty() && x.outcome != LibbpfRelo::Patched) s << ": " << x.reason;
  return s.str();
}

namespace {

std::string describe_ours(const json& r) {
  std::ostringstream s;
  s << r.value("status", "?");
  if (r.contains("insn_idx")) s << " insn #" << r["insn_idx"];
  if (r.contains("value")) s << " -> " << r["value"];
  if (r.contains("reason")) s << ": " << r["reason"].get<std::string>();
  return s.str();
}

std::vector<std::uint64_t> sorted_ids(std::vector<std::uint64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

// Where our record for libbpf's `x` differs from it: "" when it agrees, else one line saying how.
std::string relocation_difference(const LibbpfRelo& x, const json& r) {
  std::vector<std::string> what;
  const std::string status = r.value("status", "");
  switch (x.outcome) {
    case LibbpfRelo::Patched:
      if (status != "ok") what.push_back("status");
      else if (!r.contains("value") || !r["value"].is_number_integer())
        what.push_back("value missing");
      else if (r["value"].get<std::uint64_t>() != x.value) what.push_back("value");
      break;
    case LibbpfRelo::Poisoned:
      if (status != "poisoned") what.push_back("status");
      break;
    case LibbpfRelo::Failed:
      if (status != "ambiguous" && status != "error") what.push_back("status");
      break;
  }
  if (!x.section.empty() && r.value("section", "") != x.section) what.push_back("section " + r.value("section", ""));
  if (!x.kind.empty() && r.value("relocation_kind", "") != x.kind)
    what.push_back("relocation_kind " + r.value("relocation_kind", ""));
  if (!x.kind.empty() && r.value("local_type_id", 0u) != x.local_type_id) what.push_back("local_type_id");
  if (x.insn_idx >= 0 && r.value("insn_idx", -1) != x.insn_idx) what.push_back("insn_idx");
  std::vector<std::uint64_t> targets;
  for (const json& t : r.value("type_ids", json::array()))
    if (t.is_number()) targets.push_back(t.get<std::uint64_t>());
  if (sorted_ids(targets) != sorted_ids(std::vector<std::uint64_t>(x.matching_targets.begin(), x.matching_targets.end())))
    what.push_back("type_ids " + r.value("type_ids", json::array()).dump());
  if (what.empty()) return "";
  std::ostringstream s;
  s << x.program << " relo #" << x.relo_idx << " [" << x.section << "] " << x.kind << " " << x.local_spec
    << "\n      libbpf: " << describe_libbpf(x) << "\n      ours:   " << describe_ours(r) << "\n      differ: ";
  for (std::size_t i = 0; i < what.size(); ++i) s << (i ? ", " : "") << what[i];
  return s.str();
}

}  // namespace btfslim::test
