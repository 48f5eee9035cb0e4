// The BTF model in process: what Btf::parse reads from libbpf-built fixtures ([model]), and that no
// input, however broken, gets past it as anything but an InputError or a model every reader can walk
// ([robust]).
//
// The robustness cases parse copies sized exactly to the input, so that under ASan a read one byte past
// what the header promises is a report, not luck. They cut every fixture at every byte, mutate them
// (and the ELF headers of two real objects) thousands of times from a fixed seed (the same cases on
// every run, so a failure reproduces), check a message for each way a header or record can be wrong,
// and walk reference loops, which are legal to encode. Whatever parses is read the way the commands
// read it: both dumps, the footprint, the reference graph and its dominators. A handful of mutated files
// also go through the binary, which must say one line and exit 2.
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "process.h"

#include "btfslim/btf.h"
#include "btfslim/dump.h"
#include "btfslim/error.h"
#include "btfslim/footprint.h"
#include "btfslim/input.h"
#include "btfslim/output.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <sched.h>
#include <fmt/ranges.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <sstream>
#include <vector>

namespace btfslim::test {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

constexpr const char* kName = "test.btf";

// Parses a private copy of exactly `bytes.size()` bytes.
std::shared_ptr<const Btf> parse(const std::string& bytes, std::shared_ptr<const Btf> base = nullptr,
                                 const std::string& name = kName) {
  auto owner = std::make_shared<std::vector<std::uint8_t>>(bytes.begin(), bytes.end());
  return Btf::parse(name, owner, std::span<const std::uint8_t>(*owner), std::move(base));
}

// How one parse ended: a model, an InputError's line, or (a bug) anything else.
struct Outcome {
  std::shared_ptr<const Btf> btf;
  std::string error;
  bool foreign = false;  // threw something that is not an InputError
};

Outcome try_parse(const std::string& bytes, std::shared_ptr<const Btf> base = nullptr) {
  try {
    return {parse(bytes, std::move(base)), "", false};
  } catch (const InputError& e) {
    return {nullptr, e.what(), false};
  } catch (const std::exception& e) {
    return {nullptr, std::string("not an InputError: ") + e.what(), true};
  }
}

// "test.btf: problem" on one line.
bool well_formed(const std::string& error, const std::string& name = kName) {
  const std::string prefix = name + ": ";
  return error.starts_with(prefix) && error.size() > prefix.size() && error.find('\n') == std::string::npos;
}

void put_u32(std::string& bytes, std::size_t off, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[off + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

std::uint32_t get_u32(const std::string& bytes, std::size_t off) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t{static_cast<std::uint8_t>(bytes[off + i])} << (8 * i);
  return v;
}

std::string raw_dump(const Btf& btf) {
  return captured([&](OutputBuffer& out) { dump_raw(btf, {}, out); });
}

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

// ---------------------------------------------------------------------------------------------------
// [model]

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
  __u32 size = 0;
  const auto* data = static_cast<const char*>(btf__raw_data(t, &size));
  const std::string small_records(data, size);

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

// Runs `fn` with this thread allowed on its current CPU only (where Btf::parse starts no thread).
template <typename Fn>
void on_one_cpu(Fn&& fn) {
  cpu_set_t all, one;
  REQUIRE(sched_getaffinity(0, sizeof all, &all) == 0);
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
  try {
    fn();
  } catch (...) {
    sched_setaffinity(0, sizeof all, &all);
    throw;
  }
  REQUIRE(sched_setaffinity(0, sizeof all, &all) == 0);
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
  if (big_endian) REQUIRE(btf__set_endianness(t, BTF_BIG_ENDIAN) == 0);
  __u32 size = 0;
  const auto* data = static_cast<const char*>(btf__raw_data(t, &size));
  return std::string(data, size);
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
  __u32 size = 0;
  const auto* data = static_cast<const char*>(btf__raw_data(t, &size));
  return std::string(data, size);
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

// ---------------------------------------------------------------------------------------------------
// [robust]

// One fixture to mutate: its bytes and, for split BTF, its parsed base.
struct Subject {
  std::string label;
  std::string bytes;
  std::shared_ptr<const Btf> base;
};

std::vector<Subject> subjects() {
  const SplitPair split = split_btf();
  const SplitPair split_be = split_btf(true);
  return {
      {"small_btf", small_btf(), nullptr},
      {"all_kinds_btf", all_kinds_btf(), nullptr},
      {"all_kinds_btf big-endian", all_kinds_btf(true), nullptr},
      {"split_btf", split.split, parse(split.base, nullptr, "base.btf")},
      {"split_btf big-endian", split_be.split, parse(split_be.base, nullptr, "base.btf")},
  };
}

int devnull() {
  static const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  return fd;
}

// Reads everything a command would in process: the raw and JSON dumps, the footprint, every name.
// (C is printed by libbpf, whose crashes are judged in a child process: see c_dump_status.) Returns what
// is inconsistent, or "".
std::string walk(const Btf& btf) {
  std::ostringstream bad;
  {
    OutputBuffer out(devnull(), "/dev/null");
    dump_raw(btf, {}, out);
    dump_json(btf, {}, out);
    out.flush();
  }
  // Every name a record holds reads as a string inside the blob (under ASan, byte by byte).
  for (TypeId id = btf.first_id(); id < btf.end_id(); ++id)
    for_each_name_ref(btf.type(id), [&](std::uint32_t off) { (void)btf.str(off).size(); });

  const FileFootprint f = measure_file(btf);
  std::uint64_t records = 0;
  for (const auto& k : f.kinds) records += k.record_bytes;
  if (f.header_bytes + f.type_bytes + f.string_bytes + f.gap_bytes != f.file_bytes)
    bad << "footprint parts do not add up to " << f.file_bytes << "; ";
  if (f.referenced_string_bytes + f.unreferenced_string_bytes != f.string_bytes)
    bad << "string bytes " << f.referenced_string_bytes << " + " << f.unreferenced_string_bytes
        << " != " << f.string_bytes << "; ";
  if (records != f.type_bytes) bad << "records " << records << " != type_len " << f.type_bytes << "; ";

  // What `measure` builds beyond the per-kind roll-up: the reference graph, its dominators, retained
  // bytes, and a closure from every node (each walks references, so a loop must not trap them).
  const Footprint fp(btf);
  if (fp.graph.node_count() != btf.own_count()) bad << "graph has " << fp.graph.node_count() << " nodes; ";
  if (fp.dominators.preorder.size() != btf.own_count()) bad << "dominator preorder misses nodes; ";
  std::vector<std::uint32_t> all(fp.graph.node_count());
  std::iota(all.begin(), all.end(), 0u);
  (void)closure_sizes(fp.graph, all, fp.own);
  return bad.str();
}

// Fails the test with the first few problems found by a loop, rather than one assertion per case.
class Problems {
 public:
  void add(const std::string& what) {
    if (list_.size() < 10) list_.push_back(what);
    ++count_;
  }
  std::size_t count() const { return count_; }
  void check() const {
    std::ostringstream all;
    for (const auto& p : list_) all << "\n  " << p;
    INFO(count_ << " problems:" << all.str());
    CHECK(count_ == 0);
  }

 private:
  std::vector<std::string> list_;
  std::size_t count_ = 0;
};

// Judges one outcome: an InputError with a proper line, or a model that can be walked.
void judge(const Outcome& o, const std::string& label, Problems& problems, std::size_t& parsed) {
  // A crash takes the whole test program down before Problems can name the case: this names it.
  if (std::getenv("BTFSLIM_TEST_TRACE")) std::fprintf(stderr, "judging %s\n", label.c_str());
  if (o.btf) {
    ++parsed;
    if (const std::string bad = walk(*o.btf); !bad.empty()) problems.add(label + ": " + bad);
  } else if (o.foreign || !well_formed(o.error)) {
    problems.add(label + ": bad error '" + o.error + "'");
  }
}

TEST_CASE("every truncation is an error, only the full length parses", "[robust]") {
  Problems problems;
  for (const Subject& s : subjects()) {
    for (std::size_t len = 0; len <= s.bytes.size(); ++len) {
      const Outcome o = try_parse(s.bytes.substr(0, len), s.base);
      const std::string label = s.label + " cut at " + std::to_string(len) + "/" + std::to_string(s.bytes.size());
      if (len < s.bytes.size() && o.btf) problems.add(label + ": parsed");
      if (len == s.bytes.size() && !o.btf) problems.add(label + ": " + o.error);
      std::size_t parsed = 0;
      judge(o, label, problems, parsed);
    }
  }
  problems.check();
}

// One to four edits of `bytes` from `rng`: bit flips, random bytes, random and edge-case u32s (in either
// byte order) at 4-aligned offsets. `how` records them, to name a failing case.
std::string mutate(std::string bytes, std::mt19937& rng, std::ostringstream& how) {
  static constexpr std::uint32_t kEdges[] = {0, 1, 2, 3, 4, 12, 24, 0x7f, 0x80, 0xff, 0xffff, 0x10000,
                                             0x13000000, 0x19000000, 0x7fffffff, 0x80000000, 0xfffffffe,
                                             0xffffffff};
  auto below = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const int edits = 1 + static_cast<int>(below(4));
  for (int e = 0; e < edits; ++e) {
    // A quarter of the edits hit the 24-byte header, where one change moves whole sections.
    const std::size_t span = below(4) == 0 ? kHeaderSize : bytes.size();
    const std::size_t at = below(span);
    const std::size_t aligned = at & ~std::size_t{3};
    switch (below(4)) {
      case 0:
        bytes[at] = static_cast<char>(bytes[at] ^ (1 << below(8)));
        how << " flip@" << at;
        break;
      case 1:
        bytes[at] = static_cast<char>(rng());
        how << " byte@" << at;
        break;
      case 2:
        put_u32(bytes, aligned, rng());
        how << " u32@" << aligned;
        break;
      default: {
        std::uint32_t v = kEdges[below(std::size(kEdges))];
        if (below(2)) v = __builtin_bswap32(v);
        put_u32(bytes, aligned, v);
        how << " edge@" << aligned;
        break;
      }
    }
  }
  return bytes;
}

TEST_CASE("random mutations: an InputError or a model every reader can walk", "[robust]") {
  constexpr int kRoundsPerSubject = 3000;
  std::mt19937 rng(1);
  Problems problems;
  std::size_t total = 0, parsed = 0;
  for (const Subject& s : subjects()) {
    for (int round = 0; round < kRoundsPerSubject; ++round) {
      std::ostringstream how;
      const std::string m = mutate(s.bytes, rng, how);
      ++total;
      judge(try_parse(m, s.base), s.label + " round " + std::to_string(round) + how.str(), problems, parsed);
    }
  }
  INFO(parsed << " of " << total << " mutations parsed");
  CHECK(total >= 10000);
  // The loop must exercise both ends: models to walk and errors to judge.
  CHECK(parsed > total / 20);
  CHECK(parsed < total);
  problems.check();
}

// `dump -f c` of a parsed BTF in a child process, so that a crash or hang in libbpf is a result rather
// than the end of the test program: 0 printed, 2 refused with a proper line, 3 refused with a bad line,
// 128 + n killed by signal n (SIGALRM after `seconds`: a hang; under ASan a crash exits 1 after its
// report instead). Standalone BTF only: libbpf reads split BTF again from its path, which an in-memory
// blob does not have.
int c_dump_status(const Btf& btf, unsigned seconds = 5) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::alarm(seconds);
    int status = 0;
    try {
      OutputBuffer out(devnull(), "/dev/null");
      dump_c(btf, {}, out);
      out.flush();
    } catch (const InputError& e) {
      status = well_formed(e.what(), btf.name()) ? 2 : 3;
    }
    ::_exit(status);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// libbpf's btf_dump trusts that its input passed the kernel's checks; src/btf/c_check.cc refuses what it
// cannot print. Mutants find what that check misses. Each case stops at a few problems, so that hangs
// (a few seconds each) cannot make it slow.
TEST_CASE("dump -f c on random mutations: C or one line, never a crash", "[robust]") {
  constexpr int kRoundsPerSubject = 400;
  std::mt19937 rng(2);
  Problems problems;
  std::size_t parsed = 0;
  const std::vector<Subject> all = subjects();
  for (const Subject& s : all) {
    if (s.base) continue;
    for (int round = 0; round < kRoundsPerSubject && problems.count() < 5; ++round) {
      std::ostringstream how;
      const std::string m = mutate(s.bytes, rng, how);
      const Outcome o = try_parse(m);
      if (!o.btf) continue;
      ++parsed;
      if (const int status = c_dump_status(*o.btf, 3); status != 0 && status != 2)
        problems.add(s.label + " round " + std::to_string(round) + how.str() + ": dump -f c status " +
                     std::to_string(status) + (status == 128 + SIGALRM ? " (hang)" : ""));
    }
  }
  INFO(parsed << " mutants parsed");
  CHECK(parsed > 100);
  problems.check();
}

TEST_CASE("ELF mutations: an InputError or a model every reader can walk", "[robust]") {
  constexpr int kRoundsPerFile = 300;
  std::mt19937 rng(1);
  auto below = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  TempDir dir;
  const std::string path = dir.file("mutant.o");
  Problems problems;
  std::size_t total = 0, parsed = 0;
  for (const char* name : {"pahole_types.o", "minimal.bpf.o"}) {
    const std::string elf = read_file(build_data_dir() + "/" + name);
    REQUIRE(elf.size() > 64);
    REQUIRE(elf.substr(0, 6) == "\x7f" "ELF\x02\x01");  // ELF64 little-endian: the offsets below
    const std::uint64_t shoff = get_u32(elf, 0x28) | (std::uint64_t{get_u32(elf, 0x2c)} << 32);
    const std::size_t shnum = static_cast<std::uint8_t>(elf[0x3c]) | (static_cast<std::uint8_t>(elf[0x3d]) << 8);
    REQUIRE(shoff + shnum * 64 <= elf.size());
    for (int round = 0; round < kRoundsPerFile; ++round) {
      std::string m = elf;
      std::ostringstream how;
      const int edits = 1 + static_cast<int>(below(3));
      for (int e = 0; e < edits; ++e) {
        // The ELF header and section headers: what libelf and our bounds checks read.
        const std::size_t at = below(3) == 0 ? below(64) : shoff + below(shnum * 64);
        const std::size_t aligned = at & ~std::size_t{7};
        switch (below(3)) {
          case 0:
            m[at] = static_cast<char>(m[at] ^ (1 << below(8)));
            how << " flip@" << at;
            break;
          case 1:
            m[at] = static_cast<char>(rng());
            how << " byte@" << at;
            break;
          default: {
            const std::uint64_t edge[] = {0, 1, m.size() - 1, m.size(), m.size() + 1, ~std::uint64_t{0},
                                          std::uint64_t{1} << 63, std::uint64_t{rng()} << 32 | rng()};
            const std::uint64_t v = edge[below(std::size(edge))];
            put_u32(m, aligned, static_cast<std::uint32_t>(v));
            put_u32(m, aligned + 4, static_cast<std::uint32_t>(v >> 32));
            how << " u64@" << aligned;
            break;
          }
        }
      }
      if (below(10) == 0) {
        m.resize(below(m.size()));
        how << " cut@" << m.size();
      }
      write_file(path, m);
      ++total;
      const std::string label = std::string(name) + " round " + std::to_string(round) + how.str();
      try {
        const auto btf = load_btf(path);
        ++parsed;
        if (const std::string bad = walk(*btf); !bad.empty()) problems.add(label + ": " + bad);
      } catch (const InputError& e) {
        const std::string error = e.what();
        if (!error.starts_with(path + ": ") || error.find('\n') != std::string::npos)
          problems.add(label + ": bad error '" + error + "'");
      } catch (const std::exception& e) {
        problems.add(label + ": not an InputError: " + e.what());
      }
    }
  }
  INFO(parsed << " of " << total << " ELF mutations parsed");
  CHECK(parsed > total / 20);
  CHECK(parsed < total);
  problems.check();
}

// small_btf() with one u32 replaced, and where its records are.
struct Small {
  std::string bytes = small_btf();
  std::shared_ptr<const Btf> btf = parse(bytes);
  std::size_t record(TypeId id) const {
    return btf->header().hdr_len + btf->header().type_off + btf->type_offset(id);
  }
  std::size_t strings() const { return btf->header().hdr_len + btf->header().str_off; }
  std::string with_u32(std::size_t off, std::uint32_t v) const {
    std::string m = bytes;
    put_u32(m, off, v);
    return m;
  }
};

std::string error_of(const std::string& bytes, std::shared_ptr<const Btf> base = nullptr) {
  const Outcome o = try_parse(bytes, std::move(base));
  INFO("parsed: " << (o.btf ? "yes" : "no") << ", error: " << o.error);
  CHECK_FALSE(o.btf);
  CHECK_FALSE(o.foreign);
  CHECK(well_formed(o.error));
  return o.error;
}

TEST_CASE("specific corruptions name what is wrong", "[robust]") {
  const Small s;
  const Header h = s.btf->header();
  // small_btf(): [1] INT 'int', [2] STRUCT 'pair' (2 members), [3] PTR, [4] TYPEDEF, [5] ENUM.
  REQUIRE(s.btf->own_count() == 5);
  REQUIRE(s.btf->type(2).kind() == Kind::Struct);
  REQUIRE(s.btf->type(3).kind() == Kind::Ptr);

  SECTION("sizes below a header") {
    CHECK_THAT(error_of(""), Contains("empty file"));
    CHECK_THAT(error_of(s.bytes.substr(0, 3)), Contains("too short for a BTF header"));
    CHECK_THAT(error_of(s.bytes.substr(0, 7)), Contains("too short for a BTF header"));
  }
  SECTION("wrong magic") {
    std::string m = s.bytes;
    m[0] = 0x12;
    m[1] = 0x34;
    CHECK_THAT(error_of(m), Contains("bad magic 0x1234"));
  }
  SECTION("version 2") {
    std::string m = s.bytes;
    m[2] = 2;
    CHECK_THAT(error_of(m), Contains("unsupported BTF version 2"));
  }
  SECTION("hdr_len 8") {
    CHECK_THAT(error_of(s.with_u32(4, 8)), Contains("header length 8 is smaller than the 24 bytes"));
  }
  SECTION("hdr_len beyond the file") {
    const auto len = static_cast<std::uint32_t>(s.bytes.size() + 1);
    CHECK_THAT(error_of(s.with_u32(4, len)),
               Contains(fmt::format("header length {} exceeds the {} bytes", len, s.bytes.size())));
    CHECK_THAT(error_of(s.with_u32(4, 0xffffffff)), Contains("header length 4294967295 exceeds"));
  }
  SECTION("type section past the end") {
    CHECK_THAT(error_of(s.with_u32(12, 0xffffffff)), Contains("type section [24, 4294967319) ends past"));
    CHECK_THAT(error_of(s.with_u32(8, 0xfffffff0)), Contains("type section") && Contains("ends past"));
  }
  SECTION("string section past the end") {
    CHECK_THAT(error_of(s.with_u32(20, h.str_len + 1)),
               Contains(fmt::format("string section [{}, {}) ends past the {} bytes available", s.strings(),
                                    s.strings() + h.str_len + 1, s.bytes.size())));
    CHECK_THAT(error_of(s.with_u32(16, 0xffffffff)), Contains("string section") && Contains("ends past"));
  }
  SECTION("sections overlapping") {
    CHECK_THAT(error_of(s.with_u32(16, h.type_len - 4)), Contains("overlap"));
    CHECK_THAT(error_of(s.with_u32(16, 0)), Contains("type section [24, ") && Contains("overlap"));
  }
  SECTION("string section not ending in NUL") {
    std::string m = s.bytes;
    m.back() = 'x';
    CHECK_THAT(error_of(m), Contains("string section does not end in a NUL byte"));
  }
  SECTION("string section empty or not starting with the empty string") {
    CHECK_THAT(error_of(s.with_u32(20, 0)), Contains("string section is empty"));
    std::string m = s.bytes;
    m[s.strings()] = 'x';
    CHECK_THAT(error_of(m), Contains("pass --base"));
  }
  SECTION("unknown kind names the type id") {
    CHECK_THAT(error_of(s.with_u32(s.record(3) + 4, 25u << 24)), Contains("type [3] has unknown kind 25"));
    CHECK_THAT(error_of(s.with_u32(s.record(3) + 4, 0)), Contains("type [3] has unknown kind 0"));
    CHECK_THAT(error_of(s.with_u32(s.record(1) + 4, 31u << 24)), Contains("type [1] has unknown kind 31"));
  }
  SECTION("a member type id out of range") {
    CHECK_THAT(error_of(s.with_u32(s.record(2) + 12 + 12 + 4, 99)),
               Contains("type [2] STRUCT: a member refers to type 99, but the last type is [5]"));
    CHECK_THAT(error_of(s.with_u32(s.record(3) + 8, 6)), Contains("type [3] PTR: its type refers to type 6"));
  }
  SECTION("a name offset out of range") {
    CHECK_THAT(error_of(s.with_u32(s.record(1), h.str_len)),
               Contains(fmt::format("type [1] INT: name offset {} is past the end of the strings", h.str_len)));
    CHECK_THAT(error_of(s.with_u32(s.record(2) + 12, 0xffffffff)),
               Contains("type [2] STRUCT: member name offset 4294967295"));
  }
  SECTION("a vlen too large for the remaining bytes") {
    const std::uint32_t info = get_u32(s.bytes, s.record(2) + 4);
    CHECK_THAT(error_of(s.with_u32(s.record(2) + 4, (info & ~0xffffu) | 100)),
               Contains("type [2] STRUCT with vlen 100 needs 1212 bytes"));
    CHECK_THAT(error_of(s.with_u32(12, h.type_len - 4)), Contains("needs") && Contains("left"));
  }
  SECTION("split BTF: its own ids and strings start after the base's") {
    const SplitPair pair = split_btf();
    const auto base = parse(pair.base, nullptr, "base.btf");
    const auto split = parse(pair.split, base);
    const std::size_t conn = split->header().hdr_len + split->type_offset(5);
    std::string m = pair.split;
    put_u32(m, conn + 12 + 12 + 4, 7);  // member 'skb' -> [7], one past the last
    // On its base, an id past the last type means the base is not the one it was built on.
    CHECK_THAT(error_of(m, base), Contains("split BTF built on another base than base.btf (type [5] STRUCT: a member "
                                           "refers to type 7, past the last type [6]): pass the BTF it was built on "
                                           "with --base"));
    CHECK_THAT(error_of(pair.split), Contains("pass --base"));

    // A split BTF that only adds a pointer has no strings of its own: valid on its base, and without it
    // the empty string section is what gives it away.
    BtfPtr lib_base(btf__new(pair.base.data(), static_cast<__u32>(pair.base.size())));
    REQUIRE(lib_base != nullptr);
    BtfPtr lib_split(btf__new_empty_split(lib_base.get()));
    REQUIRE(btf__add_ptr(lib_split.get(), 3) == 4);
    __u32 size = 0;
    const void* data = btf__raw_data(lib_split.get(), &size);
    REQUIRE(data != nullptr);
    const std::string pointer_only(static_cast<const char*>(data), size);
    const auto parsed = parse(pointer_only, base);
    CHECK(parsed->header().str_len == 0);
    CHECK(parsed->end_id() == 5);
    CHECK_THAT(error_of(pointer_only), Contains("string section is empty") && Contains("pass --base"));
  }
}

// Reference loops: legal to encode, and nothing that reads them may go round forever.
std::string loop_btf() {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  REQUIRE(btf__add_typedef(t, "loop_t", 2) == 1);      // [1] typedef -> [2]
  REQUIRE(btf__add_const(t, 1) == 2);                  // [2] const -> [1]
  REQUIRE(btf__add_ptr(t, 3) == 3);                    // [3] ptr -> itself
  REQUIRE(btf__add_struct(t, "self", 8) == 4);         // [4] struct self { struct self s; }
  REQUIRE(btf__add_field(t, "s", 4, 0, 0) == 0);
  REQUIRE(btf__add_array(t, 7, 5, 2) == 5);            // [5] array of itself
  REQUIRE(btf__add_volatile(t, 6) == 6);               // [6] volatile -> itself
  REQUIRE(btf__add_int(t, "int", 4, BTF_INT_SIGNED) == 7);
  __u32 size = 0;
  const void* data = btf__raw_data(t, &size);
  REQUIRE(data != nullptr);
  return std::string(static_cast<const char*>(data), size);
}

// all_kinds_btf() with `count` more INT records after its own: each of its records then has that many
// bytes after it, for a reader that treats the last records of a section otherwise than the rest.
std::string with_records_after(const std::string& bytes, bool big_endian, std::uint32_t count) {
  auto order = [&](std::uint32_t v) { return big_endian ? __builtin_bswap32(v) : v; };
  const std::uint32_t hdr_len = order(get_u32(bytes, 4)), type_off = order(get_u32(bytes, 8)),
                      type_len = order(get_u32(bytes, 12)), str_off = order(get_u32(bytes, 16));
  REQUIRE(type_off == 0);
  REQUIRE(str_off == type_len);
  std::string pad(std::size_t{count} * 16, '\0');
  for (std::uint32_t i = 0; i < count; ++i) {
    put_u32(pad, 16 * i + 4, order(1u << 24));  // INT, no name
    put_u32(pad, 16 * i + 8, order(4));
    put_u32(pad, 16 * i + 12, order(32));
  }
  std::string out = bytes;
  out.insert(hdr_len + type_len, pad);
  put_u32(out, 12, order(type_len + static_cast<std::uint32_t>(pad.size())));
  put_u32(out, 16, order(str_off + static_cast<std::uint32_t>(pad.size())));
  return out;
}

TEST_CASE("every name and type id of every kind is checked, near the section's end and far from it", "[robust]") {
  for (const bool big_endian : {false, true}) {
    for (const std::uint32_t after : {0u, 1u, 8u}) {
      const std::string bytes = with_records_after(all_kinds_btf(big_endian), big_endian, after);
      const auto btf = parse(bytes);
      std::uint32_t kinds = 0, fields = 0;
      for (TypeId id = 1; id < btf->end_id(); ++id) {
        const TypeView t = btf->type(id);
        kinds |= 1u << static_cast<unsigned>(t.kind());
        const std::size_t record = btf->header().hdr_len + btf->header().type_off + btf->type_offset(id);
        auto with = [&](std::uint32_t at, std::uint32_t v) {
          std::string m = bytes;
          put_u32(m, record + at, big_endian ? __builtin_bswap32(v) : v);
          return m;
        };
        INFO((big_endian ? "big" : "little") << "-endian, " << after << " records after, type [" << id << "] "
                                             << kind_name(t.kind()));
        for_each_field(
            t.info(),
            [&](std::uint32_t at, NameRole) {
              ++fields;
              INFO("name at " << at);
              CHECK_THAT(error_of(with(at, btf->string_end())), Contains(fmt::format("[{}]", id)) && Contains("name offset"));
            },
            [&](std::uint32_t at, RefRole) {
              ++fields;
              INFO("type id at " << at);
              CHECK_THAT(error_of(with(at, btf->end_id())), Contains(fmt::format("[{}]", id)) && Contains("refers to type"));
            });
      }
      CHECK(kinds == ((2u << kMaxKind) - 2));  // every kind, so every mask
      CHECK(fields > 50);
    }
  }
}

TEST_CASE("reference loops parse, dump and measure", "[robust]") {
  const std::string bytes = loop_btf();
  const auto btf = parse(bytes);
  REQUIRE(btf->own_count() == 7);
  CHECK(btf->type(1).ref() == 2);
  CHECK(btf->type(2).ref() == 1);
  CHECK(btf->type(3).ref() == 3);
  CHECK(walk(*btf).empty());
  const std::string dump = raw_dump(*btf);
  CHECK_THAT(dump, StartsWith("[1] TYPEDEF 'loop_t' type_id=2\n[2] CONST '(anon)' type_id=1\n"
                              "[3] PTR '(anon)' type_id=3\n"));

  // The binary too, in every format that reads types.
  TempDir dir;
  const std::string path = dir.file("loop.btf");
  write_file(path, bytes);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"dump", path}, {"dump", "-f", "json", path}, {"measure", path},
        {"measure", "-f", "json", path}, {"measure", "-f", "csv", path}, {"measure", "--by", "type", "--all", path},
        {"measure", "-f", "json", "--all", "--closure", path}, {"measure", "--by", "prefix", path},
        {"measure", "--type", "loop_t", path}, {"measure", "--type", "3", path},
        {"measure", "--without", "typedef", path}, {"measure", "--svg", dir.file("loop.svg"), path}}) {
    const RunResult r = btfslim(args);
    INFO(fmt::format("btfslim {}: status {}, stderr: {}", fmt::join(args, " "), r.status, r.err));
    CHECK(r.status == 0);
    CHECK(r.err.empty());
    CHECK_FALSE(r.out.empty());
  }
}

