// `btfslim dedup`: one BTF, or several merged, deduplicated by libbpf; what was removed; --check as a CI
// guard that a BTF has no duplicate types.
#include "btfslim/cli.h"
#include "btfslim/dedup.h"
#include "btfslim/error.h"
#include "btfslim/input.h"
#include "btfslim/output.h"

#include <sys/stat.h>

namespace btfslim::cli {
namespace {

struct DedupArgs {
  std::vector<std::string> inputs;
  std::string base;
  std::string output;
  bool check = false;
  std::string format = "table";
  std::size_t top = 10;
};

struct Inputs {
  std::vector<std::shared_ptr<const Btf>> btfs;
  std::vector<std::span<const std::uint8_t>> exts;  // each one's .BTF.ext, empty when none
};

// Each input on the one base: --base for all of them, else each as `load_btf` opens it (a .ko or a
// module under /sys/kernel/btf on the running vmlinux).
Inputs load_inputs(const DedupArgs& args) {
  std::vector<std::string> names = args.inputs;
  if (names.empty()) names.push_back("");  // the running kernel
  Inputs inputs;
  std::shared_ptr<const Btf> base;
  if (!args.base.empty()) base = load_btf_file(resolve_input(args.base).path, nullptr);
  for (const std::string& name : names) {
    std::span<const std::uint8_t> ext;
    inputs.btfs.push_back(base ? load_btf_file(resolve_input(name).path, base, &ext)
                               : load_btf(name, LoadOptions{.ext = &ext}));
    inputs.exts.push_back(ext);
  }
  return inputs;
}

// The output must not be an input or the base, however spelt: compared by device and inode.
void refuse_overwriting_an_input(const std::string& output, const std::vector<std::shared_ptr<const Btf>>& inputs) {
  struct stat out_st {};
  if (output == "-" || ::stat(output.c_str(), &out_st) != 0) return;
  auto same = [&](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && st.st_dev == out_st.st_dev && st.st_ino == out_st.st_ino;
  };
  for (const auto& in : inputs) {
    if (same(in->name())) fail(output, "is an input ({}): refusing to overwrite it", esc(in->name()));
    if (in->is_split() && same(in->base()->name()))
      fail(output, "is the base ({}): refusing to overwrite it", esc(in->base()->name()));
  }
}

void run_dedup(const DedupArgs& args) {
  if (args.output.empty() && !args.check)
    fail("dedup", "-o OUT is required (or --check, which writes nothing)");
  // btf__dedup allocates per type: a process that never had a second thread allocates without locks.
  Btf::allow_second_thread(false);
  const Inputs loaded = load_inputs(args);
  const auto& inputs = loaded.btfs;
  if (!args.output.empty()) refuse_overwriting_an_input(args.output, inputs);

  // One BPF object: its .BTF.ext goes along, so that dedup removes only what the object can lose.
  DedupResult result = dedup(inputs, inputs.size() == 1 ? loaded.exts.front() : std::span<const std::uint8_t>());

  DedupReportOptions options;
  options.output = args.output;
  options.top = args.top;
  options.format = args.format == "json" ? Format::Json : Format::Table;
  rank_duplicates(result.duplicates, options.format == Format::Json ? result.duplicates.size() : options.top);
  // With the BTF on stdout, the report goes to stderr.
  OutputBuffer report(args.output == "-" ? 2 : 1, args.output == "-" ? "stderr" : "stdout");
  const auto raw = result.output->raw();
  const std::string_view bytes(reinterpret_cast<const char*>(raw.data()), raw.size());
  if (args.output == "-") {
    OutputBuffer out;
    out.write(bytes);
    out.flush();
  } else if (!args.output.empty()) {
    write_file_atomically(args.output, bytes);
  }
  print_dedup(inputs, result, options, report);
  if (args.check && options.format == Format::Table) {
    if (result.removed_types() == 0)
      report.print("\ncheck: no duplicate types: deduplicated\n");
    else
      report.print("\ncheck: dedup would remove {} types ({} bytes): not deduplicated\n",
                   with_commas(result.removed_types()),
                   with_commas(result.before.total_bytes - result.after.total_bytes));
  }
  report.flush();
  if (args.check && result.removed_types() > 0) report_check_failed();
}

}  // namespace

void register_dedup(CLI::App& app) {
  auto args = std::make_shared<DedupArgs>();
  CLI::App* cmd = app.add_subcommand(
      "dedup", "deduplicate BTF with libbpf (one input, or several merged) and report what was removed");
  cmd->add_option("inputs", args->inputs,
                  "BTF to deduplicate: raw BTF, an ELF with .BTF (.bpf.o, pahole -J output, .ko), 'vmlinux' or a "
                  "module name; several are merged first (default: the running kernel)");
  add_base_option(*cmd, args->base, "the base BTF the inputs are split on (a module's vmlinux)");
  auto* output = cmd->add_option("--output,-o", args->output, "where to write the deduplicated BTF ('-': standard output)");
  cmd->add_flag("--check", args->check,
                "write nothing; exit 1 when dedup would remove a type, 0 when there is none to remove")
      ->excludes(output);
  cmd->add_option("--format,-f", args->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("-n,--top", args->top, "rows of the largest duplicated types in the table (default 10)")
      ->check(whole_number(0))
      ->type_name("N");
  cmd->callback([args, cmd] {
    // JSON lists every duplicated type: -n would cut nothing there.
    if (args->format == "json" && cmd->count("--top"))
      fail("--top", "has no effect with -f json, which lists every duplicated type");
    run_dedup(*args);
  });
}

}  // namespace btfslim::cli
