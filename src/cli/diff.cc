// `btfslim diff OLD NEW`: what changed between two BTFs, type by type, in bloat-o-meter's format.
#include "btfslim/cli.h"
#include "btfslim/diff.h"
#include "btfslim/error.h"
#include "btfslim/input.h"

#include <sys/stat.h>

namespace btfslim::cli {
namespace {

struct DiffArgs {
  std::string old_input;
  std::string new_input;
  std::string base;
  std::string format = "table";
  bool by_kind = false;
  bool verbose = false;
};

// The same file named twice (however spelt) is read once.
bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

void run_diff(const DiffArgs& args) {
  const LoadOptions load{args.base};
  const auto old_btf = load_btf(args.old_input, load);
  const auto new_btf = same_file(resolve_input(args.old_input).path, resolve_input(args.new_input).path)
                           ? old_btf
                           : load_btf(args.new_input, load);
  const BtfDiff diff = diff_btf(*old_btf, *new_btf, args.verbose);
  DiffPrintOptions o;
  o.format = args.format == "json" ? Format::Json : args.format == "csv" ? Format::Csv : Format::Table;
  o.by_kind = args.by_kind;
  o.details = args.verbose;
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
      "diff", "compare two BTFs type by type, in the format of the kernel's scripts/bloat-o-meter");
  cmd->add_option("old", args->old_input,
                  "the BTF before: a raw BTF file, an ELF file with .BTF, 'vmlinux' or a module name")
      ->required();
  cmd->add_option("new", args->new_input, "the BTF after (the same forms)")->required();
  add_base_option(*cmd, args->base, "the base BTF both split inputs continue (a module's vmlinux)");
  cmd->add_option("--format,-f", args->format, "table, csv or json")->check(CLI::IsMember({"table", "csv", "json"}));
  cmd->add_flag("-c,--by-kind", args->by_kind, "one block per kind, as bloat-o-meter -c splits functions and data");
  cmd->add_flag("-v,--verbose", args->verbose,
                "under each changed type, what changed inside: members, enumerators, size, record and string bytes");
  cmd->callback([args] { run_diff(*args); });
}

}  // namespace btfslim::cli