// One shape libbpf cannot print after [1] int, so that each is judged apart.
std::string unprintable_btf(const std::string& which) {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  REQUIRE(btf__add_int(t, "int", 4, BTF_INT_SIGNED) == 1);
  if (which == "typedef-const") {
    REQUIRE(btf__add_typedef(t, "loop_t", 3) == 2);
    REQUIRE(btf__add_const(t, 2) == 3);
  } else if (which == "ptr") {
    REQUIRE(btf__add_ptr(t, 2) == 2);
  } else if (which == "struct") {
    REQUIRE(btf__add_struct(t, "self", 8) == 2);
    REQUIRE(btf__add_field(t, "s", 2, 0, 0) == 0);
  } else if (which == "array") {
    REQUIRE(btf__add_array(t, 1, 2, 2) == 2);
  } else if (which == "function-pointer") {  // int (*)(int (*)(int (*)(...
    REQUIRE(btf__add_func_proto(t, 1) == 2);
    REQUIRE(btf__add_func_param(t, "f", 3) == 0);
    REQUIRE(btf__add_ptr(t, 2) == 3);
  } else if (which == "member-var" || which == "member-func-proto") {  // no loop: a member C cannot have
    if (which == "member-var")
      REQUIRE(btf__add_var(t, "v", BTF_VAR_STATIC, 1) == 2);
    else
      REQUIRE(btf__add_func_proto(t, 1) == 2);
    REQUIRE(btf__add_struct(t, "s", 8) == 3);
    REQUIRE(btf__add_field(t, "m", 2, 0, 0) == 0);
  } else {
    REQUIRE(btf__add_volatile(t, 2) == 2);
  }
  __u32 size = 0;
  const void* data = btf__raw_data(t, &size);
  REQUIRE(data != nullptr);
  return std::string(static_cast<const char*>(data), size);
}

