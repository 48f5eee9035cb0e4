// The BTF model: a zero-copy view over one BTF blob.
//
// A `Btf` holds the bytes it was parsed from (a mapped file, an ELF section) and one 32-bit offset per
// type: nothing else is allocated per type. Parsing validates everything once - header, section bounds,
// every record's length, every string offset and every type id a record refers to - so that the typed
// views below can read without checks. Both byte orders are read in place; a view swaps on each load.
//
// Split BTF (a module on vmlinux) continues its base's type ids and string offsets: ids below
// `first_id()` and string offsets below `string_base()` resolve in the base. Parsing refuses split BTF
// that does not fit the base it is given (btf.cc says how it tells).
#pragma once

#include "btfslim/memory.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace btfslim {

using TypeId = std::uint32_t;

enum class Kind : std::uint8_t {
  Unknown = 0,
  Int = 1,
  Ptr = 2,
  Array = 3,
  Struct = 4,
  Union = 5,
  Enum = 6,
  Fwd = 7,
  Typedef = 8,
  Volatile = 9,
  Const = 10,
  Restrict = 11,
  Func = 12,
  FuncProto = 13,
  Var = 14,
  Datasec = 15,
  Float = 16,
  DeclTag = 17,
  TypeTag = 18,
  Enum64 = 19,
};
inline constexpr int kMaxKind = 19;

// bpftool's spelling: "INT", "FUNC_PROTO", ...
std::string_view kind_name(Kind kind);
// Accepts bpftool's spelling in any case ("struct", "FUNC_PROTO", "func-proto").
std::optional<Kind> parse_kind(std::string_view name);

// Reads integers stored in either byte order.
class ByteOrder {
 public:
  constexpr explicit ByteOrder(bool swapped = false) : swapped_(swapped) {}
  bool swapped() const { return swapped_; }
  std::uint16_t u16(const std::uint8_t* p) const {
    std::uint16_t v;
    std::memcpy(&v, p, sizeof v);
    return swapped_ ? __builtin_bswap16(v) : v;
  }
  std::uint32_t u32(const std::uint8_t* p) const {
    std::uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return swapped_ ? __builtin_bswap32(v) : v;
  }

 private:
  bool swapped_;
};

inline constexpr std::uint16_t kBtfMagic = 0xeB9F;
inline constexpr std::uint32_t kHeaderSize = 24;  // struct btf_header as of Linux 6.x
inline constexpr std::uint32_t kTypeHeaderSize = 12;  // struct btf_type

struct Header {
  std::uint16_t magic;
  std::uint8_t version;
  std::uint8_t flags;
  std::uint32_t hdr_len;
  std::uint32_t type_off;
  std::uint32_t type_len;
  std::uint32_t str_off;
  std::uint32_t str_len;
};

// Trailing records, decoded on access.
struct Member {
  std::uint32_t name_off;
  TypeId type;
  std::uint32_t offset;  // raw: with kind_flag, bitfield size in the top 8 bits
};
struct EnumValue {
  std::uint32_t name_off;
  std::uint32_t value;
};
struct Enum64Value {
  std::uint32_t name_off;
  std::uint64_t value;
};
struct Param {
  std::uint32_t name_off;
  TypeId type;
};
struct VarSecInfo {
  TypeId type;
  std::uint32_t offset;
  std::uint32_t size;
};
struct ArrayInfo {
  TypeId type;
  TypeId index_type;
  std::uint32_t nelems;
};

// One type record, read in place.
class TypeView {
 public:
  TypeView(const std::uint8_t* record, ByteOrder order) : p_(record), order_(order) {}

  std::uint32_t name_off() const { return order_.u32(p_); }
  std::uint32_t info() const { return order_.u32(p_ + 4); }
  Kind kind() const { return static_cast<Kind>((info() >> 24) & 0x1f); }
  std::uint16_t vlen() const { return static_cast<std::uint16_t>(info() & 0xffff); }
  bool kflag() const { return (info() >> 31) != 0; }
  // The size/type union: the size for INT, STRUCT, UNION, ENUM, ENUM64, DATASEC, FLOAT; else a type id.
  std::uint32_t size() const { return order_.u32(p_ + 8); }
  TypeId ref() const { return order_.u32(p_ + 8); }

