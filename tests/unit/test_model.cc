// The BTF model in process: what Btf::parse reads from libbpf-built fixtures, type by type and in
// either byte order, split BTF on its base, and the index pass that finds every record (on one thread
// and on two). Its robustness against broken input is test_robust.cc's.

#include "btf_bytes.h"
#include "elf_image.h"
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "process.h"

#include "btfslim/btf.h"
#include "btfslim/footprint.h"
#include "btfslim/input.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <vector>

namespace btfslim::test {
namespace {

std::vector<std::uint32_t> name_refs(const Btf& btf, TypeId id) {
  std::vector<std::uint32_t> offs;
  for_each_name_ref(btf.type(id), [&](std::uint32_t off) { offs.push_back(off); });
  return offs;
}

std::vector<std::string> names_of(const Btf& btf, const std::vector<std::uint32_t>& offs) {
  std::vector<std::string> names;
  for (const auto off : offs) names.emplace_back(btf.str(off));
  return names;
}

TEST_CASE("all kinds: ids, kinds and names", "[model]") {
  const auto btf = parse(all_kinds_btf());
  CHECK(btf->name() == kName);
  CHECK_FALSE(btf->is_split());
  CHECK(btf->base() == nullptr);
  CHECK(btf->first_id() == 1);
  CHECK(btf->own_count() == 31);
  CHECK(btf->end_id() == 32);
  CHECK(btf->string_base() == 0);
  CHECK_FALSE(btf->big_endian());
  CHECK_FALSE(btf->valid_id(0));
  CHECK(btf->valid_id(31));
  CHECK_FALSE(btf->valid_id(32));

  const std::vector<std::pair<Kind, std::string>> want = {
      {Kind::Int, "int"},          {Kind::Int, "unsigned char"}, {Kind::Int, "char"},
      {Kind::Int, "_Bool"},        {Kind::Ptr, ""},              {Kind::Array, ""},
      {Kind::Struct, "task"},      {Kind::Union, ""},            {Kind::Enum, "state"},
      {Kind::Enum, "delta"},       {Kind::Fwd, "later"},         {Kind::Fwd, "maybe"},
      {Kind::Typedef, "pid_t"},    {Kind::Volatile, ""},         {Kind::Const, ""},
      {Kind::Restrict, ""},        {Kind::Ptr, ""},              {Kind::FuncProto, ""},
      {Kind::Func, "wake_up"},     {Kind::Func, "helper"},       {Kind::Func, "imported"},
      {Kind::Var, "jiffies"},      {Kind::Var, "counter"},       {Kind::Datasec, ".data"},
      {Kind::Float, "double"},     {Kind::DeclTag, "user"},      {Kind::DeclTag, "kfunc"},
      {Kind::TypeTag, "rcu"},      {Kind::Enum64, "big"},        {Kind::Enum64, "sbig"},
      {Kind::Ptr, ""},
  };
  REQUIRE(want.size() == btf->own_count());
  std::uint64_t records = 0;
  for (TypeId id = 1; id < btf->end_id(); ++id) {
    INFO("type [" << id << "]");
    const TypeView t = btf->type(id);
    CHECK(t.kind() == want[id - 1].first);
    CHECK(btf->str(t.name_off()) == want[id - 1].second);
    CHECK(name_or_anon(*btf, t.name_off()) == (want[id - 1].second.empty() ? "(anon)" : want[id - 1].second));
    CHECK(btf->type_offset(id) == records);
    records += t.record_size();
  }
  CHECK(records == btf->header().type_len);
  // Every kind 1..19 is there.
  for (int k = 1; k <= kMaxKind; ++k) {
    INFO("kind " << k);
    bool seen = false;
    for (const auto& [kind, name] : want) seen = seen || kind == static_cast<Kind>(k);
    CHECK(seen);
  }
}

TEST_CASE("all kinds: ints, pointers, arrays and modifiers", "[model]") {
  const auto btf = parse(all_kinds_btf());
  const TypeView i32 = btf->type(1);
  CHECK(i32.size() == 4);
  CHECK(i32.int_bits() == 32);
  CHECK(i32.int_offset() == 0);
  CHECK(i32.int_encoding() == 1);  // BTF_INT_SIGNED
  CHECK(i32.record_size() == 16);
  CHECK(btf->type(2).int_encoding() == 0);
  CHECK(btf->type(2).int_bits() == 8);
  CHECK(btf->type(3).int_encoding() == 2);  // BTF_INT_CHAR
  CHECK(btf->type(4).int_encoding() == 4);  // BTF_INT_BOOL

  CHECK(btf->type(5).ref() == 3);
  CHECK(btf->type(5).record_size() == 12);
  const ArrayInfo a = btf->type(6).array();
  CHECK(a.type == 2);
  CHECK(a.index_type == 1);
  CHECK(a.nelems == 16);
  CHECK(btf->type(6).record_size() == 24);

  CHECK_FALSE(btf->type(11).kflag());  // fwd struct
  CHECK(btf->type(12).kflag());        // fwd union
  CHECK(btf->type(13).ref() == 1);
  CHECK(btf->type(14).ref() == 1);
  CHECK(btf->type(15).ref() == 14);
  CHECK(btf->type(16).ref() == 5);
  CHECK(btf->type(17).ref() == 7);
  CHECK(btf->type(25).size() == 8);
  CHECK(btf->type(28).ref() == 7);
  CHECK(btf->type(31).ref() == 0);  // void *
}

TEST_CASE("all kinds: members and bitfields", "[model]") {
  const auto btf = parse(all_kinds_btf());
  const TypeView st = btf->type(7);
  CHECK(st.size() == 32);
  REQUIRE(st.vlen() == 5);
  CHECK(st.kflag());  // bitfields switch the struct to kind_flag encoding
  CHECK(st.record_size() == 12 + 5 * 12);
  struct Want {
    std::string name;
    TypeId type;
    std::uint32_t bit_offset, bitfield_size;
  };
  const std::vector<Want> want = {
      {"pid", 1, 0, 0}, {"flags", 2, 32, 3}, {"state", 2, 35, 5}, {"", 5, 64, 0}, {"comm", 6, 128, 0}};
  for (unsigned i = 0; i < st.vlen(); ++i) {
    INFO("member " << i);
    const Member m = st.member(i);
    CHECK(btf->str(m.name_off) == want[i].name);
    CHECK(m.type == want[i].type);
    CHECK(st.member_bit_offset(m) == want[i].bit_offset);
    CHECK(st.member_bitfield_size(m) == want[i].bitfield_size);
  }

  const TypeView un = btf->type(8);
  CHECK(un.name_off() == 0);
  CHECK(un.size() == 8);
  REQUIRE(un.vlen() == 2);
  CHECK_FALSE(un.kflag());
  CHECK(btf->str(un.member(1).name_off) == "b");
  CHECK(un.member(1).type == 5);
  CHECK(un.member_bit_offset(un.member(1)) == 0);
  CHECK(un.member_bitfield_size(un.member(1)) == 0);
}

TEST_CASE("all kinds: enum values, signed and 64-bit", "[model]") {
  const auto btf = parse(all_kinds_btf());
  const TypeView state = btf->type(9);
  CHECK(state.size() == 4);
  CHECK_FALSE(state.kflag());
  REQUIRE(state.vlen() == 2);
  CHECK(btf->str(state.enum_value(0).name_off) == "RUNNING");
  CHECK(state.enum_value(0).value == 0);
  CHECK(btf->str(state.enum_value(1).name_off) == "STOPPED");
  CHECK(state.enum_value(1).value == 4);
  CHECK(state.record_size() == 12 + 2 * 8);

  const TypeView delta = btf->type(10);
  CHECK(delta.kflag());  // a negative value makes libbpf mark the enum signed
  REQUIRE(delta.vlen() == 2);
  CHECK(btf->str(delta.enum_value(0).name_off) == "DOWN");
  CHECK(static_cast<std::int32_t>(delta.enum_value(0).value) == -1);
  CHECK(delta.enum_value(1).value == 1);

  const TypeView big = btf->type(29);
  CHECK(big.size() == 8);
  CHECK(big.kflag());
  REQUIRE(big.vlen() == 2);
  CHECK(big.record_size() == 12 + 2 * 12);
  CHECK(btf->str(big.enum64_value(0).name_off) == "HUGE");
  CHECK(big.enum64_value(0).value == 0xffffffff00000001ULL);
  CHECK(static_cast<std::int64_t>(big.enum64_value(0).value) == -4294967295LL);
  CHECK(big.enum64_value(1).value == 3);

  const TypeView sbig = btf->type(30);
  CHECK_FALSE(sbig.kflag());
  REQUIRE(sbig.vlen() == 1);
  CHECK(btf->str(sbig.enum64_value(0).name_off) == "NEG");
  CHECK(static_cast<std::int64_t>(sbig.enum64_value(0).value) == -5);
}

TEST_CASE("all kinds: functions, parameters, variables, datasec and decl tags", "[model]") {
  const auto btf = parse(all_kinds_btf());
  const TypeView proto = btf->type(18);
  CHECK(proto.ref() == 1);
  REQUIRE(proto.vlen() == 2);
  CHECK(proto.record_size() == 12 + 2 * 8);
  CHECK(btf->str(proto.param(0).name_off) == "task");
  CHECK(proto.param(0).type == 17);
  CHECK(proto.param(1).name_off == 0);
  CHECK(proto.param(1).type == 13);

  CHECK(btf->type(19).ref() == 18);
  CHECK(btf->type(19).func_linkage() == 1);  // global
  CHECK(btf->type(20).func_linkage() == 0);  // static
  CHECK(btf->type(21).func_linkage() == 2);  // extern

  CHECK(btf->type(22).ref() == 15);
  CHECK(btf->type(22).var_linkage() == 1);
  CHECK(btf->type(22).record_size() == 16);
  CHECK(btf->type(23).ref() == 1);
  CHECK(btf->type(23).var_linkage() == 0);

  const TypeView sec = btf->type(24);
  CHECK(sec.size() == 16);
  REQUIRE(sec.vlen() == 2);
  CHECK(sec.secinfo(0).type == 22);
  CHECK(sec.secinfo(0).offset == 0);
  CHECK(sec.secinfo(0).size == 4);
  CHECK(sec.secinfo(1).type == 23);
  CHECK(sec.secinfo(1).offset == 8);
  CHECK(sec.secinfo(1).size == 4);

  CHECK(btf->type(26).ref() == 7);
  CHECK(btf->type(26).decl_tag_component_idx() == 1);
  CHECK(btf->type(26).record_size() == 16);
  CHECK(btf->type(27).ref() == 19);
  CHECK(btf->type(27).decl_tag_component_idx() == -1);
}

TEST_CASE("all kinds: header fields", "[model]") {
  const std::string bytes = all_kinds_btf();
  const auto btf = parse(bytes);
  const Header& h = btf->header();
  CHECK(h.magic == kBtfMagic);
  CHECK(h.version == 1);
  CHECK(h.flags == 0);
  CHECK(h.hdr_len == kHeaderSize);
  CHECK(h.type_off == 0);
  CHECK(h.str_off == h.type_len);
  CHECK(std::uint64_t{h.hdr_len} + h.type_len + h.str_len == bytes.size());
  CHECK(btf->raw().size() == bytes.size());
  CHECK(btf->type_section().size() == h.type_len);
  CHECK(btf->string_section().size() == h.str_len);
  CHECK(btf->string_end() == h.str_len);
  CHECK(btf->string_section()[0] == 0);
  CHECK(btf->str(0).empty());
  CHECK(btf->valid_str(h.str_len - 1));
  CHECK_FALSE(btf->valid_str(h.str_len));
}

TEST_CASE("big-endian twin reads identically", "[model]") {
  const auto le = parse(all_kinds_btf(false));
  const auto be = parse(all_kinds_btf(true));
  CHECK_FALSE(le->big_endian());
  CHECK(be->big_endian());
  CHECK(be->byte_order().swapped() == (std::endian::native == std::endian::little));
  const Header& a = le->header();
  const Header& b = be->header();
  CHECK(a.magic == b.magic);
  CHECK(a.version == b.version);
  CHECK(a.flags == b.flags);
  CHECK(a.hdr_len == b.hdr_len);
  CHECK(a.type_off == b.type_off);
  CHECK(a.type_len == b.type_len);
  CHECK(a.str_off == b.str_off);
  CHECK(a.str_len == b.str_len);
  REQUIRE(le->own_count() == be->own_count());
  for (TypeId id = 1; id < le->end_id(); ++id) {
    INFO("type [" << id << "]");
    const TypeView x = le->type(id);
    const TypeView y = be->type(id);
    CHECK(x.info() == y.info());
    CHECK(x.size() == y.size());
    CHECK(x.record_size() == y.record_size());
    CHECK(le->str(x.name_off()) == be->str(y.name_off()));
    CHECK(name_refs(*le, id) == name_refs(*be, id));
  }
  CHECK(be->type(29).enum64_value(0).value == 0xffffffff00000001ULL);
  CHECK(be->type(27).decl_tag_component_idx() == -1);
  CHECK(be->type(7).member_bitfield_size(be->type(7).member(2)) == 5);
  // Everything a reader prints agrees.
  CHECK(raw_dump(*le) == raw_dump(*be));
  const FileFootprint fa = measure_file(*le);
  const FileFootprint fb = measure_file(*be);
  for (int k = 0; k <= kMaxKind; ++k) {
    INFO("kind " << k);
    CHECK(fa.kinds[k].count == fb.kinds[k].count);
    CHECK(fa.kinds[k].record_bytes == fb.kinds[k].record_bytes);
    CHECK(fa.kinds[k].string_bytes == fb.kinds[k].string_bytes);
  }
}

TEST_CASE("split BTF continues its base's ids and strings", "[model]") {
  for (const bool big_endian : {false, true}) {
    INFO((big_endian ? "big-endian" : "little-endian"));
    const SplitPair pair = split_btf(big_endian);
    const auto base = parse(pair.base, nullptr, "base.btf");
    const auto split = parse(pair.split, base);
    CHECK(base->end_id() == 4);
    CHECK(split->is_split());
    CHECK(split->base() == base.get());
    CHECK(split->base_shared() == base);
    CHECK(split->first_id() == 4);
    CHECK(split->own_count() == 3);
    CHECK(split->end_id() == 7);
    CHECK(split->string_base() == base->string_end());
    CHECK(split->string_end() == base->string_end() + split->header().str_len);
    CHECK(split->big_endian() == big_endian);
    CHECK_FALSE(split->valid_id(0));
    CHECK(split->valid_id(1));  // a base id is valid in the split view
    CHECK(split->valid_id(6));
    CHECK_FALSE(split->valid_id(7));
    CHECK(split->type_offset(4) == 0);

    // Base ids resolve in the base.
    CHECK(split->type(3).kind() == Kind::Struct);
    CHECK(split->str(split->type(3).name_off()) == "sk_buff");
    CHECK(split->type(1).kind() == Kind::Int);

    CHECK(split->type(4).kind() == Kind::Ptr);
    CHECK(split->type(4).ref() == 3);
    const TypeView conn = split->type(5);
    CHECK(conn.kind() == Kind::Struct);
    CHECK(split->str(conn.name_off()) == "nf_conn");
    CHECK(conn.name_off() >= split->string_base());
    REQUIRE(conn.vlen() == 3);
    // "len" is the base's string: its offset lies below string_base() and resolves there.
    CHECK(conn.member(0).name_off < split->string_base());
    CHECK(split->str(conn.member(0).name_off) == "len");
    CHECK(conn.member(0).type == 1);
    CHECK(split->str(conn.member(1).name_off) == "skb");
    CHECK(conn.member(1).type == 4);
    CHECK(split->str(conn.member(2).name_off) == "mark");
    CHECK(split->type(6).kind() == Kind::Typedef);
    CHECK(split->type(6).ref() == 5);
    CHECK(split->str(split->type(6).name_off()) == "nf_conn_t");
  }
}

// The index pass grows its offset array past its first estimate (24 bytes a record) for small records,
// and the names it collects for measure give the same footprint, type by type and kind by kind, as the
// attribution's own walk over the records; for split BTF too, and in either byte order.
TEST_CASE("the index pass: offsets past the first estimate, and the names it collects", "[model]") {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  REQUIRE(btf__add_int(t, "int", 4, BTF_INT_SIGNED) == 1);
  constexpr int kPointers = 3000;  // 12 bytes each: the estimate is 16 + len / 24, about half of them
  for (int i = 0; i < kPointers; ++i) REQUIRE(btf__add_ptr(t, i + 1) == i + 2);
  REQUIRE(btf__add_struct(t, "pair", 8) > 0);
  REQUIRE(btf__add_field(t, "int", 1, 0, 0) == 0);  // a member named as its type: one string, two kinds
  REQUIRE(btf__add_field(t, "second", 2, 32, 0) == 0);
  REQUIRE(btf__add_typedef(t, "pair", kPointers + 2) > 0);
  const std::string small_records = raw_bytes(t);

  const SplitPair pair = split_btf();
  struct Input {
    std::string bytes;
    std::string base;
  };
  const Input inputs[] = {{small_records, ""}, {all_kinds_btf(), ""}, {all_kinds_btf(true), ""},
                          {footprint_btf(true), ""}, {pair.split, pair.base}};
  for (const Input& in : inputs) {
    const auto base = in.base.empty() ? nullptr : parse(in.base);
    auto owner = std::make_shared<std::vector<std::uint8_t>>(in.bytes.begin(), in.bytes.end());
    RecordNames names;
    const auto btf = Btf::parse(kName, owner, std::span<const std::uint8_t>(*owner), base, &names);
    REQUIRE(names.complete());
    const auto again = parse(in.bytes, base);
    REQUIRE(btf->own_count() == again->own_count());
    std::size_t name_count = 0;
    for (TypeId id = btf->first_id(); id < btf->end_id(); ++id) {
      CHECK(btf->type_offset(id) == again->type_offset(id));
      for_each_name_ref(btf->type(id), [&](std::uint32_t) { ++name_count; });
    }
    CHECK(names.at.size() == name_count);
    CHECK(names.marks.size() == name_count);

    const Footprint collected(*btf, Footprint::Depth::Full, std::move(names));
    const Footprint walked(*again);
    for (std::uint32_t node = 0; node < btf->own_count(); ++node)
      CHECK(collected.strings.per_type[node] == walked.strings.per_type[node]);
    for (unsigned k = 0; k <= kMaxKind; ++k) {
      CHECK(collected.file.kinds[k].count == walked.file.kinds[k].count);
      CHECK(collected.file.kinds[k].record_bytes == walked.file.kinds[k].record_bytes);
      CHECK(collected.file.kinds[k].string_bytes == walked.file.kinds[k].string_bytes);
    }
    CHECK(collected.file.referenced_string_bytes == walked.file.referenced_string_bytes);
  }
  const auto btf = parse(small_records);
  CHECK(btf->own_count() == kPointers + 3);
  CHECK(btf->type_offset(kPointers + 1) == 16 + 12 * (kPointers - 1));
  const Footprint fp(*btf, Footprint::Depth::Kinds);
  CHECK(fp.file.kinds[static_cast<unsigned>(Kind::Ptr)].count == kPointers);
  CHECK(fp.file.kinds[static_cast<unsigned>(Kind::Ptr)].record_bytes == 12u * kPointers);
  // "int" (4 bytes with its NUL) is named by the INT and by a member of the STRUCT: 2 bytes each;
  // "pair" by the STRUCT and the TYPEDEF, 2.5 each; "second" by the STRUCT alone.
  CHECK(fp.file.kinds[static_cast<unsigned>(Kind::Int)].string_bytes == 2);
  CHECK(fp.file.kinds[static_cast<unsigned>(Kind::Struct)].string_bytes == 2 + 2.5 + 7);
  CHECK(fp.file.kinds[static_cast<unsigned>(Kind::Typedef)].string_bytes == 2.5);
}

// Btf::parse indexes a type section of a megabyte or more from both ends, on a second thread
// (btf.cc): a kernel's, records whose entries look like records themselves where it guesses its chunks'
// starts, and errors in either half, in either byte order. Each must index as one thread does. How many
// chunks the second thread takes depends on the machine: on one whose other CPU is busy it may take
// none, and these cases then check the first thread alone (they fail on a mutated merge when it is idle).

// The offsets libbpf finds for every type of `path` (a raw file or an ELF), from its first type's.
std::vector<std::uint32_t> libbpf_offsets(struct btf* b) {
  std::vector<std::uint32_t> offsets;
  const auto* first = reinterpret_cast<const char*>(btf__type_by_id(b, 1));
  for (__u32 id = 1; id < btf__type_cnt(b); ++id)
    offsets.push_back(static_cast<std::uint32_t>(reinterpret_cast<const char*>(btf__type_by_id(b, id)) - first));
  return offsets;
}

std::vector<std::uint32_t> our_offsets(const Btf& btf) {
  return {btf.type_offsets().begin(), btf.type_offsets().end()};
}

// What the index pass makes of `bytes` with the names collected (measure's way): every array, compared
// whole.
struct Indexed {
  std::vector<std::uint32_t> offsets, at;
  std::vector<std::uint8_t> marks;
  std::vector<std::uint64_t> named;
  std::array<std::uint32_t, kMaxKind + 1> records{};
  std::array<std::uint64_t, kMaxKind + 1> record_bytes{};
  bool operator==(const Indexed&) const = default;
};
Indexed indexed_with_names(std::span<const std::uint8_t> bytes) {
  RecordNames names;
  const auto btf = Btf::parse(kName, nullptr, bytes, nullptr, &names);
  REQUIRE(names.complete());
  return {our_offsets(*btf),
          {names.at.begin(), names.at.end()},
          {names.marks.begin(), names.marks.end()},
          {names.named.begin(), names.named.end()},
          names.records,
          names.record_bytes};
}
std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// A type section of 1.6 MB: an INT, then two DATASECs of 65,535 entries each, every entry (type 0,
// offset 0x02000000, size 0) reading as a PTR record where a chunk's start is guessed inside it; a
// STRUCT between them and 2,000 PTRs at the end. Little- or big-endian.
std::string lookalike_btf(bool big_endian) {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  REQUIRE(btf__add_int(t, "int", 4, BTF_INT_SIGNED) == 1);
  for (const char* name : {".data.a", ".data.b"}) {
    REQUIRE(btf__add_datasec(t, name, 0) > 0);
    for (int i = 0; i < 65535; ++i) REQUIRE(btf__add_datasec_var_info(t, 0, 0x02000000u, 0) == 0);
    REQUIRE(btf__add_struct(t, "between", 4) > 0);
    REQUIRE(btf__add_field(t, "x", 1, 0, 0) == 0);
  }
  for (int i = 0; i < 2000; ++i) REQUIRE(btf__add_ptr(t, 1) > 0);
  return raw_bytes(t, big_endian);
}

// 80,000 named TYPEDEFs, a DATASEC of 20,000 entries that read as PTR records named at offset 2 (the
// middle of "int"), and 10,000 more TYPEDEFs: the second thread reads the last chunks and the datasec's
// as whole, and the one where the datasec starts as running past its end; the first thread reads half
// of the chunks or so, so that TYPEDEF chunks the second read before that one are taken though not all
// it read is: their names' bits are set one by one.
std::string lookalike_late_btf() {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  REQUIRE(btf__add_int(t, "int", 4, BTF_INT_SIGNED) == 1);
  for (int i = 0; i < 80000; ++i) REQUIRE(btf__add_typedef(t, fmt::format("t{}", i).c_str(), 1) > 0);
  REQUIRE(btf__add_datasec(t, ".data", 0) > 0);
  for (int i = 0; i < 20000; ++i) REQUIRE(btf__add_datasec_var_info(t, 2, 0x02000000u, 0) == 0);
  for (int i = 0; i < 10000; ++i) REQUIRE(btf__add_typedef(t, fmt::format("u{}", i).c_str(), 1) > 0);
  return raw_bytes(t);
}

// A type section of about 1.4 MB in runs of records of one kind, each run some hundreds of bytes to a
// few KiB: PTRs (12 bytes), FUNC_PROTOs with 1 to 3 parameters (20 to 36) and STRUCTs with 4 to 20
// members (60 to 252), drawn from `seed`, with `ptr_share` of the bytes in PTRs and the rest split
// between the other two. The offsets' array is sized for 24-byte records with a chunk's records to
// spare: a section of smaller ones fills it before the two threads meet (the back's chunks do not fit,
// or the front's), one of larger ones leaves room, and the runs make some chunks far denser than others.
std::string mixed_btf(unsigned seed, double ptr_share) {
  std::mt19937 rng(seed);
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  REQUIRE(btf__add_int(t, "int", 4, BTF_INT_SIGNED) == 1);
  std::uint64_t bytes = 0;
  for (int other = 0; bytes < 1400000;) {
    const std::uint64_t until = bytes + std::uniform_int_distribution<std::uint64_t>(200, 6000)(rng);
    if (std::uniform_real_distribution<double>(0, 1)(rng) < ptr_share) {
      for (; bytes < until; bytes += 12) REQUIRE(btf__add_ptr(t, 1) > 0);
    } else if (other++ % 2 == 0) {
      while (bytes < until) {
        const int params = std::uniform_int_distribution<int>(1, 3)(rng);
        REQUIRE(btf__add_func_proto(t, 1) > 0);
        for (int p = 0; p < params; ++p) REQUIRE(btf__add_func_param(t, "", 1) == 0);
        bytes += 12u + 8u * params;
      }
    } else {
      while (bytes < until) {
        const int members = std::uniform_int_distribution<int>(4, 20)(rng);
        REQUIRE(btf__add_struct(t, "", 4 * members) > 0);
        for (int m = 0; m < members; ++m) REQUIRE(btf__add_field(t, "", 1, 32 * m, 0) == 0);
        bytes += 12u + 12u * members;
      }
    }
  }
  return raw_bytes(t);
}

TEST_CASE("the index pass on two threads: records smaller and larger than the offsets' array expects", "[model]") {
  // PTRs' share of the bytes, for records of about 13, 20, 23, 25 and 42 bytes on average.
  double smallest = 1e9, largest = 0;
  for (const double ptr_share : {0.9, 0.45, 0.35, 0.3, 0.05}) {
    for (unsigned seed = 1; seed <= 3; ++seed) {
      const std::string bytes = mixed_btf(seed, ptr_share);
      const std::uint32_t type_len = get_u32(bytes, 12);
      REQUIRE(type_len >= (1u << 20));
      const TempDir dir;
      const std::string path = dir.path() + "/mixed.btf";
      write_file(path, bytes);
      const BtfPtr oracle = parse_btf(path);
      REQUIRE(oracle);
      const std::vector<std::uint32_t> expected = libbpf_offsets(oracle.get());
      const double mean = static_cast<double>(type_len) / static_cast<double>(expected.size());
      smallest = std::min(smallest, mean), largest = std::max(largest, mean);
      INFO("PTRs' share " << ptr_share << ", seed " << seed << ": " << expected.size() << " records of " << mean
                          << " bytes on average");
      Indexed one;
      on_one_cpu([&] { one = indexed_with_names(bytes_of(bytes)); });
      REQUIRE(one.offsets == expected);
      // The second thread starts at a different moment each time, and so meets the first elsewhere.
      for (int run = 0; run < 4; ++run) {
        CHECK(our_offsets(*parse(bytes)) == expected);
        CHECK(indexed_with_names(bytes_of(bytes)) == one);
      }
    }
  }
  CHECK(smallest < 16);
  CHECK(largest > 32);
}

TEST_CASE("the index pass on two threads: a kernel's BTF, as libbpf indexes it, and as on one CPU", "[model]") {
  std::vector<std::string> kernels;
  if (const std::string running = running_vmlinux(); !running.empty()) kernels.push_back(running);
  std::string why_not;
  if (const auto other = other_kernel(why_not)) kernels.push_back(other->vmlinux);
  if (kernels.empty()) return skip("no kernel BTF here: " + why_not);
  for (const std::string& path : kernels) {
    INFO(path);
    const auto btf = load_btf_file(path, nullptr);
    REQUIRE(btf->type_section().size() >= (1u << 20));  // large enough to be split
    const BtfPtr oracle = parse_btf(path);
    REQUIRE(oracle);
    CHECK(our_offsets(*btf) == libbpf_offsets(oracle.get()));
    std::shared_ptr<const Btf> alone;
    on_one_cpu([&] { alone = load_btf_file(path, nullptr); });
    CHECK(our_offsets(*alone) == our_offsets(*btf));
    // With the names collected, as measure indexes: the same offsets, and the same names as on one CPU.
    const Indexed both = indexed_with_names(btf->raw());
    CHECK(both.offsets == our_offsets(*btf));
    Indexed one;
    on_one_cpu([&] { one = indexed_with_names(btf->raw()); });
    CHECK(both == one);
    CHECK(both.at.size() > btf->own_count());

    // Its last record given an unknown kind: the second thread's last chunk fails, and the message is
    // the one a single thread gives.
    std::string raw(btf->raw().begin(), btf->raw().end());
    const std::size_t last = static_cast<std::size_t>(btf->type_section().data() - btf->raw().data()) +
                             btf->type_offset(btf->end_id() - 1);
    const std::uint32_t info = btf->type(btf->end_id() - 1).info();
    for (int i = 0; i < 4; ++i) raw[last + 4 + i] = static_cast<char>(((info & 0x00ffffffu) | 25u << 24) >> (8 * i) & 0xff);
    const std::string expected = fmt::format("{}: type [{}] has unknown kind 25 (known kinds are 1..19)", kName, btf->end_id() - 1);
    CHECK(try_parse(raw).error == expected);
    on_one_cpu([&] { CHECK(try_parse(raw).error == expected); });
  }
}

TEST_CASE("the index pass on two threads: entries that look like records, errors in either half", "[model]") {
  for (const bool big_endian : {false, true}) {
    INFO((big_endian ? "big-endian" : "little-endian"));
    const std::string bytes = lookalike_btf(big_endian);
    const std::uint32_t hdr = 24, type_len = get_u32(bytes, 12);
    REQUIRE(type_len > (1u << 20));
    // The whole, several times over: the second thread starts at a different moment each time.
    std::vector<std::uint32_t> expected;
    {
      const std::string le = big_endian ? lookalike_btf(false) : bytes;
      const TempDir dir;
      const std::string path = dir.path() + "/lookalike.btf";
      write_file(path, le);
      const BtfPtr oracle = parse_btf(path);
      REQUIRE(oracle);
      expected = libbpf_offsets(oracle.get());
    }
    REQUIRE(expected.size() == 1 + 2 * 2 + 2000);
    Indexed one;
    on_one_cpu([&] { one = indexed_with_names(bytes_of(bytes)); });
    REQUIRE(one.offsets == expected);
    for (int run = 0; run < 5; ++run) {
      const auto btf = parse(bytes);
      REQUIRE(our_offsets(*btf) == expected);
      CHECK(btf->type(2).kind() == Kind::Datasec);
      CHECK(btf->type(2).vlen() == 65535);
      CHECK(indexed_with_names(bytes_of(bytes)) == one);
    }
    if (big_endian) continue;  // the errors below are read the same in either order

    const std::string late = lookalike_late_btf();
    Indexed late_one;
    on_one_cpu([&] { late_one = indexed_with_names(bytes_of(late)); });
    REQUIRE(late_one.offsets.size() == 1 + 80000 + 1 + 10000);
    for (int run = 0; run < 5; ++run) CHECK(indexed_with_names(bytes_of(late)) == late_one);

    // An unknown kind early (the first thread's chunks), and late (the second's): the message names the
    // record as one thread would, and the thread still running when the first half fails is waited for.
    const std::uint32_t last_ptr = hdr + type_len - 12;  // PTR 2,005, the last type
    const std::uint32_t early_struct = hdr + 12 + 16 + 65535 * 12;  // the first STRUCT, type 3
    for (const auto& [at, id] :
         {std::pair{hdr, 1u}, std::pair{early_struct, 3u}, std::pair{last_ptr - 12 * 999, 1006u}}) {
      std::string bad = bytes;
      put_u32(bad, at + 4, 25u << 24);
      const Outcome o = try_parse(bad);
      CHECK(o.error == fmt::format("{}: type [{}] has unknown kind 25 (known kinds are 1..19)", kName, id));
    }
    // A last record cut short: a PTR's header claimed by a STRUCT with 2 members it has no room for.
    std::string cut = bytes;
    put_u32(cut, last_ptr + 4, (4u << 24) | 2u);
    CHECK(try_parse(cut).error ==
          fmt::format("{}: truncated: type [2005] STRUCT with vlen 2 needs 36 bytes at type-section offset {}, 12 left",
                      kName, type_len - 12));
    // And the datasecs' entries not lookalikes but a 13th byte too many: the section ends mid-record.
    std::string odd = bytes;
    put_u32(odd, 12, type_len - 4);  // type_len: the last PTR loses 4 bytes
    put_u32(odd, 16, get_u32(odd, 16) - 4);  // str_off: the strings move up with it
    odd.erase(hdr + type_len - 4, 4);
    CHECK(try_parse(odd).error ==
          fmt::format("{}: truncated: type [2005] at type-section offset {} needs 12 bytes, 8 left", kName, type_len - 12));
  }
}

TEST_CASE("kind names", "[model]") {
  CHECK(kind_name(Kind::Int) == "INT");
  CHECK(kind_name(Kind::FuncProto) == "FUNC_PROTO");
  CHECK(kind_name(Kind::DeclTag) == "DECL_TAG");
  CHECK(kind_name(Kind::Enum64) == "ENUM64");
  CHECK(kind_name(Kind::Unknown) == "UNKNOWN");
  CHECK(kind_name(static_cast<Kind>(25)) == "UNKNOWN");
  for (int k = 1; k <= kMaxKind; ++k) {
    INFO("kind " << k);
    CHECK(parse_kind(kind_name(static_cast<Kind>(k))) == static_cast<Kind>(k));
  }
  CHECK(parse_kind("struct") == Kind::Struct);
  CHECK(parse_kind("func-proto") == Kind::FuncProto);
  CHECK(parse_kind("Func_Proto") == Kind::FuncProto);
  CHECK(parse_kind("type_tag") == Kind::TypeTag);
  CHECK(parse_kind("enum64") == Kind::Enum64);
  CHECK_FALSE(parse_kind("unknown").has_value());
  CHECK_FALSE(parse_kind("").has_value());
  CHECK_FALSE(parse_kind("structs").has_value());
  CHECK_FALSE(parse_kind("int ").has_value());
  CHECK_FALSE(trailing_size(Kind::Unknown, 0).has_value());
  CHECK_FALSE(trailing_size(static_cast<Kind>(20), 0).has_value());
  CHECK(trailing_size(Kind::Struct, 3) == 36u);
  CHECK(trailing_size(Kind::FuncProto, 3) == 24u);
  CHECK(trailing_size(Kind::Datasec, 2) == 24u);
  CHECK(trailing_size(Kind::Enum64, 2) == 24u);
  CHECK(trailing_size(Kind::Int, 7) == 4u);
  CHECK(trailing_size(Kind::Ptr, 7) == 0u);
}

TEST_CASE("for_each_name_ref visits names of records, members, enumerators and parameters", "[model]") {
  const auto btf = parse(all_kinds_btf());
  using Names = std::vector<std::string>;
  CHECK(names_of(*btf, name_refs(*btf, 1)) == Names{"int"});
  CHECK(names_of(*btf, name_refs(*btf, 7)) == Names{"task", "pid", "flags", "state", "", "comm"});
  CHECK(names_of(*btf, name_refs(*btf, 8)) == Names{"", "a", "b"});
  CHECK(names_of(*btf, name_refs(*btf, 10)) == Names{"delta", "DOWN", "UP"});
  CHECK(names_of(*btf, name_refs(*btf, 13)) == Names{"pid_t"});
  CHECK(names_of(*btf, name_refs(*btf, 18)) == Names{"", "task", ""});
  CHECK(names_of(*btf, name_refs(*btf, 24)) == Names{".data"});  // vars are named by their VAR records
  CHECK(names_of(*btf, name_refs(*btf, 29)) == Names{"big", "HUGE", "SMALL"});
  CHECK(names_of(*btf, name_refs(*btf, 31)) == Names{""});

  const SplitPair pair = split_btf();
  const auto split = parse(pair.split, parse(pair.base));
  CHECK(names_of(*split, name_refs(*split, 5)) == Names{"nf_conn", "len", "skb", "mark"});
}

}  // namespace
}  // namespace btfslim::test
