// The kernel's walk of a struct for a load through a BTF-typed pointer (walk_struct, [btf-access]), on
// BTF built here with libbpf's writer and on the running kernel's, and the check that a slim BTF walks a
// program's loads as the source does (verify_accesses).
#include "btf_bytes.h"
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "process.h"

#include "btfslim/btf.h"
#include "btfslim/btf_access.h"
#include "btfslim/core.h"
#include "btfslim/input.h"
#include "btfslim/kernel_btf.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>

#include <memory>
#include <string>

using namespace btfslim;
using test::added;
using test::BtfPtr;
using Catch::Matchers::Contains;
using Result = StructAccess::Result;

namespace {

std::shared_ptr<const Btf> parsed(struct btf* b) { return test::parse(test::raw_bytes(b), nullptr, "test"); }

// The kernel's layouts the walk meets, in small (a pointer may name a later id):
//   [6]  struct sockaddr { u16 sa_family; char sa_data[14]; }                          16 bytes
//   [10] union { u8 a8[16]; u32 a32[4]; }                                              16 bytes
//   [11] struct in6 { union u; }                                                       16 bytes
//   [17] struct task { int pid; struct task *parent; struct in6 addr; u8 flags:3, state:5;
//                      const struct task *cpu_ptr[2]; char tail[]; }                  56 bytes
//   [19] struct head { int n; struct in6 items[]; }                                    4 bytes
//   [21] struct one { union { struct task *t; } only; }                                8 bytes
//   [23] struct ints { int n; int v[]; }                                               4 bytes
// A slim variant drops sockaddr's sa_data, or the union's a8.
constexpr TypeId kSockaddr = 6, kUnion = 10, kIn6 = 11, kTask = 17, kHead = 19, kOne = 21, kInts = 23;

std::shared_ptr<const Btf> layout(bool sa_data = true, bool a8 = true) {
  BtfPtr b(btf__new_empty());
  struct btf* t = b.get();
  added(btf__add_int(t, "u8", 1, 0));                  // 1
  added(btf__add_int(t, "u16", 2, 0));                 // 2
  added(btf__add_int(t, "int", 4, BTF_INT_SIGNED));    // 3
  added(btf__add_int(t, "char", 1, BTF_INT_CHAR));     // 4
  added(btf__add_array(t, 3, 4, 14));                  // 5 char[14]
  REQUIRE(added(btf__add_struct(t, "sockaddr", 16)) == kSockaddr);
  added(btf__add_field(t, "sa_family", 2, 0, 0));
  if (sa_data) added(btf__add_field(t, "sa_data", 5, 16, 0));
  added(btf__add_int(t, "u32", 4, 0));                 // 7
  added(btf__add_array(t, 3, 1, 16));                  // 8 u8[16]
  added(btf__add_array(t, 3, 7, 4));                   // 9 u32[4]
  REQUIRE(added(btf__add_union(t, "", 16)) == kUnion);
  if (a8) added(btf__add_field(t, "a8", 8, 0, 0));
  added(btf__add_field(t, "a32", 9, 0, 0));
  REQUIRE(added(btf__add_struct(t, "in6", 16)) == kIn6);
  added(btf__add_field(t, "u", kUnion, 0, 0));
  added(btf__add_ptr(t, kTask));                       // 12 struct task *
  added(btf__add_const(t, kTask));                     // 13 const struct task
  added(btf__add_ptr(t, 13));                          // 14 const struct task *
  added(btf__add_array(t, 3, 14, 2));                  // 15 const struct task *[2]
  added(btf__add_array(t, 3, 4, 0));                   // 16 char[]
  REQUIRE(added(btf__add_struct(t, "task", 56)) == kTask);
  added(btf__add_field(t, "pid", 3, 0, 0));
  added(btf__add_field(t, "parent", 12, 64, 0));
  added(btf__add_field(t, "addr", kIn6, 128, 0));
  added(btf__add_field(t, "flags", 1, 256, 3));
  added(btf__add_field(t, "state", 1, 259, 5));
  added(btf__add_field(t, "cpu_ptr", 15, 320, 0));
  added(btf__add_field(t, "tail", 16, 448, 0));
  added(btf__add_array(t, 3, kIn6, 0));                // 18 struct in6[]
  REQUIRE(added(btf__add_struct(t, "head", 4)) == kHead);
  added(btf__add_field(t, "n", 3, 0, 0));
  added(btf__add_field(t, "items", 18, 32, 0));
  added(btf__add_union(t, "", 8));                     // 20
  added(btf__add_field(t, "t", 12, 0, 0));
  REQUIRE(added(btf__add_struct(t, "one", 8)) == kOne);
  added(btf__add_field(t, "only", 20, 0, 0));
  added(btf__add_array(t, 3, 3, 0));                   // 22 int[]
  REQUIRE(added(btf__add_struct(t, "ints", 4)) == kInts);
  added(btf__add_field(t, "n", 3, 0, 0));
  added(btf__add_field(t, "v", 22, 32, 0));
  return parsed(t);
}

std::string path(const Btf& btf, const StructAccess& a) { return describe_path(btf, a.path); }

}  // namespace