  // The 12-byte header plus the kind's trailing data.
  inline std::uint32_t record_size() const;

  std::uint32_t int_data() const { return u32_at(0); }
  std::uint32_t int_encoding() const { return (int_data() >> 24) & 0x0f; }
  std::uint32_t int_offset() const { return (int_data() >> 16) & 0xff; }
  std::uint32_t int_bits() const { return int_data() & 0xff; }
  ArrayInfo array() const { return {u32_at(0), u32_at(4), u32_at(8)}; }
  Member member(unsigned i) const { return {u32_at(12 * i), u32_at(12 * i + 4), u32_at(12 * i + 8)}; }
  std::uint32_t member_bit_offset(const Member& m) const { return kflag() ? m.offset & 0xffffff : m.offset; }
  std::uint32_t member_bitfield_size(const Member& m) const { return kflag() ? m.offset >> 24 : 0; }
  EnumValue enum_value(unsigned i) const { return {u32_at(8 * i), u32_at(8 * i + 4)}; }
  Enum64Value enum64_value(unsigned i) const {
    return {u32_at(12 * i), (std::uint64_t{u32_at(12 * i + 8)} << 32) | u32_at(12 * i + 4)};
  }
  Param param(unsigned i) const { return {u32_at(8 * i), u32_at(8 * i + 4)}; }
  std::uint32_t var_linkage() const { return u32_at(0); }
  VarSecInfo secinfo(unsigned i) const { return {u32_at(12 * i), u32_at(12 * i + 4), u32_at(12 * i + 8)}; }
  std::int32_t decl_tag_component_idx() const { return static_cast<std::int32_t>(u32_at(0)); }
  // FUNC keeps its linkage in vlen.
  std::uint16_t func_linkage() const { return vlen(); }

  const std::uint8_t* data() const { return p_; }
  ByteOrder byte_order() const { return order_; }

 private:
  std::uint32_t u32_at(std::uint32_t trailing_off) const { return order_.u32(p_ + kTypeHeaderSize + trailing_off); }
  const std::uint8_t* p_;
  ByteOrder order_;
};

// Trailing bytes per kind: a fixed size, or a size per vlen entry. Kind 0 and kinds past kMaxKind are
// unknown (both zero).
struct TrailingLayout {
  std::uint8_t fixed;
  std::uint8_t per_entry;
};
inline constexpr TrailingLayout kTrailing[kMaxKind + 1] = {
    {0, 0},  {4, 0},  {0, 0}, {12, 0}, {0, 12}, {0, 12}, {0, 8},  {0, 0}, {0, 0}, {0, 0},
    {0, 0},  {0, 0},  {0, 0}, {0, 8},  {4, 0},  {0, 12}, {0, 0},  {4, 0}, {0, 0}, {0, 12},
};

// Size of the trailing data for a kind with `vlen` entries, or nullopt for an unknown kind.
inline std::optional<std::uint32_t> trailing_size(Kind kind, std::uint32_t vlen) {
  const auto k = static_cast<unsigned>(kind);
  if (k == 0 || k > kMaxKind) return std::nullopt;
  return kTrailing[k].fixed + kTrailing[k].per_entry * vlen;
}

std::uint32_t TypeView::record_size() const {
  const TrailingLayout l = kTrailing[static_cast<unsigned>(kind()) <= kMaxKind ? static_cast<unsigned>(kind()) : 0];
  return kTypeHeaderSize + l.fixed + l.per_entry * vlen();
}

class RecordNames;

