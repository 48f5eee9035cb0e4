// Option values several subcommands share.
#include "btfslim/cli.h"
#include "btfslim/error.h"

namespace btfslim::cli {

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
