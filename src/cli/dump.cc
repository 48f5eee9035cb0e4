// `btfslim dump`: print types as bpftool does, as JSON, or as C.
#include "btfslim/cli.h"
#include "btfslim/dump.h"
#include "btfslim/error.h"
#include "btfslim/input.h"

namespace btfslim::cli {
namespace {

struct DumpArgs {
  InputArgs in;
  std::string format = "raw";
  std::vector<std::string> ids;
  std::vector<std::string> names;
  std::vector<std::string> kinds;
};

void run_dump(const DumpArgs& args) {
  TypeSelection selection;
  for (const auto& list : args.ids) {
    auto ids = parse_id_list(list, "--id");
    selection.ids.insert(selection.ids.end(), ids.begin(), ids.end());
  }
  selection.names = name_patterns(args.names);
  selection.kinds = parse_kind_list(args.kinds, "--kind");
  refuse_kind_as_input(args.in.input, args.kinds, "--kind");
  const auto btf = load_btf(args.in.input, {args.in.base});
  selection.require_names(*btf);
  OutputBuffer out;
  if (args.format == "raw")
    dump_raw(*btf, selection, out);
  else if (args.format == "json")
    dump_json(*btf, selection, out);
  else
    dump_c(*btf, selection, out);
  out.flush();
}

}  // namespace

void register_dump(CLI::App& app) {
  auto args = std::make_shared<DumpArgs>();
  CLI::App* cmd = app.add_subcommand("dump", "print the types of a BTF (bpftool's raw format, JSON or C)");
  add_input_options(*cmd, args->in);
  cmd->add_option("--format,-f", args->format, "raw (bpftool btf dump's format), json, or c (a vmlinux.h)")
      ->check(CLI::IsMember({"raw", "json", "c"}));
  // One value per occurrence (repeat the option for more): a vector option would otherwise swallow the
  // input that follows it, as in `dump --id 5 vmlinux`.
  cmd->add_option("--id", args->ids, "only these type ids: 5, 5-9, 5,7,10-12")->allow_extra_args(false);
  cmd->add_option("--name", args->names, "only types with this name: NAME, 'struct NAME', a glob (task_*)")->allow_extra_args(false);
  cmd->add_option("--kind", args->kinds, "only types of these kinds, comma-separated: struct,union,enum,typedef,func,...")
      ->type_name("KINDS")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->callback([args] { run_dump(*args); });
}

}  // namespace btfslim::cli
