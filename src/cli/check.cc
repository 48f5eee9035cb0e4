// `btfslim check`: will these BPF objects load on these kernels? Resolves every CO-RE relocation of
// each object against each target as libbpf would, follows each program as the verifier would with
// the values they give (a poisoned relocation fails only where it is reached), checks what else its load
// resolves against kernel BTF (kfunc and ksym externs, attach targets, struct_ops maps: loader.h), and
// says what fails where.
//
// Objects are read once; targets one at a time (a btfhub tree holds thousands), each parsed once and
// indexed once for all objects, then dropped before the next.
#include "btfslim/archive.h"
#include "btfslim/check.h"
#include "btfslim/ci_text.h"
#include "btfslim/cli.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/loader.h"
#include "btfslim/targets.h"

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <optional>
#include <unordered_map>

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
  if (base) return CoreTarget(base, {load_btf_file(resolve_input(arg).path, base)});
  auto btf = load_btf(arg);
  // A module's split BTF found with its vmlinux (a /sys/kernel/btf module): search vmlinux first.
  if (btf->is_split()) return CoreTarget(btf->base_shared(), {btf});
  return CoreTarget(btf);
}

void run_check(const CheckArgs& args) {
  if (args.allow_missing)
    std::fprintf(stderr, "btfslim: note: --allow-missing is deprecated and does nothing: a poisoned relocation in dead "
                         "code no longer fails the check (--strict fails it)\n");
  CheckRun run;
  run.strict = args.strict;
  // Objects are read, then worked on, one at a time: each gives its pages back after each pass over it
  // (release_pages), so that many objects hold no more memory than the largest.
  for (const auto& path : args.objects) {
    run.objects.push_back(BpfObject::open(path));
    run.objects.back()->release_pages();
  }
  std::vector<const BpfObject*> objects;
  // Each object's code, read where a poisoned relocation makes reaching it matter (reach.h), once for
  // every target, along with the first resolution that has one; with one target, dropped after it.
  std::vector<std::optional<BpfCode>> code(run.objects.size());
  for (const auto& o : run.objects) objects.push_back(o.get());
  // What the loader resolves against kernel BTF besides CO-RE: kfuncs, ksyms, attach targets, struct_ops.
  const AttachOptions attach = attach_options(args);
  std::vector<bool> used(attach.targets.size());
  for (const auto& o : run.objects) {
    run.kernel_refs.push_back(kernel_references(*o, attach, &used));
    o->release_pages();
  }
  for (std::size_t i = 0; i < used.size(); ++i)
    if (!used[i]) fail("--attach-target", "no program '{}' in the objects", esc(attach.targets[i].first));

  const bool running = args.targets.empty();
  std::vector<std::string> modules;
  if (!args.modules.empty()) {
    if (args.targets.size() != 1 || is_archive_path(args.targets[0]) || std::filesystem::is_directory(args.targets[0]))
      fail("--modules", "goes with one kernel: --btf VMLINUX --modules DIR");
    if (!args.base.empty()) fail("--modules", "does not go with --base: the modules are split on the --btf kernel");
    modules = module_arguments(args.modules);
  }
  std::vector<std::string> targets;
  if (running)
    targets.push_back(std::string(kRunningVmlinux));
  else
    for (TargetFile& f : expand_target_files(args.targets)) targets.push_back(std::move(f.path));
  std::shared_ptr<const Btf> base;
  if (!args.base.empty()) base = load_btf(args.base);

  run.cells.resize(run.objects.size());
  auto check_on = [&](const std::string& t, const CoreTarget& target) {
    const CandidateIndex index(target, objects);
    const KernelNameIndex names(target, run.kernel_refs);
    run.targets.push_back(t);
    for (std::size_t o = 0; o < objects.size(); ++o) {
      ObjectOnTarget cell;
      std::optional<BpfCodeReader> along;
      if (!code[o]) along.emplace(*objects[o]);
      cell.results = resolve_object(*objects[o], index, nullptr, along ? &*along : nullptr);
      const bool poisoned = any_poisoned(cell.results);
      if (poisoned && !code[o]) code[o].emplace(along->finish());
      mark_reachability(cell, poisoned ? &*code[o] : nullptr);
      count_outcomes(cell, run.strict);
      if (targets.size() == 1) code[o].reset();
      cell.kernel_refs = resolve_kernel_refs(*objects[o], run.kernel_refs[o], names);
      cell.kernel_refs_shown = names.has_functions();
      // The target is dropped after this loop: keep the roots that matched, named, not the paths into
      // it; once for each list of matches (relocations asking the same question share theirs). A
      // question's last list is tried first: it is nearly always the one.
      std::unordered_map<const void*, std::pair<Matches, std::uint32_t>> kept;
      struct Last {
        const void* identity = nullptr;
        const std::pair<Matches, std::uint32_t>* kept = nullptr;
      };
      std::vector<Last> last(objects[o]->question_count());
      cell.target_names.emplace_back();
      cell.targets.reserve(cell.results.size());
      const auto relocations = objects[o]->relocations();
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
      run.cells[o].push_back(std::move(cell));
      objects[o]->release_pages();
    }
  };
  for (const std::string& t : targets) {
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

  OutputBuffer out;
  CheckView view;
  view.format = args.format == "json"     ? CheckFormat::Json
                : args.format == "github" ? CheckFormat::Github
                : args.format == "junit"  ? CheckFormat::Junit
                                          : CheckFormat::Table;
  view.failures_only = args.failures_only;
  print_check(run, view, out);
  out.flush();
  if (view.format == CheckFormat::Github)
    if (const char* summary = std::getenv("GITHUB_STEP_SUMMARY"); summary && *summary)
      append_step_summary(summary, check_markdown_summary(run));
  if (check_failed(run)) report_check_failed();
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
                  "an annotation per failing object and kernel) or junit (XML: a test case per object and kernel)")
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
  cmd->add_flag("--no-attach", args->no_attach,
                "report attach targets (fentry/, fexit/, fmod_ret/, lsm/, tp_btf/, iter/ sections) without "
                "counting them in the verdict");
  cmd->callback([args] { run_check(*args); });
}

}  // namespace btfslim::cli
