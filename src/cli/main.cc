// btfslim's entry point: builds the command line from the subcommands and turns errors into one line
// on stderr and an exit status (2 for bad input or usage).
#include "btfslim/cli.h"
#include "btfslim/error.h"
#include "btfslim/escape.h"
#include "btfslim/input.h"
#include "btfslim/output.h"
#include "btfslim/progress.h"
#include "btfslim/terminal.h"

#include <bpf/libbpf.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <unistd.h>
#include <string>
#include <string_view>

namespace btfslim::cli {

void add_input_options(CLI::App& cmd, InputArgs& args) {
  cmd.add_option("input", args.input,
                 "BTF to read: a raw BTF file, an ELF file with .BTF (vmlinux, .ko, .bpf.o), 'vmlinux' for the "
                 "running kernel, or a module name under /sys/kernel/btf (default: the running kernel)");
  add_base_option(cmd, args.base, "the base BTF a split input continues (a module's vmlinux)");
}

CLI::Option* add_base_option(CLI::App& cmd, std::string& base, const std::string& description) {
  return cmd.add_option("-B,--base,--base-btf", base, description);
}

}  // namespace btfslim::cli

namespace {

int silence_libbpf(enum libbpf_print_level, const char*, va_list) { return 0; }

// One error line on stderr: "btfslim: " (coloured on a terminal) and the problem. An InputError is one
// line already; a usage error quotes the command line and a library's message may hold anything, so
// control bytes are escaped here too.
void print_error(const std::string& problem) {
  std::fprintf(stderr, "%s%s\n", btfslim::error_prefix().c_str(), btfslim::escape_controls(problem).c_str());
}

// Help, --version and `btfslim help` print through iostreams and stdio (the commands write through
// OutputBuffer, which reports a failed write): one of those that failed (stdout on a full disk, under
// ulimit -f) is the same error, not exit 0 with half a page.
int stdio_written(int status) {
  std::cout.flush();
  if (std::fflush(stdout) == 0 && !std::ferror(stdout) && std::cout.good()) return status;
  // errno is the failed write's: this flush's, or the earlier one's that set the error flag (no call
  // that succeeds clears it).
  try {
    btfslim::fail_output(STDOUT_FILENO, "stdout", errno ? errno : EIO);
  } catch (const btfslim::InputError& e) {
    print_error(e.what());
  }
  return btfslim::kExitInputError;
}

}  // namespace

int main(int argc, char** argv) {
  // Under a file-size limit (ulimit -f) a write past it raises SIGXFSZ, whose default kills the process
  // in the middle of an output. Ignored, the write fails with EFBIG instead and is reported as a full
  // disk is: one line naming the file, exit 2, no partial output left. SIGPIPE keeps its default, as in
  // coreutils: `btfslim dump | head` ends quietly when head does.
  std::signal(SIGXFSZ, SIG_IGN);
  btfslim::note_output_start(STDOUT_FILENO);
  libbpf_set_print(silence_libbpf);
  CLI::App app("btfslim: inspect Linux BTF and make it small", "btfslim");
  app.require_subcommand(1);
  // The commands, one file each in src/cli/. A new one also needs its page in man/ and its words in
  // completions/: the cli tests fail until they are there.
  struct Command {
    std::string_view name;
    void (*add)(CLI::App&);
  };
  static constexpr Command kCommands[] = {
      {"dump", btfslim::cli::register_dump},         {"measure", btfslim::cli::register_measure},
      {"check", btfslim::cli::register_check},       {"minimize", btfslim::cli::register_minimize},
      {"diff", btfslim::cli::register_diff},         {"dedup", btfslim::cli::register_dedup},
      {"budget", btfslim::cli::register_budget},
  };
  // Building every command's options costs about a millisecond, a tenth of a `check` or a per-kind
  // `measure`: when the first argument names a command, only that one is built. Anything else (help,
  // --version, a typo to suggest a command for) gets them all.
  const std::string_view first = argc > 1 ? argv[1] : "";
  const bool one = std::any_of(std::begin(kCommands), std::end(kCommands), [&](const Command& c) { return c.name == first; });
  for (const Command& c : kCommands)
    if (!one || c.name == first) c.add(app);
  // Every command reads inputs, and every one takes them as strictly when asked; long work draws a
  // progress line on a terminal's stderr, unless told not to.
  for (CLI::App* c : app.get_subcommands([](CLI::App*) { return true; })) {
    c->add_flag_callback("--strict-input", [] { btfslim::set_strict_inputs(true); },
                         "inputs are files only: no input, 'vmlinux' or a module name that is no file here are "
                         "errors instead of the running kernel's BTF");
    c->add_flag_callback("-q,--quiet", [] { btfslim::set_progress_quiet(true); },
                         "no progress line on stderr (drawn only when stderr is a terminal, for work that takes "
                         "seconds: many kernels, modules, closures)");
  }
  // After the commands: --version, `help` and the option listing the cli tests read.
  btfslim::cli::register_help(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return stdio_written(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return stdio_written(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return stdio_written(app.exit(e));
  } catch (const CLI::ParseError& e) {
    print_error(btfslim::cli::usage_problem(app, e, argc, argv));
    return btfslim::kExitInputError;
  } catch (const btfslim::InputError& e) {
    std::fflush(stdout);
    print_error(e.what());
    return btfslim::kExitInputError;
  } catch (const std::bad_alloc&) {
    print_error("out of memory");
    return btfslim::kExitInputError;
  } catch (const std::exception& e) {
    // A bug rather than bad input, but still one line and a status instead of std::terminate's abort.
    print_error(std::string("internal error: ") + e.what());
    return 1;
  }
  // A check that failed: the report said what; the status tells scripts.
  return stdio_written(btfslim::check_failed_reported() ? btfslim::kExitCheckFailed : 0);
}