// libbpf's btf_dump (libbpf 1.1.2, and bpftool with it) trusts that its input passed the kernel's checks:
// it recurses without end on loops that do not pass through a struct or union, divides by a zero
// alignment for a member of a kind that has no size (VAR, FUNC_PROTO), and stops with ELOOP after
// printing the header on a struct that contains itself. Our model only checks ranges, so `dump -f c`
// refuses such BTF before handing it to libbpf (src/btf/c_check.cc); each run is bounded by timeout(1)
// so that a hang fails instead of stalling the suite.
TEST_CASE("dump -f c refuses what libbpf cannot print: one line, exit 2", "[robust]") {
  TempDir dir;
  for (const std::string which :
       {"typedef-const", "ptr", "struct", "array", "volatile", "function-pointer", "member-var", "member-func-proto"}) {
    const std::string path = dir.file(which + ".btf");
    write_file(path, unprintable_btf(which));
    const RunResult r = run({"timeout", "5", btfslim_path(), "dump", "-f", "c", path});
    INFO(which << ": dump -f c: status " << r.status << " (124: timed out, 136: SIGFPE, 139: SIGSEGV), stdout "
               << r.out.size() << " bytes, stderr: " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, StartsWith("btfslim: " + path + ": cannot print as C: "));
  }
}

