// `btfslim check`: will these BPF objects load on these kernels? Resolves every CO-RE relocation of
// each object against each target as libbpf would, follows each program as the verifier would with
// the values they give (a poisoned relocation fails only where it is reached), checks what else its load
// resolves against kernel BTF (kfunc and ksym externs, attach targets, struct_ops maps: loader.h), and
// says what fails where.
//
// With one target, objects are checked and printed one at a time, each dropped before the next; with
// several, targets are read one at a time (a btfhub tree holds thousands), each parsed once and indexed
// once for all objects, then dropped before the next.
#include "btfslim/archive.h"
#include "btfslim/check.h"
#include "btfslim/ci_text.h"
#include "btfslim/cli.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/loader.h"
#include "btfslim/progress.h"
#include "btfslim/spare.h"
#include "btfslim/targets.h"

#include <dirent.h>
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace btfslim::cli {
namespace {

struct CheckArgs {
  std::vector<std::string> objects;
  std::vector<std::string> targets;
  std::string base;
  std::string format = "table";
  bool failures_only = false;
  bool strict = false;
  bool allow_missing = false;  // deprecated: what it excused no longer fails
  std::vector<std::string> attach_targets;  // PROG=FUNC
  bool no_attach = false;
  std::vector<std::string> modules;  // --modules: the one kernel's modules (files, or directories of them)
  std::vector<std::string> optional;  // --optional: globs of programs whose failures do not count
};

AttachOptions attach_options(const CheckArgs& args) {
  AttachOptions options;
  options.check = !args.no_attach;
  options.targets = parse_attach_targets(args.attach_targets);
  return options;
}

// The running kernel's module BTFs: libbpf searches them for types vmlinux lacks.
std::vector<std::shared_ptr<const Btf>> running_modules(const std::shared_ptr<const Btf>& vmlinux) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(std::string(kSysBtfDir).c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != ".." && name != "vmlinux") names.push_back(std::string(kSysBtfDir) + "/" + name);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  std::vector<std::shared_ptr<const Btf>> modules;
  for (const auto& n : names) modules.push_back(load_btf_file(n, vmlinux));
  return modules;
}

CoreTarget load_target(const std::string& arg, const std::shared_ptr<const Btf>& base, bool running,
                       const std::vector<std::string>& modules) {
  if (!modules.empty()) {
    // One kernel with its modules, as a loader meets it on that kernel: vmlinux, then every module.
    auto vmlinux = load_btf(arg);
    if (vmlinux->is_split()) fail(arg, "is split BTF: --modules goes with a kernel's vmlinux");
    return CoreTarget(vmlinux, load_module_btfs(modules, vmlinux));
  }
  if (running) {
    auto vmlinux = load_btf("");
    return CoreTarget(vmlinux, running_modules(vmlinux));
  }
  note_if_bpf_object(arg);
  // A base is for the module targets; a whole kernel among them is read as itself.
  if (const std::string path = resolve_input(arg).path; base && !is_whole_kernel_btf(path))
    return CoreTarget(base, {load_btf_file(path, base)});
  auto btf = load_btf(arg);
  // A module's split BTF found with its vmlinux (a /sys/kernel/btf module): search vmlinux first.
  if (btf->is_split()) return CoreTarget(btf->base_shared(), {btf});
  return CoreTarget(btf);
}

// One object on one target: every CO-RE relocation resolved, reached or not, counted; its kernel
// references resolved. `code` is the object's code where a poisoned relocation needed it, read along
// with the first resolution that has one and kept for later targets (`keep_code`). The cell is made in
// `cell`'s memory (an earlier object's, done with).
ObjectOnTarget check_cell(const BpfObject& object, const CandidateIndex& index, const KernelNameIndex& names,
                          std::span<const KernelRef> refs, std::optional<BpfCode>& code, bool keep_code, bool strict,
                          ObjectOnTarget cell = {}) {
  cell.targets.clear();
  cell.target_names.clear();
  std::optional<BpfCodeReader> along;
  if (!code) along.emplace(object);
  resolve_object_into(cell.results, object, index, nullptr, along ? &*along : nullptr);
  const bool poisoned = any_poisoned(cell.results);
  if (poisoned && !code) code.emplace(along->finish());
  mark_reachability(cell, poisoned ? &*code : nullptr);
  count_outcomes(cell, strict);
  if (!keep_code && code) {
    BpfCode::recycle(std::move(*code));
    code.reset();
  }
  cell.kernel_refs = resolve_kernel_refs(object, refs, names);
  cell.kernel_refs_decidable = names.has_functions();
  // The target is dropped after the object: keep the roots that matched, named, not the paths into it;
  // once for each list of matches (relocations asking the same question share theirs). A question's
  // last list is tried first: it is nearly always the one.
  std::unordered_map<const void*, std::pair<Matches, std::uint32_t>> kept;
  struct Last {
    const void* identity = nullptr;
    const std::pair<Matches, std::uint32_t>* kept = nullptr;
  };
  std::vector<Last> last = Spare<std::vector<Last>>::take();  // the last object's memory
  last.assign(object.question_count(), Last{});
  cell.target_names.emplace_back();
  cell.targets.reserve(cell.results.size());
  const auto relocations = object.relocations();
  for (std::size_t i = 0; i < cell.results.size(); ++i) {
    CoreResult& r = cell.results[i];
    if (r.matches.empty()) {
      cell.targets.push_back(0);
      continue;
    }
    Last& l = last[relocations[i].question];
    if (l.identity != r.matches.identity()) {
      auto [it, fresh] = kept.try_emplace(r.matches.identity());
      if (fresh) {
        it->second = {r.matches.roots_only(), static_cast<std::uint32_t>(cell.target_names.size())};
        cell.target_names.push_back(describe_targets(r));
      }
      l = {r.matches.identity(), &it->second};
    }
    r.matches = l.kept->first;
    cell.targets.push_back(l.kept->second);
  }
  Spare<std::vector<Last>>::give(std::move(last));
  return cell;
}

// What every object asks every target, gathered object by object so that no object need stay open
// while the target's indexes are built: the root names of CO-RE relocations, and the kernel
// references (each lookup once).
struct AskedOfTargets {
  RootNames roots;
  std::vector<KernelRef> refs;
  std::unordered_set<std::string> seen;  // lookup, kind of lookup, kind of reference

  void add(const BpfObject& object, const std::vector<KernelRef>& object_refs) {
    roots.add(object);
    for (const KernelRef& r : object_refs)
      if (seen.insert(fmt::format("{}\n{}\n{}", r.lookup, static_cast<int>(r.lookup_kind), static_cast<int>(r.kind))).second)
        refs.push_back(r);
  }
};

void run_check(const CheckArgs& args) {
  if (args.allow_missing)
    std::fprintf(stderr, "btfslim: note: --allow-missing is deprecated and does nothing: a poisoned relocation in dead "
                         "code no longer fails the check (--strict fails it)\n");
  const bool running = args.targets.empty();
  if (running && strict_inputs())
    fail("--btf", "none given, which means the running kernel's BTF (--strict-input takes files only)");
  std::vector<std::string> modules;
  if (!args.modules.empty()) {
    if (args.targets.size() != 1 || is_archive_path(args.targets[0]) || std::filesystem::is_directory(args.targets[0]))
      fail("--modules", "goes with one kernel: --btf VMLINUX --modules DIR");
    if (!args.base.empty()) fail("--modules", "does not go with --base: the modules are split on the --btf kernel");
  }

  // Every object is read first, each in turn, for what it asks (and to refuse a bad one before any
  // output). With one target each is then read again, checked, printed and dropped: memory stays
  // that of the largest object, however many there are. With several, the objects stay open (their
  // pages given back) and are printed once every target is done.
  std::vector<std::string> targets;
  if (running)
    targets.push_back(std::string(kRunningVmlinux));
  else
    for (TargetFile& f : expand_target_files(args.targets)) targets.push_back(std::move(f.path));
  const bool one_target = targets.size() == 1 && !is_archive_path(targets[0]);

  const AttachOptions attach = attach_options(args);
  std::vector<bool> used(attach.targets.size());
  AskedOfTargets asked;
  CheckRun run;
  run.strict = args.strict;
  // A handful of objects (kHeldObjects, what one loader usually has) is kept from the first reading
  // to the second: each parsed object costs tens of KiB, less than reading it twice.
  const bool stream = one_target && args.objects.size() > kHeldObjects;
  std::vector<bool> big_endian;
  std::vector<bool> used_optional(args.optional.size());
  for (const auto& path : args.objects) {
    auto object = BpfObject::open(path, stream ? BpfObject::Reading::Asked : BpfObject::Reading::All);
    big_endian.push_back(object->btf().big_endian());
    auto refs = kernel_references(*object, attach, &used);
    asked.add(*object, refs);
    // The programs its loader may leave out, or choose between: read now, so that a glob that names
    // nothing is refused before any output. A streamed object's are read again with it: here only
    // when there are globs to try.
    if (stream) {
      if (!args.optional.empty()) object_programs(*object, refs, args.optional, &used_optional);
      continue;
    }
    auto programs = object_programs(*object, refs, args.optional, &used_optional);
    object->release_pages();
    run.objects.push_back(std::move(object));
    run.kernel_refs.push_back(std::move(refs));
    run.programs.push_back(std::move(programs));
  }
  for (std::size_t i = 0; i < used.size(); ++i)
    if (!used[i]) fail("--attach-target", "no program '{}' in the objects", esc(attach.targets[i].first));
  for (std::size_t i = 0; i < used_optional.size(); ++i)
    if (!used_optional[i])
      fail("--optional", "'{}' matches no program of the objects (a glob of program names or sections)",
           esc(args.optional[i]));
  if (!args.modules.empty()) modules = module_arguments(args.modules);
  // After the objects, which are refused first when they are no BPF objects.
  if (!args.base.empty() && std::all_of(targets.begin(), targets.end(), is_whole_kernel_btf))
    fail("--base", "no --btf target is split BTF: {} is a whole kernel's; a base goes with a module's (.ko, "
                   "/sys/kernel/btf/MODULE)", escape(targets[0]));
  std::shared_ptr<const Btf> base;
  if (!args.base.empty()) base = load_btf(args.base);

  CheckView view;
  view.format = args.format == "json"     ? CheckFormat::Json
                : args.format == "github" ? CheckFormat::Github
                : args.format == "junit"  ? CheckFormat::Junit
                                          : CheckFormat::Table;
  view.failures_only = args.failures_only;
  OutputBuffer out;
  std::optional<CheckPrinter> printer;

  if (one_target) {
    const CoreTarget target = load_target(targets[0], base, running, modules);
    check_byte_order(args.objects, big_endian, target.main());
    const CandidateIndex index(target, asked.roots.roots());
    const std::vector<KernelRef>* all_refs = &asked.refs;
    const KernelNameIndex names(target, std::span(all_refs, 1));
    printer.emplace(view, args.objects, std::vector<std::string>{targets[0]}, args.strict, out);
    ObjectOnTarget done;  // the last object's cell, whose memory the next one's reuses
    for (std::size_t g = 0; g < args.objects.size(); ++g) {
      CheckRun one;
      one.strict = args.strict;
      one.targets = {targets[0]};
      if (stream) {
        one.objects.push_back(BpfObject::open(args.objects[g], BpfObject::Reading::Once));
        one.kernel_refs.push_back(kernel_references(*one.objects[0], attach, &used));
        one.programs.push_back(object_programs(*one.objects[0], one.kernel_refs[0], args.optional));
      } else {
        one.objects.push_back(std::move(run.objects[g]));
        one.kernel_refs.push_back(std::move(run.kernel_refs[g]));
        one.programs.push_back(std::move(run.programs[g]));
      }
      std::optional<BpfCode> code;
      one.cells.push_back({});
      one.cells[0].push_back(
          check_cell(*one.objects[0], index, names, one.kernel_refs[0], code, false, args.strict, std::move(done)));
      printer->object(one, 0, g);
      // The cell is the next object's memory (its results are the pool's, resident anyway). After a
      // large object (spare.h) the object and the cell's targets are dropped now, and what they freed
      // inside the heap given back too.
      done = std::move(one.cells[0][0]);
      if (capacity_bytes(done.results) + capacity_bytes(done.targets) > kSpareBytes) {
        one = {};
        done.targets = {};
        ::malloc_trim(0);
      }
    }
  } else {
    // Targets one at a time (a btfhub tree holds thousands), each parsed and indexed once for every
    // object, then dropped. Each object's code is read where a poisoned relocation makes reaching it
    // matter (reach.h), once for every target.
    std::vector<std::optional<BpfCode>> code(run.objects.size());
    run.cells.resize(run.objects.size());
    auto check_on = [&](const std::string& t, const CoreTarget& target) {
      check_byte_order(args.objects, big_endian, target.main());
      const CandidateIndex index(target, asked.roots.roots());
      const KernelNameIndex names(target, run.kernel_refs);
      run.targets.push_back(t);
      for (std::size_t o = 0; o < run.objects.size(); ++o) {
        run.cells[o].push_back(check_cell(*run.objects[o], index, names, run.kernel_refs[o], code[o], true, args.strict));
        run.objects[o]->release_pages();
      }
    };
    ProgressBar bar(targets.size(), "kernels");  // a file or an archive each
    for (std::size_t i = 0; i < targets.size(); ++i) {
      const std::string& t = targets[i];
      bar.update(i, t);
      if (!is_archive_path(t)) {
        check_on(t, load_target(t, base, running, modules));
        continue;
      }
      // Each raw BTF member of an archive (btfhub: one kernel per .btf.tar.xz), read and dropped in turn.
      for_each_archive_btf(t, base, [&](const std::string&, std::shared_ptr<const Btf> btf) {
        const std::string name = btf->name();
        check_on(name, base ? CoreTarget(base, {std::move(btf)}) : CoreTarget(std::move(btf)));
      });
    }
    bar.update(targets.size(), "");
    bar.clear();
    printer.emplace(view, args.objects, run.targets, args.strict, out);
    for (std::size_t o = 0; o < run.objects.size(); ++o) {
      printer->object(run, o, o);
      run.objects[o]->release_pages();
    }
  }
  printer->finish();
  out.flush();
  if (view.format == CheckFormat::Github)
    if (const char* summary = std::getenv("GITHUB_STEP_SUMMARY"); summary && *summary)
      append_step_summary(summary, printer->markdown_summary());
  if (printer->failed()) report_check_failed();
}

}  // namespace

