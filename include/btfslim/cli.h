// The command line: one registration function per subcommand. Each adds its options to the app and
// returns nothing; the subcommand runs from its CLI11 callback. Commands throw InputError for bad input.
#pragma once

#include "btfslim/btf.h"

#include <CLI/CLI.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace btfslim::cli {

void register_dump(CLI::App& app);
void register_measure(CLI::App& app);
void register_check(CLI::App& app);
void register_minimize(CLI::App& app);
void register_diff(CLI::App& app);
void register_dedup(CLI::App& app);
void register_budget(CLI::App& app);

// `--version`, the help footer, `btfslim help [COMMAND]` and the hidden `btfslim __options` (every
// option of every command, one per line, which the cli tests check the manual and completions against).
// Registered after the commands, so that `help` comes last in lists.
void register_help(CLI::App& app);

// The commands people see, in the order they were registered (hidden ones left out).
std::vector<const CLI::App*> commands(const CLI::App& app);

// The one-line message for a command line CLI11 rejected, naming the unknown command or option and
// suggesting the closest one that exists.
std::string usage_problem(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv);
std::string unknown_command_problem(const CLI::App& app, std::string_view name);

// Edit distance counting a swap of neighbours as one edit; the candidate close enough to `word` to be
// what was meant (leading dashes ignored), or "".
std::size_t edit_distance(std::string_view a, std::string_view b);
std::string closest(std::string_view word, const std::vector<std::string>& candidates);

// What `--version` prints: btfslim's version, libbpf's at run time and at build time, the features.
std::string version_text();

// Options every command that reads BTF shares.
struct InputArgs {
  std::string input;  // positional: path, 'vmlinux', module name; empty: the running kernel
  std::string base;   // --base
};
void add_input_options(CLI::App& cmd, InputArgs& args);
// "-B, --base, --base-btf (bpftool's name) FILE": the base the command's *input* continues, the one
// meaning -B has on every command (a command that writes split BTF names its output's base --split-base).
CLI::Option* add_base_option(CLI::App& cmd, std::string& base, const std::string& description);

// --attach-target PROG=FUNC, split; an InputError where either side is missing.
std::vector<std::pair<std::string, std::string>> parse_attach_targets(const std::vector<std::string>& args);

// The check of a count (-n, -j): a whole number from `min` to `max`, without sign. CLI11's own checks
// say "Could not convert: --top = abc", print a range of 300 digits, or take -1 as the largest count.
CLI::Validator whole_number(std::uint64_t min, std::uint64_t max = UINT64_MAX);

// `--kind struct union` leaves `union` to be read as the input: an input that is no file but a kind's
// name, after `option` was given, is an InputError saying that the option takes its kinds comma-separated.
void refuse_kind_as_input(const std::string& input, const std::vector<std::string>& kinds, std::string_view option);

// libbpf opens an object only where it runs on a kernel of the object's byte order (endianness
// mismatch): an object of the other order than `kernel` (objects[i] is big-endian when big_endian[i]) is
// refused whole, in one line naming it, not poisoned relocation by relocation.
void check_byte_order(const std::vector<std::string>& objects, const std::vector<bool>& big_endian, const Btf& kernel);

// A note on stderr when the kernel BTF `arg` names is a BPF program's object (one with .BTF.ext): its
// BTF holds only that object's types, which no loader resolves against. Allowed, but said. (BTF that
// clang wrote from C types alone has no programs: the tests' targets are made so.)
void note_if_bpf_object(const std::string& arg);

// "struct", "FUNC_PROTO", ... as kinds; an unknown name is an InputError naming `option`.
std::vector<Kind> parse_kind_list(const std::vector<std::string>& names, std::string_view option);

}  // namespace btfslim::cli
