// btfslim's entry point: builds the command line from the subcommands and turns errors into one line
// on stderr and an exit status (2 for bad input or usage).
#include "btfslim/cli.h"
#include "btfslim/error.h"

#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <string>
#include <vector>

#ifndef BTFSLIM_VERSION
#define BTFSLIM_VERSION "0.0.0"
#endif

namespace btfslim::cli {

void add_input_options(CLI::App& cmd, InputArgs& args) {
  cmd.add_option("input", args.input,
                 "BTF to read: a raw BTF file, an ELF file with .BTF (vmlinux, .ko, .bpf.o), 'vmlinux' for the "
                 "running kernel, or a module name under /sys/kernel/btf (default: the running kernel)");
  cmd.add_option("--base,-B", args.base, "the base BTF a split input continues (a module's vmlinux)");
}

}  // namespace btfslim::cli

namespace {

int silence_libbpf(enum libbpf_print_level, const char*, va_list) { return 0; }

// Error lines are one line even when a file name or a library's message holds a line break.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

// CLI11 reports a misspelt command, or an option it does not know before the command, as a missing
// command ("A subcommand is required"): name the argument instead.
std::string usage_problem(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  if (!dynamic_cast<const CLI::RequiredError*>(&e) || argc < 2 || !app.get_subcommands().empty()) return e.what();
  if (argv[1][0] == '-') return fmt::format("unknown option '{}' (see btfslim --help)", argv[1]);
  std::vector<std::string> names;
  for (const CLI::App* c : app.get_subcommands({})) names.push_back(c->get_name());
  return fmt::format("unknown command '{}' (commands: {}; see btfslim --help)", argv[1], fmt::join(names, ", "));
}

}  // namespace

int main(int argc, char** argv) {
  libbpf_set_print(silence_libbpf);
  CLI::App app("btfslim: inspect Linux BTF and make it small", "btfslim");
  app.set_version_flag("--version,-V",
                       fmt::format("btfslim {} (libbpf {}.{})", BTFSLIM_VERSION, libbpf_major_version(),
                                   libbpf_minor_version()));
  app.require_subcommand(1);
  btfslim::cli::register_dump(app);
  btfslim::cli::register_measure(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "btfslim: %s\n", one_line(usage_problem(app, e, argc, argv)).c_str());
    return btfslim::kExitInputError;
  } catch (const btfslim::InputError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "btfslim: %s\n", one_line(e.what()).c_str());
    return btfslim::kExitInputError;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "btfslim: out of memory\n");
    return btfslim::kExitInputError;
  } catch (const std::exception& e) {
    // A bug rather than bad input, but still one line and a status instead of std::terminate's abort.
    std::fprintf(stderr, "btfslim: internal error: %s\n", one_line(e.what()).c_str());
    return 1;
  }
  return 0;
}
