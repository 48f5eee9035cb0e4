// The command line: one registration function per subcommand. Each adds its options to the app and
// returns nothing; the subcommand runs from its CLI11 callback. Commands throw InputError for bad input.
#pragma once

#include <CLI/CLI.hpp>

namespace btfslim::cli {

void register_dump(CLI::App& app);
void register_measure(CLI::App& app);

// Options every command that reads BTF shares.
struct InputArgs {
  std::string input;  // positional: path, 'vmlinux', module name; empty: the running kernel
  std::string base;   // --base
};
void add_input_options(CLI::App& cmd, InputArgs& args);

}  // namespace btfslim::cli