class Btf {
 public:
  // Parses and validates `bytes`; `owner` keeps them alive. Throws InputError naming `name`. With
  // `names`, the pass that indexes the records also collects their names there.
  static std::shared_ptr<const Btf> parse(std::string name, std::shared_ptr<const void> owner,
                                          std::span<const std::uint8_t> bytes,
                                          std::shared_ptr<const Btf> base = nullptr, RecordNames* names = nullptr);
  // Whether parse() may index a large type section on a second thread (the default). A command that
  // hands what it parsed to libbpf's allocating passes turns it off first: once a process has had a
  // second thread, glibc's malloc takes a lock on every call (btf__dedup of a kernel: 3% slower).
  static void allow_second_thread(bool allowed);

  const std::string& name() const { return name_; }
  const Header& header() const { return header_; }
  ByteOrder byte_order() const { return order_; }
  bool big_endian() const;
  std::span<const std::uint8_t> raw() const { return bytes_; }
  std::span<const std::uint8_t> type_section() const { return types_; }
  std::span<const std::uint8_t> string_section() const { return strings_; }

  const Btf* base() const { return base_.get(); }
  std::shared_ptr<const Btf> base_shared() const { return base_; }
  bool is_split() const { return base_ != nullptr; }
  // Ids [first_id(), end_id()) are described by this BTF; lower ones by the base.
  TypeId first_id() const { return first_id_; }
  TypeId end_id() const { return first_id_ + own_count(); }
  std::uint32_t own_count() const { return static_cast<std::uint32_t>(offsets_.size()); }
  // Offsets below this are the base's strings.
  std::uint32_t string_base() const { return string_base_; }
  std::uint32_t string_end() const { return string_base_ + static_cast<std::uint32_t>(strings_.size()); }

  // `id` must be in [1, end_id()): ids come from validated records or from `valid_id`.
  TypeView type(TypeId id) const {
    if (id < first_id_) return base_->type(id);
    return TypeView(types_.data() + offsets_[id - first_id_], order_);
  }
  bool valid_id(TypeId id) const { return id >= 1 && id < end_id(); }
  // Byte offset of a record inside this BTF's type section.
  std::uint32_t type_offset(TypeId id) const { return offsets_[id - first_id_]; }
  // Those of all its own records, by id - first_id(): for a pass over them in a tight loop.
  std::span<const std::uint32_t> type_offsets() const { return offsets_; }

  // `off` must be below string_end(); validated records only hold such offsets.
  std::string_view str(std::uint32_t off) const;
  // The same string as a NUL-terminated pointer, without measuring it.
  const char* c_str(std::uint32_t off) const {
    return off < string_base_ ? base_->c_str(off)
                              : reinterpret_cast<const char*>(strings_.data()) + (off - string_base_);
  }
  bool valid_str(std::uint32_t off) const { return off < string_end(); }

 private:
  Btf() = default;
  void parse_header();
  // Returns the largest name offset and type id the records hold.
  std::pair<std::uint32_t, TypeId> index_types(RecordNames* names);
  void check_references(TypeId id, const TypeView& t) const;
  // Split BTF: that every name below the base's strings starts one of them and every id exists.
  void check_fits_base(std::uint32_t max_name, TypeId max_ref) const;

  std::string name_;
  std::shared_ptr<const void> owner_;
  std::shared_ptr<const Btf> base_;
  std::span<const std::uint8_t> bytes_;
  std::span<const std::uint8_t> types_;
  std::span<const std::uint8_t> strings_;
  Header header_{};
  ByteOrder order_;
  TypeId first_id_ = 1;
  std::uint32_t string_base_ = 0;
  ZeroedArray<std::uint32_t> offsets_;
};

// Where a record keeps the string offsets and type ids it refers to: the one list of them, which
// readers, the parser's checks and rewriters all go through. fn(offset, role) is called for each field,
// `offset` in bytes from the record's start, for a record whose info word is `info`.
enum class NameRole : std::uint8_t { Type, Member, Enumerator, Param };
enum class RefRole : std::uint8_t { Type, Element, Index, Member, Return, Param, Variable };

