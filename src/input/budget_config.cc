// Reading a budget file (btfslim.toml) with toml++ into budgets and limits.
//
// The file is strict: every key is one this parser knows, every size parses, every kind exists, so that
// a typo is a line-numbered error rather than a limit that silently checks nothing. Each limit keeps
// the line toml++ read it on; reports cite it as FILE:LINE, the way compilers do, so that editors and
// CI annotations jump to it.
#include "btfslim/budget.h"
#include "btfslim/error.h"

// toml++ 3.3.0 (Debian 12) checks its own parser's preconditions with assertions that malformed input
// can break: "e=[}" (an array closed by a brace) reaches parse_value() at a value terminator (fuzz
// finding 10). With NDEBUG they compile to nothing under g++ and the parser reports a syntax error;
// without it (meson's plain build type, as distributions build) the process aborted, and under clang
// with NDEBUG they become __builtin_assume, which a broken precondition makes undefined. So every
// build reads a budget file as g++'s release build does, and the fuzzer checks that path under ASan.
#include <toml++/impl/preprocessor.h>
#undef TOML_ASSERT
#undef TOML_ASSERT_ASSUME
#define TOML_ASSERT(expr) static_cast<void>(0)
#define TOML_ASSERT_ASSUME(expr) static_cast<void>(0)
#include <toml++/toml.h>

#include <algorithm>
#include <string>
#include <vector>

namespace btfslim {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// "12.375" at the front of `s`: the whole part and the fraction scaled to `scale_digits` decimals
// (truncated). Consumes what it reads; false when there are no digits or too many.
bool take_decimal(std::string_view& s, unsigned scale_digits, std::uint64_t& whole, std::uint64_t& fraction,
                  unsigned& fraction_digits) {
  std::size_t i = 0;
  whole = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    if (i >= 18) return false;
    whole = whole * 10 + static_cast<unsigned>(s[i] - '0');
    ++i;
  }
  if (i == 0) return false;
  fraction = 0;
  fraction_digits = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    const std::size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (fraction_digits == scale_digits) return false;
      fraction = fraction * 10 + static_cast<unsigned>(s[i] - '0');
      ++fraction_digits;
      ++i;
    }
    if (i == start) return false;
  }
  s.remove_prefix(i);
  return true;
}

constexpr std::uint64_t pow10(unsigned n) {
  std::uint64_t p = 1;
  while (n--) p *= 10;
  return p;
}

struct Unit {
  std::string_view name;
  std::uint64_t bytes;
};
constexpr Unit kUnits[] = {{"B", 1},
                           {"KB", 1000},
                           {"kB", 1000},
                           {"MB", 1000 * 1000},
                           {"GB", 1000 * 1000 * 1000},
                           {"KiB", 1024},
                           {"MiB", 1024 * 1024},
                           {"GiB", 1024 * 1024 * 1024}};

}  // namespace