TEST_CASE("the kernel's walk finds the member that covers a load and what it gives", "[btf-access]") {
  const auto btf = layout();
  const Btf& b = *btf;

  // sockaddr read as sockaddr_in: sin_addr's bytes are sa_data's.
  StructAccess a = walk_struct(b, kSockaddr, 4, 4);
  CHECK(a.result == Result::Scalar);
  CHECK(path(b, a) == "sa_data[2]");
  CHECK(path(b, walk_struct(b, kSockaddr, 0, 2)) == "sa_family");

  // A pointer member gives a pointer to its struct, past const.
  a = walk_struct(b, kTask, 8, 8);
  CHECK(a.result == Result::Pointer);
  CHECK(a.pointee == kTask);
  CHECK(path(b, a) == "parent");
  a = walk_struct(b, kTask, 48, 8);
  CHECK(a.result == Result::Pointer);
  CHECK(a.pointee == kTask);
  CHECK(path(b, a) == "cpu_ptr[1]");

  // Into a struct and the union it holds: the union's first member that covers the load.
  a = walk_struct(b, kTask, 28, 4);
  CHECK(a.result == Result::Scalar);
  CHECK(path(b, a) == "addr.u.a8[12]");
  CHECK(a.untrusted);
  a = walk_struct(b, kTask, 16, 16);
  CHECK(path(b, a) == "addr.u.a8[0]");

  // A bitfield is read whole, from its first byte.
  CHECK(path(b, walk_struct(b, kTask, 32, 1)) == "flags");

  // Flexible arrays at the end: of integers, and of structs taken modulo the element.
  a = walk_struct(b, kTask, 60, 4);
  CHECK(a.result == Result::Scalar);
  CHECK(path(b, a) == "tail[4]");
  a = walk_struct(b, kHead, 4 + 16 * 2 + 4, 4);
  CHECK(a.result == Result::Scalar);
  CHECK(path(b, a) == "items[2].u.a8[4]");
  CHECK(walk_struct(b, kInts, 8, 4).result == Result::Scalar);

  // A union of one member is not a union the kernel distrusts.
  a = walk_struct(b, kOne, 0, 8);
  CHECK(a.result == Result::Pointer);
  CHECK(!a.untrusted);
  CHECK(path(b, a) == "only.t");
}

TEST_CASE("the kernel's walk refuses what the verifier refuses, with its reason", "[btf-access]") {
  const auto btf = layout();
  const Btf& b = *btf;
  auto error = [&](TypeId t, std::int64_t off, std::uint32_t size) {
    const StructAccess a = walk_struct(b, t, off, size);
    CHECK(a.result == Result::Error);
    return a.error;
  };
  CHECK_THAT(error(kSockaddr, 14, 4), Contains("access beyond struct sockaddr at off 14 size 4"));
  CHECK_THAT(error(kSockaddr, 1, 2), Contains("access beyond the end of member sa_family"));
  CHECK_THAT(error(kTask, 8, 4), Contains("cannot access ptr member parent"));
  CHECK_THAT(error(kTask, 4, 4), Contains("struct task doesn't have field at offset 4"));
  CHECK_THAT(error(kTask, 33, 1), Contains("doesn't have field at offset 33"));  // a bitfield's second byte
  CHECK_THAT(error(kSockaddr, -4, 4), Contains("negative offset"));
  CHECK_THAT(error(3, 0, 4), Contains("is not a struct"));
}