// Shapes the mutants found that pass the C check but not libbpf's layout of a struct: an INT of size 0
// and a member of type void (alignment 0: SIGFPE), a member at bit 2^31 (padding printed for ever), a
// member ending past its struct (an array of 2^31 bytes there wraps libbpf's int offsets: 170 MB of
// padding, the hang of round 386 in the mutation test below).
TEST_CASE("dump -f c on members libbpf cannot lay out: one line, never a crash", "[robust]") {
  const Small s;
  const std::size_t pair = s.record(2);  // [2] STRUCT 'pair' { int a; int b; }
  const std::vector<std::pair<std::string, std::string>> shapes = {
      {"INT of size 0", s.with_u32(s.record(1) + 8, 0)},
      {"member of type void", s.with_u32(pair + 12 + 12 + 4, 0)},
      {"member at bit 2^31 - 1", s.with_u32(pair + 12 + 8, 0x7fffffff)},
      {"member ending past its struct", s.with_u32(pair + 8, 4)},
  };
  for (const auto& [what, bytes] : shapes) {
    const auto btf = parse(bytes);
    const int status = c_dump_status(*btf, 3);
    INFO(what << ": dump -f c status " << status << " (2: refused; 136: SIGFPE, 1 under ASan; 142: hang)");
    CHECK(status == 2);
  }
}