std::optional<std::uint64_t> parse_size(std::string_view text, std::string& why) {
  std::string_view s = trim(text);
  std::uint64_t whole = 0, fraction = 0;
  unsigned digits = 0;
  if (!take_decimal(s, 9, whole, fraction, digits)) {
    why = fmt::format("'{}' is not a size (e.g. \"512 KiB\", \"5.5 MiB\", \"300 B\")", text);
    return std::nullopt;
  }
  const std::string_view unit = trim(s);
  std::uint64_t multiplier = 0;
  if (unit.empty()) multiplier = 1;
  for (const Unit& u : kUnits)
    if (unit == u.name) multiplier = u.bytes;
  if (multiplier == 0) {
    why = fmt::format("'{}' is not a size: unknown unit '{}' (B, KB, KiB, MB, MiB, GB, GiB)", text, unit);
    return std::nullopt;
  }
  const unsigned __int128 bytes = static_cast<unsigned __int128>(whole) * multiplier +
                                  static_cast<unsigned __int128>(fraction) * multiplier / pow10(digits);
  if (bytes > (static_cast<unsigned __int128>(1) << 63)) {
    why = fmt::format("'{}' is too large a size", text);
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(bytes);
}

std::optional<std::uint64_t> parse_percent(std::string_view text, std::string& why) {
  std::string_view s = trim(text);
  std::uint64_t whole = 0, fraction = 0;
  unsigned digits = 0;
  if (!take_decimal(s, 6, whole, fraction, digits) || trim(s) != "%" || whole > 1'000'000'000) {
    why = fmt::format("'{}' is not a percentage (e.g. \"1%\", \"0.5%\")", text);
    return std::nullopt;
  }
  return whole * 1'000'000 + fraction * pow10(6 - digits);
}

bool Budget::needs_types() const {
  for (const BudgetLimit& l : limits)
    if (l.quantity == BudgetQuantity::Type) return true;
  return false;
}

namespace {

// toml++ 3.3.0 asks is_non_ascii_horizontal_whitespace() about code points it meets outside strings, in
// keys and after a backslash in a multi-line basic string, and that function reaches __builtin_unreachable()
// for most of U+00A1..U+0499, U+2ECE..U+32C7 and U+FB06..U+FEFE: undefined behaviour on a one-line typo.
// TOML allows non-ASCII text only in strings and comments, so the reader finds any other before toml++
// does and reports it as the syntax error it is. Keys must be ASCII as well: every key a budget file has
// (budget keys, kind names, C type names) is. The scan follows TOML's lexical structure only as far as it
// must tell keys from values; where a file is malformed, toml++ reports the error the scan let through.
class NonAsciiScan {
 public:
  NonAsciiScan(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  void run() {
    if (text_.starts_with("\xEF\xBB\xBF")) i_ = 3;  // a UTF-8 byte order mark, which toml++ skips
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (c == '\n') {
        ++line_;
        if (!nest_.empty() && nest_.back() == Header) nest_.pop_back();  // headers are one line
        if (nest_.empty()) expect_ = Key;
        ++i_;
      } else if (c == '#') {
        while (i_ < text_.size() && text_[i_] != '\n') ++i_;  // comments may hold any text
      } else if (c == '"' || c == '\'') {
        string(c);
      } else if (!is_ascii(c)) {
        syntax_error("a non-ASCII character outside a string or comment");
      } else if (expect_ == Value && starts_bare_value(c)) {
        bare_value();
      } else {
        punctuation(c);
        ++i_;
      }
    }
  }

 private:
  enum Expect : char { Key, Value, AfterValue };
  enum Nest : char { Header, Array, InlineTable };

  std::string_view text_;
  const std::string& file_;
  std::size_t i_ = 0;
  std::uint32_t line_ = 1;
  Expect expect_ = Key;
  std::vector<Nest> nest_;

  static bool is_ascii(char c) { return static_cast<unsigned char>(c) < 0x80; }
  bool at(std::string_view s) const { return text_.substr(i_).starts_with(s); }

  template <typename... Args>
  [[noreturn]] void syntax_error(fmt::format_string<Args...> format, Args&&... args) const {
    fail(fmt::format("{}:{}", file_, line_), "TOML syntax error: {}",
         fmt::format(format, std::forward<Args>(args)...));
  }

  void punctuation(char c) {
    switch (c) {
      case ' ': case '\t': case '\r': case '.': return;
      case '=': expect_ = Value; return;
      case '[':
        if (expect_ == Key && nest_.empty()) {
          nest_.push_back(Header);
          if (at("[[")) ++i_;  // [[array of tables]]
          header_key();
        } else {
          nest_.push_back(Array);
          expect_ = Value;
        }
        return;
      case '{':
        nest_.push_back(InlineTable);
        expect_ = Key;
        return;
      case ']': case '}': {
        const bool header = !nest_.empty() && nest_.back() == Header;
        if (!nest_.empty()) nest_.pop_back();
        expect_ = header ? Key : AfterValue;
        if (header && at("]]")) ++i_;  // [[array of tables]]
        return;
      }
      case ',':
        if (!nest_.empty()) expect_ = nest_.back() == InlineTable ? Key : Value;
        return;
      default:
        if (expect_ == Value) expect_ = AfterValue;  // a number, boolean or date
        return;
    }
  }

  // A value without quotes (a number, boolean, date or time) runs, to toml++, up to white space, a
  // bracket or brace that closes, a comma or a comment, whatever it holds: a quote inside it opens no
  // string (fuzz finding 12: in 'e = [0:["x...' toml++ took the rest of the line for one value and
  // classified its non-ASCII characters). So is it read here, and none of it may be non-ASCII.
  static bool starts_bare_value(char c) {
    return std::string_view(" \t\r\n\v\f[]{},#=.\"'").find(c) == std::string_view::npos;
  }
  void bare_value() {
    for (; i_ < text_.size() && std::string_view(" \t\r\n\v\f]},#").find(text_[i_]) == std::string_view::npos; ++i_)
      if (!is_ascii(text_[i_])) syntax_error("a non-ASCII character outside a string or comment");
    expect_ = AfterValue;
  }

  // A table header's first key, past its bracket(s) at i_ and any blanks: toml++ 3.3 reads it assuming a
  // bare key's character or a quote is there (a debug build asserts it, a release build lets the compiler
  // assume it: undefined behaviour for "[[;", "[]", "[[[" or "[&", which fuzz_budget found; tomlplusplus
  // issue 294, pull request 301). Refused here first.
  void header_key() const {
    std::size_t j = i_ + 1;
    while (j < text_.size() && (text_[j] == ' ' || text_[j] == '\t')) ++j;
    const char c = j < text_.size() ? text_[j] : '\n';
    const bool bare = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!bare && c != '"' && c != '\'')
      syntax_error("a table header must begin with a key (a name or a quoted string), not {}",
                   c == '\n' || c == '\r' ? std::string("the end of the line")
                   : c > ' ' && c < 0x7f    ? fmt::format("'{}'", c)
                                            : fmt::format("byte 0x{:02x}", static_cast<unsigned char>(c)));
  }

  // A string from its opening quote: a key's must be ASCII; in a basic string, a backslash and what a
  // line-ending backslash skips must be followed by ASCII.
  void string(char quote) {
    const bool key = expect_ != Value;
    const char triple[] = {quote, quote, quote};
    const std::string_view delimiter(triple, 3);
    const bool multi_line = at(delimiter);
    i_ += multi_line ? 3 : 1;
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (multi_line ? at(delimiter) : c == quote) {
        i_ += multi_line ? 3 : 1;
        for (int extra = 0; multi_line && extra < 2 && i_ < text_.size() && text_[i_] == quote; ++extra) ++i_;
        break;
      }
      if (c == '\n') {
        if (!multi_line) break;  // toml++ reports the unterminated string
        ++line_;
      } else if (!is_ascii(c) && key) {
        fail(fmt::format("{}:{}", file_, line_),
             "non-ASCII character in a key: the keys of a budget file (budget keys, kind names, C type names) "
             "are ASCII");
      } else if (c == '\\' && quote == '"') {
        escape(multi_line);
        continue;
      }
      ++i_;
    }
    if (!key) expect_ = AfterValue;
  }

  // From a backslash in a basic string. In a multi-line one, a backslash at the end of a line joins the
  // spaces, tabs and line breaks up to the next text; toml++ classifies the first character past them,
  // so that one must be ASCII, as must an escaped character (\uXXXX's digits are read as text).
  void escape(bool multi_line) {
    ++i_;
    if (multi_line) {
      const std::size_t start = i_;
      for (; i_ < text_.size() && (text_[i_] == ' ' || text_[i_] == '\t' || text_[i_] == '\r' || text_[i_] == '\n'); ++i_)
        if (text_[i_] == '\n') ++line_;
      if (i_ != start) {
        if (i_ < text_.size() && !is_ascii(text_[i_]))
          syntax_error("a non-ASCII character first after a line-ending backslash (escape it as \\uXXXX)");
        return;
      }
    }
    if (i_ < text_.size() && !is_ascii(text_[i_]))
      syntax_error("a non-ASCII character after a backslash (escape it as \\uXXXX)");
    if (i_ < text_.size() && text_[i_] != '\n') ++i_;
  }
};

