// `btfslim diff` pairs unnamed members by what they hold, and reads each side on its own base ([diff]).
// BTF built here with libbpf's btf__add_*; the kernels' sk_buff where a second kernel was fetched.
#include "csv.h"
#include "fixtures.h"
#include "libbpf_oracle.h"
#include "process.h"

#include <bpf/btf.h>
#include <catch2/catch.hpp>

#include <functional>
#include <set>

namespace btfslim::test {
namespace {

using Catch::Matchers::Contains;

// struct skb { union {int len; int data_len;}; [union {int x; int y;};] union {int mark; int priority;}; }:
// with `inserted`, a new unnamed union before the one that holds mark.
std::string skb(const TempDir& dir, const std::string& name, bool inserted) {
  return write_btf(dir, name, [&](struct btf* b) {
    const int i = added(btf__add_int(b, "int", 4, BTF_INT_SIGNED));
    auto add_union = [&](const char* m1, const char* m2) {
      const int id = added(btf__add_union(b, "", 4));
      added(btf__add_field(b, m1, i, 0, 0));
      added(btf__add_field(b, m2, i, 0, 0));
      return id;
    };
    const int lens = add_union("len", "data_len");
    const int xy = inserted ? add_union("x", "y") : 0;
    const int marks = add_union("mark", "priority");
    added(btf__add_struct(b, "skb", inserted ? 12 : 8));
    added(btf__add_field(b, "", lens, 0, 0));
    if (inserted) added(btf__add_field(b, "", xy, 32, 0));
    added(btf__add_field(b, "", marks, inserted ? 64 : 32, 0));
  });
}

}  // namespace

TEST_CASE("diff pairs unnamed unions by their members, not by position", "[diff]") {
  TempDir dir;
  const std::string before = skb(dir, "before.btf", false), after = skb(dir, "after.btf", true);
  const RunResult r = btfslim({"diff", "-v", before, after});
  INFO(r.err);
  REQUIRE(r.status == 0);
  INFO(r.out);
  // The union of mark moved down; the new one is added. By position, the second union of each side
  // would be one type whose members all changed (mark and priority removed, x and y added).
  CHECK(r.out == "struct skb: size 8 -> 12; 1 member added, 1 moved\n"
                 "    + (anon union)#3: struct skb::(anon union)#3 at offset 4\n"
                 "    ~ (anon union)#2: offset 4 -> 8\n"
                 "struct skb::(anon union)#3: added\n"
                 "total: 1 changed, 1 added, 0 removed, of 4 types on both sides\n");
}

TEST_CASE("diff of real kernels: sk_buff's members moved, not removed and added", "[diff]") {
  std::string why;
  const auto other = other_kernel(why);
  if (!other) return skip(why);
  const std::string running = running_vmlinux();
  if (running.empty()) return skip("no /sys/kernel/btf/vmlinux on this machine");
  const RunResult r = btfslim({"diff", "--by", "member", "-f", "csv", other->vmlinux, running});
  INFO(r.err);
  REQUIRE(r.status == 0);
  // Every member of sk_buff's unnamed members that is removed from one is added to none of the others.
  const auto rows = parse_csv(r.out);
  REQUIRE(!rows.empty());
  const auto& header = rows[0];
  auto column = [&](const std::string& name) {
    const auto at = std::find(header.begin(), header.end(), name);
    REQUIRE(at != header.end());
    return static_cast<std::size_t>(at - header.begin());
  };
  const std::size_t type = column("type"), change = column("change"), member = column("member");
  std::set<std::string> removed, added;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    if (rows[i][type].rfind("struct sk_buff::(anon", 0) != 0) continue;
    if (rows[i][change] == "removed") removed.insert(rows[i][member]);
    if (rows[i][change] == "added") added.insert(rows[i][member]);
  }
  INFO("removed from one of sk_buff's unnamed members and added to another: the pairing is by position");
  for (const std::string& m : removed) CHECK(added.count(m) == 0);
  CHECK(removed.count("mark") == 0);
}

TEST_CASE("diff reads each side on its own base: --old-base and --new-base", "[diff]") {
  TempDir dir;
  // Two kernels whose bases differ (the second has one type more, so its split types have other ids),
  // and one module's split BTF on each.
  auto base = [&](bool more) {
    BtfPtr b(btf__new_empty());
    const int i = added(btf__add_int(b.get(), "int", 4, BTF_INT_SIGNED));
    if (more) added(btf__add_int(b.get(), "long", 8, BTF_INT_SIGNED));
    added(btf__add_struct(b.get(), "sk_buff", 4));
    added(btf__add_field(b.get(), "len", i, 0, 0));
    return raw_bytes(b.get());
  };
  auto module = [&](const std::string& on, bool grown) {
    BtfPtr b(btf__new(on.data(), static_cast<__u32>(on.size())));
    REQUIRE(b != nullptr);
    BtfPtr s(btf__new_empty_split(b.get()));
    const int i = added(btf__find_by_name(s.get(), "int"));
    added(btf__add_struct(s.get(), "nf_conn", grown ? 8 : 4));
    added(btf__add_field(s.get(), "mark", i, 0, 0));
    if (grown) added(btf__add_field(s.get(), "status", i, 32, 0));
    return raw_bytes(s.get());
  };
  const std::string old_base = dir.file("old-vmlinux"), new_base = dir.file("new-vmlinux");
  const std::string old_mod = dir.file("old-nf.btf"), new_mod = dir.file("new-nf.btf");
  write_file(old_base, base(false));
  write_file(new_base, base(true));
  write_file(old_mod, module(read_file(old_base), false));
  write_file(new_mod, module(read_file(new_base), true));

  const RunResult r = btfslim({"diff", "--old-base", old_base, "--new-base", new_base, old_mod, new_mod});
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(r.out == "struct nf_conn: size 4 -> 8; 1 member added\n"
                 "total: 1 changed, 0 added, 0 removed, of 1 types on both sides\n");
  // One base for both reads the new module on the old kernel: refused, or not the same answer.
  const RunResult one = btfslim({"diff", "--base", old_base, old_mod, new_mod});
  CHECK((one.status == 2 || one.out != r.out));
  // --base with a base for each side says nothing: refused in one line, before any work.
  const RunResult both = btfslim({"diff", "--base", old_base, "--old-base", old_base, "--new-base", new_base,
                                  old_mod, new_mod});
  CHECK(both.status == 2);
  CHECK(both.out.empty());
  CHECK(std::count(both.err.begin(), both.err.end(), '\n') == 1);
  // --base stands for the side not named: the old module on --base, the new one on --new-base.
  const RunResult mixed = btfslim({"diff", "--base", old_base, "--new-base", new_base, old_mod, new_mod});
  CHECK(mixed.out == r.out);
}

}  // namespace btfslim::test
