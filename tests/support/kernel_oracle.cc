#include "kernel_oracle.h"

#include "libbpf_oracle.h"

#include <bpf/libbpf.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string_view>
#include <utility>

namespace btfslim::test {
namespace {

// A program type for sections libbpf 1.1.2 does not know (cilium-style "tc/ingress", "classifier/x").
bpf_prog_type type_from_section(std::string_view sec) {
  auto starts = [&](std::string_view p) { return sec.substr(0, p.size()) == p; };
  if (starts("tc") || starts("classifier") || starts("action")) return BPF_PROG_TYPE_SCHED_CLS;
  if (starts("xdp")) return BPF_PROG_TYPE_XDP;
  if (starts("socket")) return BPF_PROG_TYPE_SOCKET_FILTER;
  if (starts("raw_tracepoint") || starts("raw_tp")) return BPF_PROG_TYPE_RAW_TRACEPOINT;
  if (starts("tracepoint") || starts("tp/")) return BPF_PROG_TYPE_TRACEPOINT;
  if (starts("cgroup_skb")) return BPF_PROG_TYPE_CGROUP_SKB;
  return BPF_PROG_TYPE_KPROBE;
}

// What only the loader decides, made neutral: pins, sizes set at run time, unknown section names.
void neutralise(bpf_object* obj) {
  bpf_map* map;
  bpf_object__for_each_map(map, obj) {
    bpf_map__set_pin_path(map, nullptr);
    if (bpf_map__type(map) == BPF_MAP_TYPE_PERF_EVENT_ARRAY) {
      // Go loaders fill in what a perf event array always has: 4-byte keys and values, one per CPU.
      if (bpf_map__key_size(map) == 0) bpf_map__set_key_size(map, 4);
      if (bpf_map__value_size(map) == 0) bpf_map__set_value_size(map, 4);
      if (bpf_map__max_entries(map) == 0) bpf_map__set_max_entries(map, static_cast<__u32>(libbpf_num_possible_cpus()));
    }
    if (bpf_map__max_entries(map) == 0) {
      switch (bpf_map__type(map)) {
        case BPF_MAP_TYPE_RINGBUF:
        case BPF_MAP_TYPE_USER_RINGBUF:
          bpf_map__set_max_entries(map, 64 * 1024);
          break;
        default:
          bpf_map__set_max_entries(map, 1);
      }
    }
  }
  bpf_program* prog;
  bpf_object__for_each_program(prog, obj) {
    if (bpf_program__type(prog) == BPF_PROG_TYPE_UNSPEC)
      bpf_program__set_type(prog, type_from_section(bpf_program__section_name(prog)));
  }
}

bpf_object* open(const std::string& object, const std::string& target_btf) {
  LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = target_btf.empty() ? nullptr : target_btf.c_str());
  return bpf_object__open_file(object.c_str(), &opts);
}

void classify(ProgramLoad& p) {
  const std::string& log = p.log;
  // libbpf rewrites the verifier's "invalid func unknown#195896080" into the relocation it was.
  if (log.find("invalid func unknown#195896080") != std::string::npos ||
      log.find("failed to resolve CO-RE relocation") != std::string::npos) {
    p.outcome = ProgramLoad::Poisoned;
    return;
  }
  if (log.find("failed to perform CO-RE relocations") != std::string::npos ||
      log.find(": failed to relocate: ") != std::string::npos ||
      log.find("failed to patch insn") != std::string::npos) {
    p.outcome = ProgramLoad::CoreFailed;
    return;
  }
  p.outcome = ProgramLoad::Other;
  // The first line of libbpf's that says what failed, and the verifier's last word.
  std::istringstream in(log);
  std::string line, first, verifier_last;
  bool in_verifier_log = false;
  while (std::getline(in, line)) {
    if (line.find("-- BEGIN PROG LOAD LOG --") != std::string::npos) {
      in_verifier_log = true;
      continue;
    }
    if (line.find("-- END PROG LOAD LOG --") != std::string::npos) {
      in_verifier_log = false;
      continue;
    }
    if (in_verifier_log) {
      if (!line.empty() && line.find("processed ") != 0 && line.find("verification time") == std::string::npos)
        verifier_last = line;
      continue;
    }
    if (first.empty() && (line.find("failed") != std::string::npos || line.find("error") != std::string::npos ||
                          line.find("incompatible") != std::string::npos))
      first = line;
  }
  p.reason = first;
  if (!verifier_last.empty()) p.reason += " (verifier: " + verifier_last + ")";
}

}  // namespace

const char* outcome_name(ProgramLoad::Outcome outcome) {
  switch (outcome) {
    case ProgramLoad::Loaded: return "loaded";
    case ProgramLoad::Poisoned: return "poisoned instruction reached";
    case ProgramLoad::CoreFailed: return "CO-RE relocation failed";
    case ProgramLoad::Other: return "failed (not CO-RE)";
  }
  return "?";
}

const ObjectLoad& kernel_load(const std::string& object, const std::string& target_btf) {
  static std::map<std::pair<std::string, std::string>, ObjectLoad> cache;
  const auto key = std::make_pair(object, target_btf);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  ObjectLoad result;
  result.unavailable_reason = bpf_unavailable_reason();
  if (!result.unavailable_reason.empty()) {
    result.available = false;
    return cache[key] = result;
  }

  // The programs, from one opening; then each loaded alone from an opening of its own.
  std::vector<std::pair<std::string, std::string>> programs;
  {
    std::string log;
    LibbpfPrint capture(&log, false);
    bpf_object* obj = open(object, target_btf);
    if (!obj) {
      result.open_error = std::string(std::strerror(errno)) + ": " + log;
      return cache[key] = result;
    }
    bpf_program* prog;
    bpf_object__for_each_program(prog, obj) programs.emplace_back(bpf_program__name(prog), bpf_program__section_name(prog));
    bpf_object__close(obj);
  }
  result.opened = true;
  for (const auto& [name, section] : programs) {
    ProgramLoad& p = result.programs.emplace_back();
    p.name = name;
    p.section = section;
    LibbpfPrint capture(&p.log, false);
    bpf_object* obj = open(object, target_btf);
    if (!obj) {
      p.outcome = ProgramLoad::Other;
      p.reason = "cannot open it again";
      continue;
    }
    neutralise(obj);
    bpf_program* prog;
    bpf_object__for_each_program(prog, obj) bpf_program__set_autoload(prog, name == bpf_program__name(prog));
    const int err = bpf_object__load(obj);
    bpf_object__close(obj);
    if (err == 0)
      p.outcome = ProgramLoad::Loaded;
    else
      classify(p);
  }
  return cache[key] = std::move(result);
}

}  // namespace btfslim::test