class ConfigReader {
 public:
  explicit ConfigReader(const std::string& file) : file_(file) {}

  template <typename... Args>
  [[noreturn]] void fail_at(const toml::source_region& where, fmt::format_string<Args...> format,
                            Args&&... args) const {
    fail(fmt::format("{}:{}", file_, where.begin.line), format, std::forward<Args>(args)...);
  }

  BudgetConfig read(std::string_view text) {
    BudgetConfig config;
    config.file = file_;
    NonAsciiScan(text, file_).run();
    toml::table doc;
    try {
      doc = toml::parse(text, file_);
    } catch (const toml::parse_error& e) {
      fail_at(e.source(), "TOML syntax error: {}", e.description());
    }
    for (auto&& [key, node] : doc) {
      if (key.str() != "budget")
        fail_at(key.source(), "unknown key '{}' (a budget file holds [[budget]] tables)", key.str());
      const toml::array* budgets = node.as_array();
      if (!budgets || !budgets->is_array_of_tables())
        fail_at(node.source(), "'budget' must be an array of tables: write each as [[budget]]");
      for (const toml::node& b : *budgets) config.budgets.push_back(read_budget(*b.as_table()));
    }
    if (config.budgets.empty())
      fail(file_, "no budgets: a budget file holds [[budget]] tables with a name and limits");
    return config;
  }