// Both kinds of field in one switch: on_name(offset, role) and on_type(offset, role), in record order.
template <typename OnName, typename OnType>
constexpr void for_each_field(std::uint32_t info, OnName&& on_name, OnType&& on_type) {
  on_name(std::uint32_t{0}, NameRole::Type);
  const unsigned vlen = info & 0xffff;
  std::uint32_t entry = kTypeHeaderSize;
  switch (static_cast<Kind>((info >> 24) & 0x1f)) {
    case Kind::Ptr:
    case Kind::Typedef:
    case Kind::Volatile:
    case Kind::Const:
    case Kind::Restrict:
    case Kind::Func:
    case Kind::Var:
    case Kind::TypeTag:
    case Kind::DeclTag:
      on_type(std::uint32_t{8}, RefRole::Type);
      break;
    case Kind::Array:
      on_type(entry, RefRole::Element);
      on_type(entry + 4, RefRole::Index);
      break;
    case Kind::Struct:
    case Kind::Union:
      for (unsigned i = 0; i < vlen; ++i, entry += 12) {
        on_name(entry, NameRole::Member);
        on_type(entry + 4, RefRole::Member);
      }
      break;
    case Kind::Enum:
      for (unsigned i = 0; i < vlen; ++i, entry += 8) on_name(entry, NameRole::Enumerator);
      break;
    case Kind::Enum64:
      for (unsigned i = 0; i < vlen; ++i, entry += 12) on_name(entry, NameRole::Enumerator);
      break;
    case Kind::FuncProto:
      on_type(std::uint32_t{8}, RefRole::Return);
      for (unsigned i = 0; i < vlen; ++i, entry += 8) {
        on_name(entry, NameRole::Param);
        on_type(entry + 4, RefRole::Param);
      }
      break;
    case Kind::Datasec:
      for (unsigned i = 0; i < vlen; ++i, entry += 12) on_type(entry, RefRole::Variable);
      break;
    default:
      break;
  }
}

template <typename Fn>
inline void for_each_name_field(std::uint32_t info, Fn&& fn) {
  for_each_field(info, fn, [](std::uint32_t, RefRole) {});
}

template <typename Fn>
inline void for_each_type_field(std::uint32_t info, Fn&& fn) {
  for_each_field(info, [](std::uint32_t, NameRole) {}, fn);
}

// Calls fn(name_off) for every string a record refers to: its name and its members', enumerators' and
// parameters' names. Hot in every analysis: decodes the record header once and strides the entries.
template <typename Fn>
void for_each_name_ref(const TypeView& t, Fn&& fn) {
  const ByteOrder order = t.byte_order();
  const std::uint8_t* p = t.data();
  for_each_name_field(order.u32(p + 4), [&](std::uint32_t off, NameRole) { fn(order.u32(p + off)); });
}

// Calls fn(type_id) for every type id a record refers to (0 for void included): the referenced type of
// modifiers, typedefs, pointers, funcs, vars and tags; array element and index types; member,
// parameter, return and variable types.
template <typename Fn>
void for_each_type_ref(const TypeView& t, Fn&& fn) {
  const ByteOrder order = t.byte_order();
  const std::uint8_t* p = t.data();
  for_each_type_field(order.u32(p + 4), [&](std::uint32_t off, RefRole) { fn(order.u32(p + off)); });
}