void register_check(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "resolve the CO-RE relocations, kfuncs, ksyms, attach targets and struct_ops of BPF objects against "
      "kernels' BTF, as libbpf would on load");
  cmd->add_option("objects", args->objects, "BPF object files (.bpf.o)")->required();
  cmd->add_option("--btf", args->targets,
                  "target BTF: a file (raw BTF, vmlinux, .ko), a module name, or a directory of BTF files; "
                  "repeat for more (default: the running kernel, with its modules)")
      ->allow_extra_args(false);
  add_base_option(*cmd, args->base, "the base BTF that split targets (module BTF files) continue");
  cmd->add_option("--format,-f", args->format,
                  "table, json (one record per relocation, with a result per kernel), github (workflow commands: "
                  "an annotation per failing object and kernel, or set of kernels its failures share) or junit (XML: "
                  "a test case per object and kernel)")
      ->check(CLI::IsMember({"table", "json", "github", "junit"}));
  cmd->add_flag("--failures-only", args->failures_only,
                "show only the objects that fail on some kernel, and only what fails them (the verdict line "
                "still counts every object)");
  cmd->add_flag("--strict", args->strict,
                "also fail on poisoned relocations in dead code (where the verifier never goes, e.g. behind a "
                "failing existence check)");
  // Kept so that scripts written for it still run: dead code no longer fails without it.
  cmd->add_flag("--allow-missing", args->allow_missing,
                "deprecated, does nothing: poisoned relocations in dead code no longer fail");
  cmd->add_option("--attach-target", args->attach_targets,
                  "PROG=FUNC: the attach target a loader gives program PROG at run time "
                  "(bpf_program__set_attach_target), checked instead of the one its section names; repeat for more")
      ->type_name("PROG=FUNC")
      ->allow_extra_args(false);
  cmd->add_option("--modules", args->modules,
                  "the modules of the one --btf kernel (.ko, .ko.xz, .ko.zst, .ko.gz files, or directories of them such "
                  "as /lib/modules/RELEASE): attach targets, kfuncs, ksyms and CO-RE candidates the kernel lacks are "
                  "looked up in their BTF, as libbpf does on a running kernel")
      ->allow_extra_args(false);
  cmd->add_option("--optional", args->optional,
                  "GLOB: programs (by name, or by ELF section such as 'kprobe/*') whose loader may leave them "
                  "out: their failures are shown but not counted; repeat for more. Alternatives (the same "
                  "handler as fentry and kprobe, fexit and kretprobe, tp_btf and raw_tp) are recognised "
                  "without it: one that loads is enough")
      ->type_name("GLOB")
      ->allow_extra_args(false);
  cmd->add_flag("--no-attach", args->no_attach,
                "report attach targets (fentry/, fexit/, fmod_ret/, lsm/, tp_btf/, iter/ sections) without "
                "counting them in the verdict");
  cmd->callback([args] { run_check(*args); });
}

}  // namespace btfslim::cli
