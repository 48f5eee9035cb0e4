// `btfslim measure`: where the bytes of a BTF go, what each type pulls in and keeps alive, and what
// the kernel keeps in memory for it.
#include "btfslim/btf_ext.h"
#include "btfslim/cli.h"
#include "btfslim/error.h"
#include "btfslim/footprint.h"
#include "btfslim/input.h"
#include "btfslim/report.h"
#include "btfslim/targets.h"

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <unordered_map>

namespace btfslim::cli {
namespace {

struct MeasureArgs {
  InputArgs in;
  std::string format = "table";
  std::string by = "default";
  std::string sort = "retained";
  std::size_t top = 20;
  bool all = false;
  bool closure = false;
  std::vector<std::string> kinds;
  std::vector<std::string> names;
  std::string type;
  std::vector<std::string> without;
  std::string kernel_model = "builtin";
  std::string resident_base;
  std::vector<std::string> modules;
  bool modules_given = false;
  std::string svg;
};

Format parse_format(const std::string& f) {
  return f == "json" ? Format::Json : f == "csv" ? Format::Csv : Format::Table;
}

// Module BTFs named on the command line (a directory stands for every module under it, as a kernel's
// modules tree: .ko, and compressed .ko.xz, .ko.zst, .ko.gz), or every module under /sys/kernel/btf,
// sorted by name. CLI11 gives a bare --modules as one empty value.
std::vector<std::string> module_paths(std::vector<std::string> given) {
  std::erase(given, std::string());
  if (!given.empty()) return module_arguments(given);
  std::vector<std::string> paths;
  const std::string dir(kSysBtfDir);
  DIR* d = ::opendir(dir.c_str());
  if (!d) fail(dir, "cannot list module BTFs: the running kernel has no /sys/kernel/btf; name module files instead");
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != ".." && name != "vmlinux") paths.push_back(dir + "/" + name);
  }
  ::closedir(d);
  if (paths.empty())
    fail(dir, "holds no module BTF (no module with BTF is loaded, or the kernel has none): name module files after --modules");
  std::sort(paths.begin(), paths.end());
  return paths;
}

// A resident base stands for part of the kernel measured (a minimized BTF of it): every named struct,
// union, enum and integer it has, the kernel has, of the same kind and size. One of another kernel is
// refused, naming the first type that tells them apart: its counts would be subtracted from the wrong
// kernel's.
void check_resident_base(const Btf& kernel, const Btf& base) {
  auto sized = [](Kind k) { return k == Kind::Struct || k == Kind::Union || k == Kind::Enum || k == Kind::Enum64 || k == Kind::Int; };
  std::unordered_map<std::string_view, std::pair<Kind, std::uint32_t>> in_kernel;
  for (TypeId id = 1; id < kernel.end_id(); ++id) {
    const TypeView t = kernel.type(id);
    if (t.name_off() != 0 && sized(t.kind())) in_kernel.try_emplace(kernel.str(t.name_off()), t.kind(), t.size());
  }
  if (base.end_id() > kernel.end_id())
    fail(base.name(), "is no resident base of {}: it has more types ({}) than the kernel ({})", esc(kernel.name()),
         base.end_id() - 1, kernel.end_id() - 1);
  for (TypeId id = base.first_id(); id < base.end_id(); ++id) {
    const TypeView t = base.type(id);
    if (t.name_off() == 0 || !sized(t.kind())) continue;
    const std::string_view name = base.str(t.name_off());
    const auto it = in_kernel.find(name);
    if (it == in_kernel.end() || it->second.first != t.kind())
      fail(base.name(), "is no resident base of {}: it has no {} '{}'", esc(kernel.name()), kind_name(t.kind()), esc(name));
    if (it->second.second != t.size())
      fail(base.name(), "is no resident base of {}: {} '{}' is {} bytes there, {} here (another kernel's?)",
           esc(kernel.name()), kind_name(t.kind()), esc(name), it->second.second, t.size());
  }
}