TEST_CASE("the binary on mutated files: one line, exit 2, nothing on stdout", "[robust]") {
  TempDir dir;
  std::mt19937 rng(1);
  const std::vector<Subject> all = subjects();
  int rejected = 0, accepted = 0;
  for (int i = 0; i < 400 && (rejected < 12 || accepted < 4); ++i) {
    const Subject& s = all[i % 3];  // the standalone subjects: the binary reads them without --base
    std::string m = s.bytes;
    put_u32(m, (rng() % m.size()) & ~std::size_t{3}, rng());
    const bool parses = try_parse(m).btf != nullptr;
    if (parses ? accepted >= 4 : rejected >= 12) continue;
    (parses ? accepted : rejected)++;
    const std::string path = dir.file("mutant" + std::to_string(i) + ".btf");
    write_file(path, m);
    for (const char* command : {"dump", "measure"}) {
      const RunResult r = btfslim({command, path});
      INFO(command << " " << s.label << " mutant " << i << ": status " << r.status << ", stderr: " << r.err);
      if (parses) {
        CHECK(r.status == 0);
        CHECK(r.err.empty());
        continue;
      }
      CHECK(r.status == 2);
      CHECK(r.out.empty());
      CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
      CHECK_THAT(r.err, StartsWith("btfslim: " + path + ": "));
    }
  }
  CHECK(rejected == 12);
  CHECK(accepted == 4);
}

}  // namespace
}  // namespace btfslim::test