// Calls fn(btf, id, kind, name) for each of the BTF's own records (not its base's) that has a name and one
// of `kinds` (a bit per kind), in id order; `name` is NUL-terminated. Each record's kind and name are read
// straight through its offset in a loop of fixed byte order: the name lookups make this pass over a
// whole kernel in every run.
template <typename Fn>
void for_each_named_record(const Btf& btf, std::uint32_t kinds, Fn&& fn) {
  auto pass = [&](auto swapped) {
    constexpr ByteOrder order(decltype(swapped)::value);
    const std::uint8_t* types = btf.type_section().data();
    const std::span<const std::uint32_t> offsets = btf.type_offsets();
    for (std::size_t i = 0; i < offsets.size(); ++i) {
      const std::uint8_t* p = types + offsets[i];
      const unsigned kind = (order.u32(p + 4) >> 24) & 0x1f;
      if (!(kinds >> kind & 1)) continue;
      if (const std::uint32_t name_off = order.u32(p); name_off != 0)
        fn(btf, btf.first_id() + static_cast<TypeId>(i), static_cast<Kind>(kind), btf.c_str(name_off));
    }
  };
  if (btf.byte_order().swapped())
    pass(std::true_type{});
  else
    pass(std::false_type{});
}

// The same over a split BTF whole: its bases' records first, the deepest base's first.
template <typename Fn>
void for_each_named_record_with_bases(const Btf& btf, std::uint32_t kinds, Fn&& fn) {
  if (btf.base()) for_each_named_record_with_bases(*btf.base(), kinds, fn);
  for_each_named_record(btf, kinds, fn);
}

// Every name the own records of a BTF hold, in record order, with the records per kind: what the string
// attribution (footprint.h) reads. Whoever decodes the records fills it: Btf::parse's index pass when it
// is given one, so that `measure` decodes each record once, or the attribution itself. The decoder takes
// a Writer from start(), calls record() for each record and name() for each of its names in order, and
// hands the writer back to finish().
class RecordNames {
 public:
  static constexpr std::uint8_t kOwnName = 0x80;

  // Per name: its position in the BTF's own string section, or the section's length for a name that is
  // none of its strings (offset 0, or one of the base's).
  ZeroedArray<std::uint32_t> at;
  // Per name: its record's kind, | kOwnName on the record's own name, which is its first.
  ZeroedArray<std::uint8_t> marks;
  // Bit i: a name is at position i; section length / 64 + 1 words, the bit of the length clear.
  ZeroedArray<std::uint64_t> named;
  std::array<std::uint32_t, kMaxKind + 1> records{};
  std::array<std::uint64_t, kMaxKind + 1> record_bytes{};

  bool complete() const { return complete_; }

  // Plain pointers and values, held by the decoder in its own frame: were they read through the
  // RecordNames, each byte stored to `marks` (which may alias anything) would make the compiler load
  // them again for the next name.
  class Writer {
   public:
    void record(unsigned kind, std::uint32_t bytes) {
      ++records_[kind];
      record_bytes_[kind] += bytes;
      mark_ = static_cast<std::uint8_t>(kind | kOwnName);
    }
    void name(std::uint32_t off) {
      std::uint32_t i = off - base_;
      if (off == 0 || i >= len_) i = len_;
      named_[i / 64] |= std::uint64_t{1} << (i % 64);
      *at_++ = i;
      *marks_++ = mark_;
      mark_ &= static_cast<std::uint8_t>(~kOwnName);
    }
    // For the index pass's second thread (btf.cc), which writes a chunk of records' names further up
    // the same arrays: where this writer is in its list, and a chunk's names and counts added in order
    // (moved down to here; their offsets' bits go to `named` apart).
    const std::uint32_t* at_end() const { return at_; }
    void append(std::span<const std::uint32_t> at, const std::uint8_t* marks, const std::uint32_t* records,
                const std::uint64_t* record_bytes) {
      std::memmove(at_, at.data(), at.size_bytes());
      std::memmove(marks_, marks, at.size());
      at_ += at.size();
      marks_ += at.size();
      for (unsigned k = 0; k <= kMaxKind; ++k) {
        records_[k] += records[k];
        record_bytes_[k] += record_bytes[k];
      }
    }

   private:
    friend class RecordNames;
    std::uint32_t* at_;
    std::uint8_t* marks_;
    std::uint64_t* named_;
    std::uint32_t* records_;
    std::uint64_t* record_bytes_;
    std::uint32_t base_;
    std::uint32_t len_;
    std::uint8_t mark_ = 0;
  };