// Every option either changes what this command line prints or is refused here, in one line and before
// any input is read: an option the chosen view has no use for is a mistake about what it does, not
// something to ignore. The views: --modules, --type, --without, else the tables --by picks (the kinds and
// the top types by default; CSV is one table, the kinds unless --by says otherwise).
void refuse_ignored_options(const MeasureArgs& args, const CLI::App& cmd) {
  auto given = [&](const char* option) { return cmd.count(option) > 0; };
  // `option` has nothing to do in `view`: says so, naming what the view is.
  auto refuse_in = [&](std::string_view view, std::initializer_list<const char*> options, std::string_view why) {
    for (const char* option : options)
      if (given(option)) fail(option, "{} with {}: {}", "has no effect", view, why);
  };
  if (given("--modules")) {
    refuse_in("--modules", {"--type", "--without", "--kind", "--name", "--sort", "--closure", "--kernel-model",
                            "--resident-base", "--svg"},
              "it compares whole module BTFs, largest first (and --by type: only the types they each carry)");
    if (given("--by") && args.by != "type" && args.by != "default")
      fail("--by", "{} with --modules: its views are the modules (the default) and the types they each carry (type)",
           args.by);
    if (given("--all") && given("--top")) fail("--top", "has no effect with --all, which lists every row");
    return;
  }
  if (given("--type")) {
    refuse_in("--type", {"--without", "--by", "--sort", "--top", "--all", "--closure", "--kind", "--name",
                         "--kernel-model"},
              "it shows that one type in detail");
    return;
  }
  if (given("--without")) {
    refuse_in("--without", {"--by", "--sort", "--top", "--all", "--closure", "--kind", "--name", "--kernel-model"},
              "it shows the BTF without those kinds, kind by kind");
    return;
  }
  if (args.by == "kind")
    refuse_in("--by kind", {"--sort", "--top", "--all", "--closure", "--kind", "--name"},
              "the kind table has a row per kind, all of them");
  if (args.by == "prefix")
    refuse_in("--by prefix", {"--sort", "--closure"}, "prefixes are ranked by own bytes and have no closure");
  if (args.format == "csv" && args.by == "default") {
    refuse_in("-f csv", {"--sort", "--top", "--all", "--closure", "--kind", "--name"},
              "CSV is one table, the kinds unless --by type (or prefix) asks for another");
  }
  if (args.format == "csv" && given("--kernel-model"))
    fail("--kernel-model", "has no effect with -f csv: CSV holds the table --by picks, not the kernel's memory");
  if (given("--closure") && !args.all)
    fail("--closure", "has no effect without --all: the top rows always have their closure bytes");
  if (given("--all") && given("--top")) fail("--top", "has no effect with --all, which lists every row");
}

void run_modules(const MeasureArgs& args, Format format, OutputBuffer& out) {
  std::vector<std::string> files = module_paths(args.modules);
  if (!args.in.input.empty()) files.insert(files.begin(), args.in.input);
  std::shared_ptr<const Btf> base;
  if (!args.in.base.empty()) base = load_btf(args.in.base);
  std::vector<std::shared_ptr<const Btf>> modules;
  for (const auto& f : files) {
    if (base)
      modules.push_back(load_btf_file(resolve_input(f).path, base));
    else
      modules.push_back(load_btf(f));
    if (!modules.back()->is_split()) fail(f, "is not a module's (split) BTF; pass --base for module files");
  }
  print_modules(modules, format, args.all ? SIZE_MAX : args.top, args.by == "type", out);
}