 private:
  const std::string& file_;

  std::string string_value(const toml::key& key, const toml::node& node) const {
    const auto* s = node.as_string();
    if (!s) fail_at(node.source(), "'{}' must be a string", key.str());
    return s->get();
  }

  // A size is a string with a unit or a whole number of bytes.
  std::uint64_t size_value(const std::string& key, const toml::node& node, std::string& written) const {
    if (const auto* i = node.as_integer()) {
      if (i->get() < 0) fail_at(node.source(), "'{}': a size cannot be negative", key);
      written = std::to_string(i->get());
      return static_cast<std::uint64_t>(i->get());
    }
    const auto* s = node.as_string();
    if (!s) fail_at(node.source(), "'{}' must be a size: a string such as \"5.5 MiB\" or whole bytes", key);
    written = s->get();
    std::string why;
    const auto bytes = parse_size(written, why);
    if (!bytes) fail_at(node.source(), "'{}': {}", key, why);
    return *bytes;
  }

  // A growth limit: a percentage of the baseline ("1%") or a size ("10 KiB").
  void growth_value(const std::string& key, const toml::node& node, BudgetLimit& limit) const {
    limit.growth = true;
    const auto* s = node.as_string();
    if (s && s->get().find('%') != std::string::npos) {
      limit.written = s->get();
      std::string why;
      limit.percent = parse_percent(limit.written, why);
      if (!limit.percent) fail_at(node.source(), "'{}': {}", key, why);
      return;
    }
    limit.bytes = size_value(key, node, limit.written);
  }

  BudgetLimit limit_at(const std::string& key, const toml::node& node, BudgetQuantity q) const {
    BudgetLimit l;
    l.quantity = q;
    l.key = key;
    l.line = node.source().begin.line;
    l.column = node.source().begin.column;
    return l;
  }

  Kind kind_key(const toml::key& key) const {
    const auto kind = parse_kind(key.str());
    if (!kind || *kind == Kind::Unknown)
      fail_at(key.source(), "unknown kind '{}' (e.g. STRUCT, FUNC, FUNC_PROTO, ENUM, TYPEDEF)", key.str());
    return *kind;
  }

  const toml::table& sub_table(const toml::key& key, const toml::node& node, std::string_view example) const {
    const toml::table* t = node.as_table();
    if (!t) fail_at(node.source(), "'{}' must be a table of limits, e.g. {}", key.str(), example);
    return *t;
  }

