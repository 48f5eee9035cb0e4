// Types as people name them on the command line. Every command that takes a type (measure --type and
// --name, dump --name, minimize --keep and --explain, budget limits) reads it here, so that the same
// words find the same types everywhere: an id, NAME, or KIND NAME with a kind as bpftool prints it.
#include "btfslim/btf.h"
#include "btfslim/error.h"
#include "btfslim/escape.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fnmatch.h>

namespace btfslim {

TypePattern TypePattern::parse(std::string_view text, Globs globs) {
  TypePattern p;
  p.text_ = std::string(text);
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), p.id_);
  if (ec == std::errc() && end == text.data() + text.size() && p.id_ != 0) return p;
  p.id_ = 0;
  std::string_view name = text;
  if (const auto space = text.find(' '); space != std::string_view::npos)
    if ((p.kind_ = parse_kind(text.substr(0, space)))) name = text.substr(space + 1);
  while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
  p.name_ = std::string(name);
  p.glob_ = globs == Globs::Allowed && p.name_.find_first_of("*?[") != std::string::npos;
  return p;
}

bool TypePattern::matches(const Btf& btf, TypeId id) const {
  if (id_ != 0) return id == id_;
  const TypeView t = btf.type(id);
  // "enum NAME" finds a 64-bit enum too: C spells both the same.
  if (kind_ && t.kind() != *kind_ && !(*kind_ == Kind::Enum && t.kind() == Kind::Enum64)) return false;
  const std::string_view name = btf.str(t.name_off());
  if (!glob_) return name == name_;
  // BTF strings end in NUL, so the view's data() is a C string for fnmatch.
  return ::fnmatch(name_.c_str(), name.data(), 0) == 0;
}

std::vector<TypeId> TypePattern::find(const Btf& btf) const {
  std::vector<TypeId> found;
  if (id_ != 0) {
    if (id_ >= btf.first_id() && id_ < btf.end_id()) found.push_back(id_);
    return found;
  }
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id)
    if (matches(btf, id)) found.push_back(id);
  return found;
}

void TypePattern::fail_unmatched(const Btf& btf, std::string_view option) const {
  if (id_ != 0)
    fail(btf.name(), "{} {}: there is no type [{}] (ids run from {} to {})", option, id_, id_, btf.first_id(),
         btf.end_id() - 1);
  fail(btf.name(), "{} '{}': no type matches (NAME, 'struct NAME', 'enum NAME', ... or an id)", option,
       esc(text_));
}

std::string TypePattern::kind_clash(const Btf& btf, std::span<const TypeId> found) const {
  if (id_ != 0 || kind_) return "";
  // The first type of each kind, in id order; ENUM64 counts as ENUM ("enum NAME" finds both).
  auto same = [](Kind k) { return k == Kind::Enum64 ? Kind::Enum : k; };
  std::vector<TypeId> firsts;
  for (const TypeId id : found) {
    const Kind k = same(btf.type(id).kind());
    if (std::none_of(firsts.begin(), firsts.end(), [&](TypeId f) { return same(btf.type(f).kind()) == k; }))
      firsts.push_back(id);
  }
  if (firsts.size() < 2) return "";
  std::string kinds, spelled;
  for (std::size_t i = 0; i < firsts.size(); ++i) {
    const char* sep = i == 0 ? "" : i + 1 == firsts.size() ? " and " : ", ";
    const std::string_view kind = kind_name(btf.type(firsts[i]).kind());
    kinds += fmt::format("{}a {} [{}]", sep, kind, firsts[i]);
    std::string lower(kind);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    spelled += fmt::format("{}'{} {}'", i == 0 ? "" : i + 1 == firsts.size() ? " or " : ", ", lower, esc(name_));
  }
  return fmt::format("names {}: say which, as {}", kinds, spelled);
}

std::vector<TypeId> find_types(const Btf& btf, std::string_view text, std::string_view option) {
  const TypePattern p = TypePattern::parse(text, TypePattern::Globs::No);
  auto found = p.find(btf);
  if (found.empty()) p.fail_unmatched(btf, option);
  if (const std::string clash = p.kind_clash(btf, found); !clash.empty())
    fail(btf.name(), "{} '{}' {}", option, esc(text), clash);
  return found;
}

}  // namespace btfslim