  // A writer to arrays of the caller's: `named` has string_len / 64 + 1 words, `records` and
  // `record_bytes` kMaxKind + 1 entries.
  static Writer writer_to(std::uint32_t* at, std::uint8_t* marks, std::uint64_t* named, std::uint32_t* records,
                          std::uint64_t* record_bytes, std::uint32_t string_base, std::uint32_t string_len) {
    Writer w;
    w.at_ = at;
    w.marks_ = marks;
    w.named_ = named;
    w.records_ = records;
    w.record_bytes_ = record_bytes;
    w.base_ = string_base;
    w.len_ = string_len;
    return w;
  }

  Writer start(std::uint32_t type_len, std::uint32_t string_base, std::uint32_t string_len) {
    // A name takes at least 8 bytes of a record: the header's 12 hold one, an entry of 8 or 12 one.
    at = ZeroedArray<std::uint32_t>::for_overwrite(type_len / 8 + 1);
    marks = ZeroedArray<std::uint8_t>::for_overwrite(at.size());
    named = ZeroedArray<std::uint64_t>(string_len / 64 + 1);
    records = {};
    record_bytes = {};
    complete_ = false;
    return writer_to(at.data(), marks.data(), named.data(), records.data(), record_bytes.data(), string_base,
                     string_len);
  }
  void finish(const Writer& w) {
    const auto n = static_cast<std::size_t>(w.at_ - at.data());
    at.truncate(n);
    marks.truncate(n);
    named[w.len_ / 64] &= ~(std::uint64_t{1} << (w.len_ % 64));
    complete_ = true;
  }

 private:
  bool complete_ = false;
};

// A type's name, or "(anon)" for name offset 0 (bpftool's convention).
inline std::string_view name_or_anon(const Btf& btf, std::uint32_t name_off) {
  return name_off == 0 ? std::string_view("(anon)") : btf.str(name_off);
}

// A type as a user names it, the same on every command line: an id ("42"), NAME, or KIND NAME with a
// kind as bpftool prints it in any case ("struct task_struct", "enum X" (an ENUM64 too), "typedef u32",
// "func_proto ..."). Where the command filters by name, NAME may be a glob (*, ?, [...]).
class TypePattern {
 public:
  enum class Globs : std::uint8_t { No, Allowed };
  static TypePattern parse(std::string_view text, Globs globs);

  bool matches(const Btf& btf, TypeId id) const;
  // The input's own types that match, in id order (a split input's base is not searched).
  std::vector<TypeId> find(const Btf& btf) const;
  const std::string& text() const { return text_; }
  std::optional<Kind> kind() const { return kind_; }
  std::string_view name() const { return name_; }  // empty for an id
  TypeId id() const { return id_; }                 // 0 unless an id was given
  // Throws the InputError for a pattern that found nothing: "FILE: OPTION 'TEXT': no type matches ...".
  [[noreturn]] void fail_unmatched(const Btf& btf, std::string_view option) const;
  // Where a bare NAME found types of more than one kind (`vmpressure`: a STRUCT and a FUNC), what to
  // say: "names a STRUCT [12] and a FUNC [40]: say which, as 'struct vmpressure' or 'func vmpressure'".
  // "" when the kinds agree (ENUM and ENUM64 are one, as C spells them), or a kind or id was given.
  std::string kind_clash(const Btf& btf, std::span<const TypeId> found) const;

 private:
  std::string text_, name_;
  std::optional<Kind> kind_;
  TypeId id_ = 0;
  bool glob_ = false;
};

// Every type `text` names (no globs), in id order; an InputError naming the input and `option` where
// none does, or where a bare name finds types of several kinds (TypePattern::kind_clash): a type that
// matches nothing, or that needs its kind to be told, is an error on every command.
std::vector<TypeId> find_types(const Btf& btf, std::string_view text, std::string_view option);

}  // namespace btfslim
