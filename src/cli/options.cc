// Option values several subcommands share.
#include "btfslim/cli.h"
#include "btfslim/error.h"

namespace btfslim::cli {

std::vector<std::pair<std::string, std::string>> parse_attach_targets(const std::vector<std::string>& args) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& arg : args) {
    const auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
      fail("--attach-target", "'{}' is not PROG=FUNC (a program of the objects, and the kernel function, hook, "
           "tracepoint or iterator its loader attaches it to)", esc(arg));
    out.emplace_back(arg.substr(0, eq), arg.substr(eq + 1));
  }
  return out;
}

std::vector<Kind> parse_kind_list(const std::vector<std::string>& names, std::string_view option) {
  std::vector<Kind> kinds;
  for (const auto& k : names) {
    const auto kind = parse_kind(k);
    if (!kind) fail(std::string(option), "unknown kind '{}' (e.g. struct, union, enum, func_proto, typedef)", esc(k));
    kinds.push_back(*kind);
  }
  return kinds;
}

}  // namespace btfslim::cli
