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

// Options every command that reads BTF shares.
struct InputArgs {
  std::string input;  // positional: path, 'vmlinux', module name; empty: the running kernel
  std::string base;   // --base
};
void add_input_options(CLI::App& cmd, InputArgs& args);

// "struct", "FUNC_PROTO", ... as kinds; an unknown name is an InputError naming `option`.
std::vector<Kind> parse_kind_list(const std::vector<std::string>& names, std::string_view option);

}  // namespace btfslim::cli
