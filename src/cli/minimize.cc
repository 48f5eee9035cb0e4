// `btfslim minimize`: a BTF with only what a set of BPF objects relocates against, verified to give
// every relocation the same result as the source before it is written.
#include "btfslim/check.h"
#include "btfslim/cli.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/minimize.h"
#include "btfslim/output.h"

#include <sys/stat.h>

#include <cstdio>

namespace btfslim::cli {
namespace {

struct MinimizeArgs {
  std::vector<std::string> objects;
  std::string source;
  std::string output;
  std::string source_base;
  std::string base;
  std::vector<std::string> keep;
  std::vector<std::string> explain;
  bool no_verify = false;
};

std::string where(const BpfObject& obj, const CoreRelocation& r) {
  const BpfFunction* f = obj.function_of(r);
  const std::uint64_t insn = (r.insn_off - (f ? f->offset : 0)) / 8;
  return fmt::format("{} {} insn #{}: {} {} ({})", obj.path(), f ? f->name : obj.sections()[r.section].name, insn,
                     reloc_kind_name(r.kind), describe_access(obj, r), obj.access(r));
}

std::string reason_text(const std::vector<const BpfObject*>& objects, const KeepReason& r) {
  if (r.object < 0) return "kept by --keep, or as the INT libbpf sizes pointers by";
  const BpfObject& obj = *objects[static_cast<std::size_t>(r.object)];
  return "needed by " + where(obj, obj.relocations()[r.relocation]);
}

void explain(const Btf& src, const Minimized& m, const std::vector<const BpfObject*>& objects,
             const std::string& name, OutputBuffer& out) {
  bool found = false;
  for (TypeId id = 1; id < src.end_id(); ++id) {
    const TypeView t = src.type(id);
    if (t.name_off() == 0 || src.str(t.name_off()) != name) continue;
    found = true;
    out.print("[{}] {} '{}': ", id, kind_name(t.kind()), name);
    if (!m.kept[id]) {
      out.print("not kept: no relocation resolves against it\n");
      continue;
    }
    out.print("{}\n", reason_text(objects, m.type_reasons.at(id)));
    if (t.kind() == Kind::Struct || t.kind() == Kind::Union) {
      const auto members = m.member_reasons.find(id);
      if (members == m.member_reasons.end()) {
        out.print("  kept as a shell: name, size, no members\n");
        continue;
      }
      for (const auto& [index, reason] : members->second) {
        const Member mm = t.member(index);
        out.print("  member {} '{}' (bit {}): {}\n", index, name_or_anon(src, mm.name_off), t.member_bit_offset(mm),
                  reason_text(objects, reason));
      }
    }
  }
  if (!found) out.print("{}: no type of that name in {}\n", name, src.name());
}

void run_minimize(const MinimizeArgs& args) {
  std::vector<std::unique_ptr<const BpfObject>> owned;
  std::vector<const BpfObject*> objects;
  for (const auto& path : args.objects) {
    owned.push_back(BpfObject::open(path));
    objects.push_back(owned.back().get());
    if (!owned.back()->has_ext() || owned.back()->relocations().empty())
      std::fprintf(stderr, "btfslim: note: %s has no CO-RE relocations: it needs nothing\n", path.c_str());
  }
  const auto source = load_btf(args.source, LoadOptions{args.source_base});
  // The output must not be an input, however spelt: compared by device and inode where it exists.
  if (args.output != "-") {
    struct stat out_st {};
    if (::stat(args.output.c_str(), &out_st) == 0) {
      auto same = [&](const std::string& path) {
        struct stat st {};
        return ::stat(path.c_str(), &st) == 0 && st.st_dev == out_st.st_dev && st.st_ino == out_st.st_ino;
      };
      for (const std::string& in : args.objects)
        if (same(in)) fail(args.output, "is an input ({}): refusing to overwrite it", in);
      if (same(source->name())) fail(args.output, "is the source BTF: refusing to overwrite it");
    }
  }

  // Resolve against the source once; the marks and the verification start from these results.
  const CoreTarget target = minimize_target(source);
  const CandidateIndex index(target, objects);
  std::vector<std::vector<CoreResult>> results;
  std::size_t relocations = 0, failing = 0;
  for (const BpfObject* obj : objects) {
    results.push_back(resolve_object(*obj, index));
    for (const CoreResult& r : results.back()) {
      ++relocations;
      if (r.status != CoreStatus::Ok) ++failing;
    }
  }

  MinimizeOptions options;
  options.keep = args.keep;
  if (!args.base.empty()) options.base = load_btf(args.base);
  const Minimized m = minimize(*source, objects, results, options);

  if (!args.no_verify) {
    if (const std::string diff = verify_minimized(*source, m, objects, results); !diff.empty())
      fail(args.output, "not written: a relocation resolves differently on the minimized BTF{}: {}{}",
           m.base ? " on " + m.base->name() : "", diff,
           options.base ? " (split BTF cannot add members to a type its base has: give a base minimized for "
                          "these objects too, or none)" : "");
  }

  OutputBuffer report(args.output == "-" ? 2 : 1, args.output == "-" ? "stderr" : "stdout");
  for (const std::string& name : args.explain) explain(*source, m, objects, name, report);
  if (args.output == "-") {
    report.flush();
    OutputBuffer out;
    out.write(m.bytes);
    out.flush();
  } else if (!args.output.empty()) {
    write_file_atomically(args.output, m.bytes);
  }
  const double pct = source->raw().empty() ? 0.0 : 100.0 * static_cast<double>(m.bytes.size()) / static_cast<double>(source->raw().size());
  report.print("{}: {}{} types, {} bytes ({:.2f}% of {}: {} types, {} bytes); {} relocations of {} object{}{}{}\n",
               args.output.empty() ? "(not written)" : args.output == "-" ? "stdout" : args.output,
               m.base ? "split on " + m.base->name() + ", " : "", m.types, with_commas(m.bytes.size()), pct,
               source->name(), source->end_id() - source->first_id(), with_commas(source->raw().size()),
               relocations, objects.size(), objects.size() == 1 ? "" : "s", args.no_verify ? "" : ", each resolving as on the source",
               failing ? fmt::format(" ({} poisoned or failing on the source too)", failing) : "");
  report.flush();
}

}  // namespace

void register_minimize(CLI::App& app) {
  auto args = std::make_shared<MinimizeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "minimize", "write a BTF with only the types and members BPF objects' CO-RE relocations resolve against");
  cmd->add_option("objects", args->objects, "BPF object files (.bpf.o)")->required();
  cmd->add_option("--btf", args->source,
                  "the source BTF: a file (raw BTF, vmlinux), or 'vmlinux' (default: the running kernel)");
  cmd->add_option("--output,-o", args->output, "where to write the minimized BTF ('-': standard output)")
      ->required();
  cmd->add_option("--btf-base", args->source_base,
                  "the base the source continues, for a module's BTF in a .ko file or a split BTF file "
                  "(automatic for a module under /sys/kernel/btf)");
  cmd->add_option("--base,-B", args->base,
                  "write split BTF on this base with only the types it lacks (default: standalone BTF, or a "
                  "module's own base for a module's BTF)");
  cmd->add_option("--keep", args->keep, "also keep this type with all its members (repeat for more)")
      ->allow_extra_args(false);
  cmd->add_option("--explain", args->explain, "say why a type and its members are kept (repeat for more)")
      ->allow_extra_args(false);
  cmd->add_flag("--no-verify", args->no_verify,
                "do not resolve every relocation against the output before writing it");
  cmd->callback([args] { run_minimize(*args); });
}

}  // namespace btfslim::cli