void run_measure(const MeasureArgs& args) {
  const Format format = parse_format(args.format);
  OutputBuffer out;
  if (args.modules_given) {
    run_modules(args, format, out);
    out.flush();
    return;
  }

  MeasureOptions o;
  o.format = format;
  o.by = args.by == "kind"     ? MeasureBy::Kind
         : args.by == "type"   ? MeasureBy::Type
         : args.by == "prefix" ? MeasureBy::Prefix
                               : MeasureBy::KindsAndTypes;
  o.sort = args.sort == "own" ? MeasureSort::Own : MeasureSort::Retained;
  o.top = args.top;
  o.all = args.all;
  o.closure_all = args.closure;
  o.filter.kinds = parse_kind_list(args.kinds, "--kind");
  o.filter.names = name_patterns(args.names);
  const auto without = parse_kind_list(args.without, "--without");
  refuse_kind_as_input(args.in.input, args.kinds, "--kind");
  refuse_kind_as_input(args.in.input, args.without, "--without");
  o.delivery.enabled = args.kernel_model == "module";
  if (!args.resident_base.empty()) {
    if (!o.delivery.enabled) fail("--resident-base", "goes with --kernel-model module");
    o.delivery.resident_base = load_btf(args.resident_base);
  }

  RecordNames names;
  std::span<const std::uint8_t> ext_section;
  const auto btf = load_btf(args.in.input, {args.in.base, &names, &ext_section});
  if (o.delivery.resident_base) check_resident_base(*btf, *o.delivery.resident_base);
  o.filter.require_names(*btf);
  // A BPF object's .BTF.ext names strings of its own: they are its, not unreferenced.
  std::optional<BtfExtReferences> ext;
  if (!ext_section.empty()) ext = read_btf_ext_references(*btf, ext_section, btf->name() + ": .BTF.ext");
  // The per-kind roll-up needs no reference graph; everything else does.
  const bool kinds_roll_up = o.by == MeasureBy::Kind || (o.by == MeasureBy::KindsAndTypes && format == Format::Csv);
  const bool kinds_only = kinds_roll_up && format != Format::Json && args.svg.empty() && args.type.empty() &&
                          without.empty();
  const Footprint fp(*btf, kinds_only ? Footprint::Depth::Kinds : Footprint::Depth::Full, std::move(names),
                     ext ? &*ext : nullptr);
  // A --type that names no type is refused before the picture is written: an error writes nothing.
  if (!args.type.empty()) find_types(*btf, args.type, "--type");
  if (!args.svg.empty()) write_file_atomically(args.svg, render_svg(*btf, fp));
  if (!args.type.empty())
    print_type_detail(*btf, fp, args.type, format, out);
  else if (!without.empty())
    print_without(*btf, fp, without, format, out);
  else
    print_measure(*btf, fp, o, out);
  out.flush();
}

}  // namespace

void register_measure(CLI::App& app) {
  auto args = std::make_shared<MeasureArgs>();
  CLI::App* cmd = app.add_subcommand(
      "measure", "where the bytes of a BTF go: by kind and by type, what each pulls in and keeps alive, kernel memory");
  add_input_options(*cmd, args->in);
  cmd->add_option("--format,-f", args->format, "table, csv or json")->check(CLI::IsMember({"table", "csv", "json"}));
  cmd->add_option("--by", args->by, "kind, type or prefix (default: kinds, then the top types)")
      ->check(CLI::IsMember({"default", "kind", "type", "prefix"}));
  cmd->add_option("--sort", args->sort, "rank types by own or retained bytes (default retained)")
      ->check(CLI::IsMember({"own", "retained"}));
  cmd->add_option("-n,--top", args->top, "show this many types; the rest fold into [N others] (default 20)")
      ->check(whole_number(0))
      ->type_name("N");
  cmd->add_flag("--all", args->all, "list every type (JSON: all types; closure only with --closure)");
  cmd->add_flag("--closure", args->closure, "with --all: compute closure bytes for every listed type (slow)");
  // Vector options take one value per occurrence so that they do not swallow the input that follows.
  cmd->add_option("--kind", args->kinds, "only types of these kinds, comma-separated: struct,union,...")
      ->type_name("KINDS")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_option("--name", args->names, "only types whose name matches this glob")->allow_extra_args(false);
  cmd->add_option("--type", args->type, "one type in detail: NAME, 'struct NAME' or an id");
  cmd->add_option("--without", args->without,
                  "what the BTF weighs without these kinds (comma-separated: func,func_proto) and what only they keep alive")
      ->type_name("KINDS")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_option("--kernel-model", args->kernel_model,
                  "builtin (vmlinux BTF in the image) or module (vmlinux BTF delivered as a module)")
      ->check(CLI::IsMember({"builtin", "module"}));
  cmd->add_option("--resident-base", args->resident_base,
                  "with --kernel-model module: a small base that stays resident (e.g. from btfslim minimize)");
  cmd->add_option("--modules", args->modules,
                  "compare module BTFs: these files or directories of .ko files, or every module under /sys/kernel/btf")
      ->expected(0, -1);
  cmd->add_option("--svg", args->svg,
                  "also write a picture to this file: the kind table to scale, the dominator tree, the largest types");
  cmd->callback([args, cmd] {
    args->modules_given = cmd->count("--modules") > 0;
    refuse_ignored_options(*args, *cmd);
    run_measure(*args);
  });
}

}  // namespace btfslim::cli
