// btfslim's entry point: builds the command line from the subcommands and turns errors into one line
// on stderr and an exit status (2 for bad input or usage).
#include "btfslim/cli.h"
#include "btfslim/error.h"

#include <bpf/libbpf.h>
#include <fmt/format.h>

#include <cstdio>

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
    std::fprintf(stderr, "btfslim: %s\n", e.what());
    return btfslim::kExitInputError;
  } catch (const btfslim::InputError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "btfslim: %s\n", e.what());
    return btfslim::kExitInputError;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "btfslim: out of memory\n");
    return btfslim::kExitInputError;
  }
  return 0;
}
