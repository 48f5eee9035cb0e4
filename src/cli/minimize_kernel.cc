// `btfslim minimize --kernel VMLINUX -o OUT [OBJECT...]`: the BTF a kernel carries, made small for a
// profile of BPF objects, written into a copy of the image (and, with --btf-out, alone for a build's
// link), with a report of what it costs before and after and --explain for why a type is kept.
#include "btfslim/cli.h"
#include "btfslim/compression.h"
#include "btfslim/elf_writer.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/kernel_btf.h"
#include "btfslim/kernel_memory.h"
#include "btfslim/output.h"
#include "btfslim/parallel.h"
#include "btfslim/progress.h"
#include "btfslim/targets.h"

#include "minimize_kernel.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <optional>

#include <unistd.h>

namespace btfslim::cli {
namespace {

std::string_view family_name(KernelFamily f) {
  switch (f) {
    case KernelFamily::Tracepoints: return "tracepoints";
    case KernelFamily::Iterators: return "iterators";
  }
  return "?";
}

std::vector<KernelFamily> parse_families(const std::vector<std::string>& names) {
  std::vector<KernelFamily> out;
  for (const std::string& n : names) {
    if (n == "tracepoints")
      out.push_back(KernelFamily::Tracepoints);
    else if (n == "iterators")
      out.push_back(KernelFamily::Iterators);
    else if (n == "kfuncs" || n == "lsm" || n == "struct_ops")
      continue;  // always kept: the kernel lists them itself (.BTF_ids sets, struct_ops registrations)
    else
      fail("--family", "'{}' is not one of tracepoints, iterators, kfuncs, lsm, struct_ops", esc(n));
  }
  return out;
}

std::string type_label(const Btf& btf, TypeId id) {
  const TypeView t = btf.type(id);
  return fmt::format("[{}] {} '{}'", id, kind_name(t.kind()), esc(name_or_anon(btf, t.name_off())));
}

// What one reason says, for a root (every reason but Type, which points to the type that refers).
std::string reason_text(const KernelImage& image, const KernelProfile& profile, const SlimKernel& slim,
                        const KernelKeep& k) {
  const Btf& btf = *image.btf;
  switch (k.why) {
    case KernelKeep::Why::None:
      return "not kept";
    case KernelKeep::Why::Type:
      return fmt::format("referred to by {}", type_label(btf, k.from));
    case KernelKeep::Why::BtfId:
      return fmt::format("named by the kernel's .BTF_ids slot {}", esc(image.slots[k.a].symbol));
    case KernelKeep::Why::Lookup: {
      const KernelLookup& l = kernel_lookups()[k.a];
      return fmt::format("looked up by name by the kernel (Linux {}{}): {}", lookup_releases(l),
                         l.symbol.empty() ? "" : fmt::format(", where it has {}", l.symbol), l.reader);
    }
    case KernelKeep::Why::Found: {
      const FoundLookup& f = slim.found[k.a];
      return fmt::format("looked up by name by the kernel, a {}: {}", found_source_name(f.source), f.why);
    }
    case KernelKeep::Why::StructOps:
      return "a struct_ops type the kernel registers (bpf_struct_ops_NAME and NAME), kept whole";
    case KernelKeep::Why::Reference: {
      const KernelRef& ref = slim.refs[k.a][k.b];
      return fmt::format("{}: {} '{}'{}", esc(profile.objects[k.a]->path()), kernel_ref_kind_name(ref.kind),
                         esc(ref.name), ref.owner.empty() ? "" : fmt::format(" of '{}'", esc(ref.owner)));
    }
    case KernelKeep::Why::Relocation: {
      const BpfObject& obj = *profile.objects[k.a];
      return relocation_site(obj, obj.relocations()[k.b]);
    }
    case KernelKeep::Why::Access: {
      const KernelAccesses& a = slim.accesses[k.a];
      const BtfAccess& acc = a.found.accesses[k.b];
      return fmt::format("{} {}: a load of {} bytes at offset {} of {}, which the verifier checks against the "
                         "kernel's layout: it reads {}",
                         esc(profile.objects[k.a]->path()), access_site(*profile.objects[k.a], a, acc.program, acc.insn), acc.size, acc.off,
                         type_label(btf, acc.type), describe_path(btf, acc.walk.path));
    }
    case KernelKeep::Why::Unfollowed: {
      const KernelAccesses& a = slim.accesses[k.a];
      const UnfollowedAccess& u = a.found.unfollowed[k.b];
      return fmt::format("{} {}: {}: kept whole, as the walk cannot tell which members the verifier checks",
                         esc(profile.objects[k.a]->path()), access_site(*profile.objects[k.a], a, u.program, u.insn), u.why);
    }
    case KernelKeep::Why::Keep:
      return fmt::format("--keep {}", esc(profile.keep[k.a]));
    case KernelKeep::Why::Family:
      return fmt::format("--family {}", family_name(static_cast<KernelFamily>(k.a)));
    case KernelKeep::Why::Modules:
      return "--keep-for-modules: a module refers to it, or to a type that reaches it, kept whole";
  }
  return "?";
}

// Why a type is kept, from it to the root that needed it: one line per step.
std::string why_kept(const KernelImage& image, const KernelProfile& profile, const SlimKernel& slim, TypeId id) {
  std::string out;
  for (int step = 0; step < 64; ++step) {
    const KernelKeep& k = slim.why[id];
    fmt::format_to(std::back_inserter(out), "  {}\n", reason_text(image, profile, slim, k));
    if (k.why != KernelKeep::Why::Type) return out;
    id = k.from;
  }
  out += "  ...\n";
  return out;
}

void explain(const KernelImage& image, const KernelProfile& profile, const SlimKernel& slim, const std::string& what,
             OutputBuffer& report) {
  const Btf& btf = *image.btf;
  const TypePattern pattern = TypePattern::parse(what, TypePattern::Globs::No);
  bool found = false;
  for (TypeId id = 1; id < btf.end_id(); ++id) {
    if (!pattern.matches(btf, id)) continue;
    const TypeView t = btf.type(id);
    found = true;
    if (slim.new_id[id] == 0) {
      report.print("{}: dropped: neither the kernel's own lists nor the profile need it\n", type_label(btf, id));
      continue;
    }
    report.print("{}: kept as [{}]", type_label(btf, id), slim.new_id[id]);
    if (t.kind() == Kind::Struct || t.kind() == Kind::Union) {
      const auto m = slim.members.find(id);
      const std::size_t n = m == slim.members.end() ? 0 : m->second.size();
      report.print(", {} of {} members{}", n, t.vlen(), n ? ":" : " (a shell: name and size)");
      if (m != slim.members.end())
        for (const std::uint32_t i : m->second) report.print(" {}", esc(name_or_anon(btf, t.member(i).name_off)));
    }
    report.print("\n{}", why_kept(image, profile, slim, id));
    // Each kept member's own reason: the first thing that needed it.
    if (const auto m = slim.members.find(id); m != slim.members.end())
      for (const std::uint32_t i : m->second) {
        const KernelKeep& k = slim.member_why.at({id, i});
        const std::string why = k.why == KernelKeep::Why::Type && k.from == id
                                    ? std::string("its first member, by which the verifier matches a struct that "
                                                  "begins with another")
                                    : reason_text(image, profile, slim, k);
        report.print("  member {}: {}\n", esc(name_or_anon(btf, t.member(i).name_off)), why);
      }
  }
  if (!found) pattern.fail_unmatched(btf, "--explain");
}

// What this kernel looks up by name and the slim BTF keeps for it: the names its sources spell out, for its
// release, and how many names its image and the profile told (--explain NAME says which and why).
void print_lookups(const KernelImage& image, const SlimKernel& slim, OutputBuffer& report) {
  const auto lookups = kernel_lookups();
  std::string names;
  for (const std::uint32_t i : slim.lookups) {
    // "struct sock", as C names it.
    std::string kind(kind_name(lookups[i].kind));
    std::transform(kind.begin(), kind.end(), kind.begin(), [](char c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; });
    fmt::format_to(std::back_inserter(names), "{}{} {}", names.empty() ? "" : ", ", kind, lookups[i].name);
  }
  report.print("  looked up by name ({}, {} of the {} lookups kernel sources spell out): {}\n",
               image.release.empty() ? std::string("a release the image does not say") : "Linux " + escape(image.release),
               slim.lookups.size(), lookups.size(), names.empty() ? "none" : names);
  std::array<std::size_t, 4> counts{};
  for (std::size_t i = 0; i < slim.found.size(); ++i)
    if (slim.found_ids[i] != 0) ++counts[static_cast<std::size_t>(slim.found[i].source)];
  std::string found;
  for (std::size_t s = 0; s < counts.size(); ++s) {
    const std::string_view what = found_source_name(static_cast<FoundLookup::Source>(s));
    fmt::format_to(std::back_inserter(found), "{}{} {}{}", found.empty() ? "" : ", ", counts[s], what,
                   counts[s] == 1 ? "" : "s");
  }
  report.print("  and by names its image and the objects tell: {}\n", found);
}

// A name an object's loader looks up that the kernel image lacks: libbpf looks for it in the modules.
struct ModuleLookup {
  std::string_view name;
  Kind kind = Kind::Unknown;
};

// Whether `btf`'s own types (a module's, not its base's) have `name` as a type of `kind`.
bool has_own_type(const Btf& btf, const ModuleLookup& want) {
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id) {
    const TypeView t = btf.type(id);
    if (t.kind() == want.kind && btf.str(t.name_off()) == want.name) return true;
  }
  return false;
}

// What rewriting a tree of modules for the slim kernel gave.
struct ModulesOutcome {
  std::vector<std::string> found_in;  // per ModuleLookup: the first module (by path) that has it, or ""
  std::size_t rewritten = 0, copied = 0, index_files = 0;
  std::size_t compressed = 0;                          // of the rewritten: written back compressed
  std::uint64_t bytes_before = 0, bytes_after = 0;    // their .BTF
  std::uint64_t types_before = 0, own = 0, imported = 0;
  std::uint64_t memory_before = 0, memory_after = 0;  // loaded: kernel_memory(Module)
};

// Every module under `dir` (`kos`, from module_files), rewritten for the slim kernel (split on `padded`,
// the image's new .BTF) and written at the same relative path under `out_dir`, compressed as it came; a
// module without BTF is copied as it is, and so are the tree's modules.* files, for depmod. Each name of
// `wanted` is looked for in each module, and must be in its rewritten BTF where it was in its own.
ModulesOutcome rewrite_modules(const KernelImage& image, const SlimKernel& slim, const std::string& padded,
                               const std::string& dir, const std::vector<std::string>& kos, const std::string& out_dir,
                               std::span<const ModuleLookup> wanted) {
  namespace fs = std::filesystem;
  // The slim base as the modules' BTF will meet it, to read each rewritten one back on.
  auto owner = std::make_shared<std::string>(padded);
  const auto base = Btf::parse("the slim BTF", owner,
                               std::span(reinterpret_cast<const std::uint8_t*>(owner->data()), owner->size()));
  // Each module on its own, on every CPU (xz compression is most of the time), its figures summed after.
  std::vector<ModulesOutcome> each(kos.size());
  ProgressBar bar(kos.size(), "modules");
  parallel_for(kos.size(), available_cpus(), [&](std::size_t i) {
    const std::string& ko = kos[i];
    ModulesOutcome& out = each[i];
    struct Stepped {  // however the module ends: rewritten, copied, or an error
      ProgressBar& bar;
      const std::string& ko;
      ~Stepped() { bar.step(fs::path(ko).filename().string()); }
    } stepped{bar, ko};
    std::error_code ec;
    const std::string target = (fs::path(out_dir) / fs::path(ko).lexically_relative(dir)).string();
    fs::create_directories(fs::path(target).parent_path(), ec);
    if (ec) fail(fs::path(target).parent_path().string(), "cannot create directory: {}", ec.message());
    const auto module = read_kernel_module(ko, image);
    if (!module) {
      if (!fs::copy_file(ko, target, ec)) fail(target, "cannot copy {}: {}", esc(ko), ec.message());
      ++out.copied;
      return;
    }
    const SlimModule m = slim_module(image, slim, *module);
    auto copy = std::make_shared<std::string>(m.btf);
    const auto rewritten =
        Btf::parse(target, copy, std::span(reinterpret_cast<const std::uint8_t*>(copy->data()), copy->size()), base);
    out.found_in.resize(wanted.size());
    for (std::size_t w = 0; w < wanted.size(); ++w) {
      if (!has_own_type(*module->btf, wanted[w])) continue;
      if (!has_own_type(*rewritten, wanted[w]))
        fail(target, "not written: its {} '{}' is missing from the rewritten BTF", kind_name(wanted[w].kind),
             esc(wanted[w].name));
      out.found_in[w] = module_name(ko);
    }
    std::vector<std::pair<std::string, std::string_view>> sections = {{".BTF", m.btf}};
    if (!m.ids.empty()) sections.push_back({".BTF_ids", m.ids});
    const Compression compression = module->file->compression();
    write_file_atomically(target, compress(elf_with_sections(module->file->bytes(), sections, target), compression));
    ++out.rewritten;
    out.compressed += compression != Compression::None;
    out.bytes_before += module->btf->raw().size();
    out.bytes_after += m.btf.size();
    out.types_before += module->btf->own_count();
    out.own += m.own;
    out.imported += m.imported;
    out.memory_before += kernel_memory(module->btf->raw().size(), module->btf->own_count(), LoadedAs::Module).total();
    out.memory_after += kernel_memory(m.btf.size(), m.own + m.imported, LoadedAs::Module).total();
  });
  bar.clear();
  ModulesOutcome out;
  out.found_in.resize(wanted.size());
  for (const ModulesOutcome& m : each) {
    for (std::size_t w = 0; w < m.found_in.size(); ++w)
      if (out.found_in[w].empty()) out.found_in[w] = m.found_in[w];
    out.rewritten += m.rewritten;
    out.copied += m.copied;
    out.compressed += m.compressed;
    out.bytes_before += m.bytes_before;
    out.bytes_after += m.bytes_after;
    out.types_before += m.types_before;
    out.own += m.own;
    out.imported += m.imported;
    out.memory_before += m.memory_before;
    out.memory_after += m.memory_after;
  }
  std::error_code ec;
  for (const std::string& name : module_index_files(dir)) {
    const std::string target = out_dir + "/" + name;
    if (!fs::copy_file(fs::path(dir) / name, target, ec)) fail(target, "cannot copy {}: {}", esc(name), ec.message());
    ++out.index_files;
  }
  return out;
}

}  // namespace

