// Option values several subcommands share.
#include "btfslim/cli.h"
#include "btfslim/error.h"
#include "btfslim/escape.h"
#include "btfslim/input.h"

#include <charconv>
#include <cstdio>
#include <filesystem>

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

CLI::Validator whole_number(std::uint64_t min, std::uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& value) -> std::string {
        std::uint64_t n = 0;
        const char* end = value.data() + value.size();
        const auto [at, ec] = std::from_chars(value.data(), end, n);
        if (value.empty() || at != end || ec == std::errc::invalid_argument)
          return fmt::format("'{}' is not a whole number from {} up", esc(value), min);
        if (ec == std::errc::result_out_of_range || n > max)
          return fmt::format("{} is too large: it takes at most {}", esc(value), max);
        if (n < min) return fmt::format("{} is too small: it takes {} or more", n, min);
        return "";
      },
      "");
}

void refuse_kind_as_input(const std::string& input, const std::vector<std::string>& kinds, std::string_view option) {
  if (kinds.empty() || !parse_kind(input)) return;
  std::error_code ec;
  if (std::filesystem::exists(input, ec)) return;
  fail(input, "no such file, and a kind: {} takes its kinds comma-separated ({} {},{})", option, option,
       esc(kinds.back()), esc(input));
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

void check_byte_order(const std::vector<std::string>& objects, const std::vector<bool>& big_endian, const Btf& kernel) {
  auto order = [](bool big) { return big ? "big-endian" : "little-endian"; };
  for (std::size_t i = 0; i < objects.size(); ++i)
    if (big_endian[i] != kernel.big_endian())
      fail(objects[i], "byte order: a {} BPF object, and {} is {}: libbpf loads an object only on a kernel of its "
                       "byte order (build it with clang -target {})",
           order(big_endian[i]), esc(kernel.name()), order(kernel.big_endian()), kernel.big_endian() ? "bpfeb" : "bpfel");
}

void note_if_bpf_object(const std::string& arg) {
  if (const std::string path = resolve_input(arg).path;
      is_bpf_object_file(path) && ElfFile(FileBytes::open(path)).section(".BTF.ext"))
    std::fprintf(stderr, "btfslim: note: %s is a BPF object, not a kernel: its BTF holds only that object's types\n",
                 escape(path).c_str());
}

}  // namespace btfslim::cli