  static std::uint32_t first_growth_line(const Budget& b) {
    std::uint32_t line = UINT32_MAX;
    for (const BudgetLimit& l : b.limits)
      if (l.growth) line = std::min(line, l.line);
    return line;
  }

  Budget read_budget(const toml::table& table) const {
    Budget b;
    b.line = table.source().begin.line;
    bool growth = false;
    const toml::node* baseline_node = nullptr;
    for (auto&& [key, node] : table) {
      const std::string k(key.str());
      if (k == "name") {
        b.name = string_value(key, node);
      } else if (k == "message") {
        b.message = string_value(key, node);
      } else if (k == "input") {
        b.input = string_value(key, node);
      } else if (k == "base") {
        b.base = string_value(key, node);
      } else if (k == "baseline") {
        b.baseline = string_value(key, node);
        baseline_node = &node;
        b.baseline_line = node.source().begin.line;
      } else if (k == "total" || k == "kernel_memory") {
        BudgetLimit l = limit_at(k, node, k == "total" ? BudgetQuantity::Total : BudgetQuantity::KernelMemory);
        l.bytes = size_value(k, node, l.written);
        b.limits.push_back(std::move(l));
      } else if (k == "max_growth" || k == "kernel_memory_growth") {
        BudgetLimit l = limit_at(k, node, k == "max_growth" ? BudgetQuantity::Total : BudgetQuantity::KernelMemory);
        growth_value(k, node, l);
        growth = true;
        b.limits.push_back(std::move(l));
      } else if (k == "kind" || k == "kind_growth") {
        for (auto&& [kind, value] : sub_table(key, node, k + ".FUNC = \"1 MiB\"")) {
          const std::string full = k + "." + std::string(kind.str());
          BudgetLimit l = limit_at(full, value, BudgetQuantity::Kind);
          l.kind = kind_key(kind);
          if (k == "kind") {
            l.bytes = size_value(full, value, l.written);
          } else {
            growth_value(full, value, l);
            growth = true;
          }
          b.limits.push_back(std::move(l));
        }
      } else if (k == "type") {
        for (auto&& [type, value] : sub_table(key, node, "type.\"struct task_struct\" = \"16 KiB\"")) {
          const std::string full = fmt::format("type.\"{}\"", type.str());
          BudgetLimit l = limit_at(full, value, BudgetQuantity::Type);
          l.type = type.str();
          if (trim(l.type).empty()) fail_at(type.source(), "a type limit needs a type name");
          l.bytes = size_value(full, value, l.written);
          b.limits.push_back(std::move(l));
        }
      } else {
        fail_at(key.source(),
                "unknown key '{}' in [[budget]] (name, message, input, base, baseline, total, kernel_memory, "
                "kind.KIND, type.\"NAME\", max_growth, kernel_memory_growth, kind_growth.KIND)",
                k);
      }
    }
    if (b.name.empty()) fail(fmt::format("{}:{}", file_, b.line), "a [[budget]] needs a name = \"...\"");
    if (!growth && baseline_node)
      fail_at(baseline_node->source(),
              "budget '{}' names a baseline but limits no growth (max_growth, kind_growth.KIND, "
              "kernel_memory_growth)",
              esc(b.name));
    if (b.limits.empty())
      fail(fmt::format("{}:{}", file_, b.line), "budget '{}' sets no limit (total, kernel_memory, kind.KIND, ...)",
           esc(b.name));
    if (growth && b.baseline.empty())
      fail(fmt::format("{}:{}", file_, first_growth_line(b)),
           "budget '{}' limits growth but names no baseline = \"FILE.json\" (btfslim measure --format json)", esc(b.name));
    // toml++ keeps keys sorted; limits are reported in the order of the file.
    std::stable_sort(b.limits.begin(), b.limits.end(), [](const BudgetLimit& x, const BudgetLimit& y) {
      return x.line != y.line ? x.line < y.line : x.column < y.column;
    });
    return b;
  }
};

}  // namespace

BudgetConfig parse_budget_config(std::string_view text, const std::string& file) {
  return ConfigReader(file).read(text);
}

}  // namespace btfslim
