// Errors that stop a command.
//
// Every problem with what the user gave us (a file, an option) is an `InputError` carrying the name of
// the thing that is wrong; `main` catches it once, prints one line and exits with status 2. Nothing
// below `main` prints errors or calls exit(). Names from inputs in a problem's text are escaped where it
// is formatted (esc(name)); the error escapes its subject itself and any control byte left in the
// problem, so that its text is always one printable line.
#pragma once

#include "btfslim/escape.h"

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace btfslim {

inline constexpr int kExitInputError = 2;
inline constexpr int kExitCheckFailed = 1;

// A command whose report is printed and whose verdict is "no" (check: a relocation fails; budget: a
// limit is exceeded; dedup --check: something would go) says so here as it returns, and main() exits
// kExitCheckFailed. A verdict, not an exception: the first exception a process throws costs it tens of
// microseconds to find and read its unwind tables, a run of check on a few objects a few percent.
void report_check_failed();
bool check_failed_reported();

// A file or argument that cannot be used. what() is the whole line: "FILE: problem", FILE escaped.
class InputError : public std::runtime_error {
 public:
  InputError(const std::string& subject, const std::string& problem)
      : std::runtime_error(subject.empty() ? escape_controls(problem) : escape(subject) + ": " + escape_controls(problem)) {}
};

template <typename... Args>
[[noreturn]] void fail(const std::string& subject, fmt::format_string<Args...> format, Args&&... args) {
  throw InputError(subject, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace btfslim