void run_minimize_kernel(const KernelMinimizeArgs& args) {
  const KernelImage image = read_kernel_image(args.kernel);
  std::vector<std::unique_ptr<const BpfObject>> owned;
  KernelProfile profile;
  for (const std::string& path : args.objects) {
    owned.push_back(BpfObject::open(path));
    profile.objects.push_back(owned.back().get());
  }
  profile.keep = args.keep;
  profile.families = parse_families(args.families);
  profile.attach.targets = parse_attach_targets(args.attach_targets);

  // No output may be an input (with --modules, the image goes to OUT/vmlinux).
  if (!args.modules.empty() && args.output == "-") fail("-o -", "--modules writes a directory: name it with -o DIR");
  const std::string image_out = args.modules.empty() ? args.output : (std::filesystem::path(args.output) / "vmlinux").string();
  for (const std::string& out : {image_out, args.btf_out}) {
    if (same_file(out, args.kernel)) fail(out, "is the kernel image given with --kernel: refusing to overwrite it");
    for (const BpfObject* in : profile.objects)
      if (same_file(out, in->path())) fail(out, "is an input ({}): refusing to overwrite it", esc(in->path()));
  }
  // Every refusal that can be made before the work is made now: outputs that cannot be written, a modules
  // tree that holds none. Nothing is written until everything is known to be right.
  check_output_file(args.btf_out, "--btf-out");
  std::vector<std::string> kos;
  if (args.modules.empty()) {
    check_output_file(args.output, "-o");
  } else {
    std::error_code ec;
    const auto in = std::filesystem::weakly_canonical(args.modules, ec), out = std::filesystem::weakly_canonical(args.output, ec);
    if (out == in || std::mismatch(in.begin(), in.end(), out.begin(), out.end()).first == in.end())
      fail(args.output, "is, or is inside, the --modules directory: refusing to write modules among their sources");
    // OUT takes the place of what is there: only an empty directory, or an earlier output (its vmlinux
    // at the top), is replaced; anything else may be someone's files.
    namespace fs = std::filesystem;
    if (fs::is_directory(args.output, ec) && !fs::is_empty(args.output, ec) && !fs::exists(fs::path(args.output) / "vmlinux", ec))
      fail(args.output, "is a directory that holds other files (no vmlinux of an earlier run): refusing to replace it");
    kos = module_files(args.modules);
  }

  // --keep-for-modules: every base type the tree's modules refer to, whole with what it reaches; what
  // that costs is the difference to the slim BTF without it.
  std::optional<SlimKernel> without_modules;
  std::size_t module_btfs = 0;
  if (!args.keep_for_modules.empty()) {
    const auto btfs = load_module_btfs(module_files(args.keep_for_modules), image.btf);
    module_btfs = btfs.size();
    std::vector<bool> referred(image.btf->end_id(), false);
    for (const auto& m : btfs)
      for (TypeId id = m->first_id(); id < m->end_id(); ++id)
        for_each_type_ref(m->type(id), [&](TypeId ref) {
          if (ref < image.btf->end_id()) referred[ref] = true;
        });
    for (TypeId id = 1; id < referred.size(); ++id)
      if (referred[id]) profile.module_types.push_back(id);
    KernelProfile plain = profile;
    plain.module_types.clear();
    without_modules = slim_kernel(image, plain);
  }
  const SlimKernel slim = slim_kernel(image, profile);
  if (!args.no_verify)
    if (const std::string diff = verify_slim(image, profile, slim); !diff.empty())
      fail(args.output.empty() ? args.btf_out : args.output, "not written: the slim BTF does not serve as the source does: {}", diff);

  // The image: .BTF and .BTF_ids replaced in place, every other byte as it was.
  const std::string btf = padded_btf(image, slim);
  const std::string ids = remapped_btf_ids(image, slim);
  const std::string_view file(reinterpret_cast<const char*>(image.file->bytes().data()), image.file->bytes().size());
  std::vector<std::pair<std::uint64_t, std::string_view>> patches = {{image.btf_offset, btf}};
  if (image.ids_size) patches.push_back({image.ids_offset, ids});
  std::sort(patches.begin(), patches.end());
  std::vector<std::string_view> pieces;
  std::uint64_t at = 0;
  for (const auto& [offset, bytes] : patches) {
    pieces.push_back(file.substr(at, offset - at));
    pieces.push_back(bytes);
    at = offset + bytes.size();
  }
  pieces.push_back(file.substr(at));

  OutputBuffer report(args.output == "-" || args.btf_out == "-" ? 2 : 1,
                      args.output == "-" || args.btf_out == "-" ? "stderr" : "stdout");
  for (const std::string& name : args.explain) explain(image, profile, slim, name, report);
  // The outputs, each whole or not at all: with --modules, a directory that takes -o's place once
  // complete; --btf-out before the image, and taken back if the image cannot be written.
  std::optional<StagedDirectory> staged;
  if (!args.modules.empty()) staged.emplace(args.output);
  if (!args.btf_out.empty()) write_file_atomically(args.btf_out, slim.btf);
  // What the loader looks for in the modules: the kernel references the image lacks.
  std::vector<ModuleLookup> wanted;
  for (std::size_t o = 0; o < profile.objects.size(); ++o)
    for (std::size_t r = 0; r < slim.refs[o].size(); ++r) {
      const KernelRef& ref = slim.refs[o][r];
      if (!args.modules.empty() && ref.unchecked.empty() && slim.ref_ids[o][r] == 0 && ref.kind != KernelRefKind::StructOps)
        wanted.push_back({ref.lookup, ref.lookup_kind});
    }
  ModulesOutcome modules;
  try {
    if (staged)
      write_file_atomically(staged->path() + "/vmlinux", pieces);
    else if (!image_out.empty())
      write_file_atomically(image_out, pieces);
    if (staged) {
      modules = rewrite_modules(image, slim, btf, args.modules, kos, staged->path(), wanted);
      staged->commit();
    }
  } catch (...) {
    if (!args.btf_out.empty() && args.btf_out != "-") ::unlink(args.btf_out.c_str());
    throw;
  }

  const Btf& src = *image.btf;
  const std::uint32_t source_types = src.end_id() - 1;
  const KernelMemory before = kernel_memory(src.raw().size(), source_types, LoadedAs::Vmlinux);
  const KernelMemory relinked = kernel_memory(slim.btf.size(), slim.types, LoadedAs::Vmlinux);
  const KernelMemory in_place = kernel_memory(btf.size(), slim.types, LoadedAs::Vmlinux);
  std::size_t references = 0, relocations = 0, loads = 0;
  for (std::size_t o = 0; o < profile.objects.size(); ++o) {
    references += slim.refs[o].size();
    relocations += profile.objects[o]->relocations().size();
    loads += slim.accesses[o].found.accesses.size();
  }
  report.print("{}{}: slim BTF for {} object{} ({} kernel references, {} CO-RE relocations, {} loads through "
               "BTF-typed pointers){}\n",
               esc(image.path()), image.release.empty() ? "" : fmt::format(" (Linux {})", esc(image.release)),
               profile.objects.size(), profile.objects.size() == 1 ? "" : "s", references, relocations, loads,
               args.no_verify ? "" : ", each resolving as on the source");
  report.print("  {:<34} {:>9} {:>11} {:>14}\n", "", "types", ".BTF bytes", "kernel memory");
  auto row = [&](std::string_view what, std::uint32_t types, std::uint64_t bytes, const KernelMemory& m) {
    report.print("  {:<34} {:>9} {:>11} {:>14}\n", what, with_commas(types), with_commas(bytes), with_commas(m.total()));
  };
  row("source", source_types, src.raw().size(), before);
  row("slim, relinked (--btf-out)", slim.types, slim.btf.size(), relinked);
  row("slim, patched in place (-o)", slim.types, btf.size(), in_place);
  report.print("  ({:.1f}% of the types, {:.1f}% of the bytes; kernel memory is .BTF, which stays in the image, plus "
               "the kernel's index of 8 bytes per type)\n",
               100.0 * slim.types / std::max<std::uint32_t>(source_types, 1),
               100.0 * static_cast<double>(slim.btf.size()) / static_cast<double>(std::max<std::size_t>(src.raw().size(), 1)));
  print_lookups(image, slim, report);
  if (without_modules)
    report.print("  --keep-for-modules {}: the {} base types its {} modules with BTF refer to, whole with all they reach: "
                 "{} -> {} types, {} -> {} bytes of .BTF (+{})\n",
                 escape(args.keep_for_modules), with_commas(profile.module_types.size()), module_btfs,
                 with_commas(without_modules->types), with_commas(slim.types), with_commas(without_modules->btf.size()),
                 with_commas(slim.btf.size()), with_commas(slim.btf.size() - without_modules->btf.size()));
  std::size_t w = 0;
  for (std::size_t o = 0; o < profile.objects.size(); ++o)
    for (std::size_t r = 0; r < slim.refs[o].size(); ++r) {
      const KernelRef& ref = slim.refs[o][r];
      const bool looked_for = !args.modules.empty() && ref.unchecked.empty() && slim.ref_ids[o][r] == 0 &&
                              ref.kind != KernelRefKind::StructOps;
      const std::string module = looked_for ? modules.found_in[w++] : std::string();
      if (!ref.unchecked.empty())
        report.print("  note: {}: {} '{}' not kept: {}\n", esc(profile.objects[o]->path()), kernel_ref_kind_name(ref.kind),
                     esc(ref.name), ref.unchecked);
      else if (!module.empty())
        report.print("  note: {}: {} '{}' is module {}'s, whose own types are kept whole\n",
                     esc(profile.objects[o]->path()), kernel_ref_kind_name(ref.kind), esc(ref.name), esc(module));
      else if (slim.ref_ids[o][r] == 0)
        report.print("  note: {}: {} '{}': the kernel has no {}{}, slim or not{}\n", esc(profile.objects[o]->path()),
                     kernel_ref_kind_name(ref.kind), esc(ref.name), esc(ref.lookup),
                     args.modules.empty() ? "" : " in its image or modules",
                     args.modules.empty() ? " (with --modules DIR, its modules are searched too)" : "");
    }
  for (std::size_t o = 0; o < profile.objects.size(); ++o)
    for (const UnfollowedAccess& u : slim.accesses[o].found.unfollowed)
      report.print("  note: {} {}: {}: {} kept whole (--explain says more)\n", esc(profile.objects[o]->path()),
                   access_site(*profile.objects[o], slim.accesses[o], u.program, u.insn), u.why,
                   u.type ? type_label(src, u.type) : std::string("the structs its typed pointers had"));
  if (!image_out.empty()) report.print("{}: the image, with .BTF replaced in place ({} bytes, padded) and {} .BTF_ids slots remapped, {} sets "
               "sorted again\n",
               image_out == "-" ? "stdout" : escape(image_out), with_commas(btf.size()), image.slots.size(),
               image.sets.size());
  if (!args.modules.empty()) {
    report.print("{}: {} modules of {} rewritten for the slim base ({} compressed as they came; {} without BTF copied "
                 "as they are, and {} modules.* files): BTF {} -> {} bytes, {} -> {} types ({} copied from the old "
                 "base); loaded, {} -> {} bytes of kernel memory\n",
                 escape(args.output), modules.rewritten, escape(args.modules), modules.compressed, modules.copied,
                 modules.index_files, with_commas(modules.bytes_before), with_commas(modules.bytes_after),
                 with_commas(modules.types_before), with_commas(modules.own + modules.imported),
                 with_commas(modules.imported), with_commas(modules.memory_before), with_commas(modules.memory_after));
    report.print("  the kernel with all its modules loaded: {} -> {} bytes of kernel memory\n",
                 with_commas(before.total() + modules.memory_before), with_commas(in_place.total() + modules.memory_after));
    report.print("  note: a rewritten module has no signature: a kernel that enforces signatures wants it signed again "
                 "(scripts/sign-file sha256 KEY CERT MODULE.ko, with the build's key); one that does not taints\n");
  }
  if (!args.btf_out.empty())
    report.print("{}: the slim .BTF alone ({} bytes), for a kernel build's link\n",
                 args.btf_out == "-" ? "stdout" : escape(args.btf_out), with_commas(slim.btf.size()));
  report.flush();
}

}  // namespace btfslim::cli
