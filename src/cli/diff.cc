// `btfslim diff OLD NEW`: what changed between two BTFs: the layout of each type (--by type, --by member),
// or its BTF footprint per kind in bloat-o-meter's format (--by kind).
#include "btfslim/cli.h"
#include "btfslim/diff.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/terminal.h"

#include <sys/stat.h>

namespace btfslim::cli {
namespace {

struct DiffArgs {
  std::string old_input;
  std::string new_input;
  std::string base;
  std::string old_base, new_base;  // a base per side: one module across two kernels
  std::string format = "table";
  std::string by = "type";
  bool by_kind = false;  // the hidden --by-kind, the old name of --by kind
  bool verbose = false;
  std::size_t top = 0;
};

// The same file named twice (however spelt) is read once.
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// An option the chosen view has no use for is refused in one line before any input is read, rather than
// left out of the result: JSON holds every view (so --by picks nothing there), CSV every row (so -n cuts
// nothing), and -v adds member lines to --by type's table only.
void refuse_ignored_options(const DiffArgs& args, const CLI::App& cmd) {
  auto given = [&](const char* option) { return cmd.count(option) > 0; };
  const bool by_kind = args.by_kind || args.by == "kind";
  if (args.format == "json" && (given("--by") || given("--by-kind")))
    fail("--by", "has no effect with -f json: the JSON document holds every view");
  if (args.format != "table" && given("--top"))
    fail("--top", "has no effect with -f {}: only the table folds rows into [N others]", args.format);
  if (given("--verbose") && (args.format != "table" || by_kind || args.by == "member"))
    fail("--verbose", "has no effect here: it lists member changes under --by type's table (JSON and --by member "
                      "have them anyway)");
}

void run_diff(const DiffArgs& args) {
  // --base is both sides' base; --old-base and --new-base each one side's.
  const std::string& old_base = args.old_base.empty() ? args.base : args.old_base;
  const std::string& new_base = args.new_base.empty() ? args.base : args.new_base;
  if (!args.base.empty() && !args.old_base.empty() && !args.new_base.empty())
    fail("--base", "says nothing with both --old-base and --new-base: give one or the other");
  const auto old_btf = load_btf(args.old_input, LoadOptions{old_base});
  const bool same_base = old_base == new_base || (!old_base.empty() && !new_base.empty() && same_file(old_base, new_base));
  const auto new_btf = same_base && same_file(resolve_input(args.old_input).path, resolve_input(args.new_input).path)
                           ? old_btf
                           : load_btf(args.new_input, LoadOptions{new_base});
  DiffPrintOptions o;
  o.format = args.format == "json" ? Format::Json : args.format == "csv" ? Format::Csv : Format::Table;
  o.view = args.by_kind || args.by == "kind" ? DiffView::Kind : args.by == "member" ? DiffView::Member : DiffView::Type;
  // The footprint's rows for --by kind, the layouts for the other views; JSON has both.
  DiffParts parts;
  parts.footprint = o.format == Format::Json || o.view == DiffView::Kind;
  parts.layout = o.format == Format::Json || o.view != DiffView::Kind;
  const BtfDiff diff = diff_btf(*old_btf, *new_btf, parts);
  o.details = args.verbose;
  o.top = args.top;
  o.columns = terminal_columns(1);
  o.old_name = old_btf->name();
  o.new_name = new_btf->name();
  OutputBuffer out;
  print_diff(diff, o, out);
  out.flush();
}

}  // namespace

void register_diff(CLI::App& app) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd = app.add_subcommand(
      "diff", "compare two BTFs: each type's layout (size, members, enumerators), or their footprint per kind");
  cmd->add_option("old", args->old_input,
                  "the BTF before: a raw BTF file, an ELF file with .BTF, 'vmlinux' or a module name")
      ->required();
  cmd->add_option("new", args->new_input, "the BTF after (the same forms)")->required();
  add_base_option(*cmd, args->base, "the base BTF both split inputs continue (a module's vmlinux)");
  cmd->add_option("--old-base", args->old_base,
                  "the base the old input continues, where the sides have different bases (one module across two "
                  "kernels)");
  cmd->add_option("--new-base", args->new_base, "the base the new input continues");
  cmd->add_option("--by", args->by,
                  "type: one line per type whose layout changed (default); member: one per member change; kind: "
                  "the BTF footprint per kind, as bloat-o-meter -c")
      ->check(CLI::IsMember({"type", "kind", "member"}));
  cmd->add_option("--format,-f", args->format, "table, csv or json")->check(CLI::IsMember({"table", "csv", "json"}));
  cmd->add_option("-n,--top", args->top, "table rows; the rest fold into [N others] (default: all)")
      ->check(whole_number(0))
      ->type_name("N");
  cmd->add_flag("-v,--verbose", args->verbose, "with --by type, each member's change under its type");
  // The old spelling of --by kind, kept for scripts; not offered.
  cmd->add_flag("--by-kind", args->by_kind, "the same as --by kind")->group("");
  cmd->callback([args, cmd] {
    refuse_ignored_options(*args, *cmd);
    run_diff(*args);
  });
}

}  // namespace btfslim::cli