TEST_CASE("the kernel's walk of the running kernel's BTF, as its verifier takes it", "[btf-access]") {
  const std::string vmlinux = test::running_vmlinux();
  if (vmlinux.empty()) return test::skip("no /sys/kernel/btf/vmlinux on this machine");
  const auto kernel = load_btf(vmlinux);
  const Btf& b = *kernel;
  const KernelTypeNames names(b);
  const TypeId sockaddr = names.find("sockaddr", Kind::Struct), task = names.find("task_struct", Kind::Struct);
  REQUIRE(sockaddr != 0);
  REQUIRE(task != 0);
  // sockaddr_in's sin_addr (bytes 4..8) lies in sockaddr's sa_data (or, since 6.2, the union around it).
  const StructAccess a = walk_struct(b, sockaddr, 4, 4);
  CHECK(a.result == Result::Scalar);
  CHECK_THAT(describe_path(b, a.path), Contains("sa_data"));
  // task_struct's real_parent is a pointer to a task_struct.
  const TypeView t = b.type(task);
  std::int64_t parent = -1;
  for (unsigned i = 0; i < t.vlen(); ++i)
    if (b.str(t.member(i).name_off) == "real_parent") parent = t.member_bit_offset(t.member(i)) / 8;
  REQUIRE(parent > 0);
  const StructAccess p = walk_struct(b, task, parent, 8);
  CHECK(p.result == Result::Pointer);
  CHECK(p.pointee == task);
}

TEST_CASE("a slim BTF that walks a load differently is named with the program, instruction, struct and offset",
          "[btf-access]") {
  const auto source = layout();
  // The loads' object: only its path and functions are read (none of them here holds the loads).
  const auto obj = BpfObject::open(test::build_data_dir() + "/minimal.bpf.o");
  KernelAccesses object;
  object.programs.push_back({"restrict_connect", "lsm/socket_connect", 0});
  object.sections.push_back({"lsm/socket_connect", 0, 12});
  object.contexts.emplace_back();
  object.found.accesses.push_back({0, 6, kSockaddr, 4, 4, walk_struct(*source, kSockaddr, 4, 4)});
  object.found.accesses.push_back({0, 9, kTask, 28, 4, walk_struct(*source, kTask, 28, 4)});
  std::vector<TypeId> same(source->end_id());
  for (TypeId id = 0; id < source->end_id(); ++id) same[id] = id;

  CHECK(verify_accesses(*source, *source, same, *obj, object) == "");

  const auto no_sa_data = layout(false, true);
  const std::string lost = verify_accesses(*source, *no_sa_data, same, *obj, object);
  CHECK_THAT(lost, Contains("minimal.bpf.o restrict_connect lsm/socket_connect insn #6"));
  CHECK_THAT(lost, Contains("a load of 4 bytes at offset 4 of struct 'sockaddr'"));
  CHECK_THAT(lost, Contains("reads 'sa_data[2]' on the source and fails on the slim BTF"));

  const auto no_a8 = layout(true, false);
  const std::string other = verify_accesses(*source, *no_a8, same, *obj, object);
  CHECK_THAT(other, Contains("insn #9"));
  CHECK_THAT(other, Contains("reads 'addr.u.a8[12]' on the source and 'addr.u.a32[3]' on the slim BTF"));

  std::vector<TypeId> dropped = same;
  dropped[kSockaddr] = 0;
  CHECK_THAT(verify_accesses(*source, *source, dropped, *obj, object), Contains("a struct the slim BTF lacks"));
}
