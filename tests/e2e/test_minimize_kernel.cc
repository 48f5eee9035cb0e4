// `minimize --kernel` on a real kernel image, without booting it ([minimize-kernel]; the boot is
// [kernel-boot]): the patched image differs from the original only inside .BTF and .BTF_ids; its .BTF
// is the slim BTF padded with NULs; every .BTF_ids slot names, in the slim BTF, the type of the same
// kind and name it named in the original; every set is sorted; the result is small and the same on
// every run; bad inputs are one line and exit 2 with nothing written. The oracles are readelf (section
// offsets, the symbol table) and bpftool (both BTFs' types), not btfslim's own reading. The kernel is
// Debian's 6.1 cloud kernel with its symbols (scripts/fetch-test-kernel.sh); the profile is objects
// this build compiled for the running kernel, which CO-RE relocates onto 6.1.
#include "process.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

struct Section {
  std::uint64_t addr = 0, offset = 0, size = 0;
};

// readelf -SW's line for `name`: "[Nr] Name Type Address Off Size ...".
Section section(const std::string& elf, const std::string& name) {
  const RunResult r = run({"readelf", "-SW", elf});
  REQUIRE(r.status == 0);
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    const auto close = line.find(']');
    if (close == std::string::npos) continue;
    std::istringstream fields(line.substr(close + 1));
    std::string sname, type, addr, off, size;
    fields >> sname >> type >> addr >> off >> size;
    if (sname == name) return {std::stoull(addr, nullptr, 16), std::stoull(off, nullptr, 16), std::stoull(size, nullptr, 16)};
  }
  FAIL("no section " << name << " in " << elf);
  return {};
}

// bpftool's raw dump, "[id] KIND 'name' ...", as id -> "KIND name".
std::map<std::uint32_t, std::string> types_of(const std::string& file) {
  const RunResult r = run({"bpftool", "btf", "dump", "file", file});
  INFO("bpftool btf dump file " << file << ": " << r.err);
  REQUIRE(r.status == 0);
  std::map<std::uint32_t, std::string> out;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] != '[') continue;
    const auto close = line.find("] ");
    const auto q1 = line.find('\'', close), q2 = line.find('\'', q1 + 1);
    out[static_cast<std::uint32_t>(std::stoul(line.substr(1, close - 1)))] =
        line.substr(close + 2, line.find(' ', close + 2) - close - 2) + " " + line.substr(q1 + 1, q2 - q1 - 1);
  }
  return out;
}

struct Symbol {
  std::string name;
  std::uint64_t value = 0, size = 0;
};
std::vector<Symbol> btf_id_symbols(const std::string& elf) {
  const RunResult r = run({"readelf", "-sW", elf});
  REQUIRE(r.status == 0);
  std::vector<Symbol> out;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string num, value, size, type, bind, vis, ndx, name;
    if (!(fields >> num >> value >> size >> type >> bind >> vis >> ndx >> name)) continue;
    if (name.rfind("__BTF_ID__", 0) == 0) out.push_back({name, std::stoull(value, nullptr, 16), std::stoull(size)});
  }
  return out;
}

std::uint32_t u32_at(const std::string& bytes, std::uint64_t off) {
  std::uint32_t v;
  std::memcpy(&v, bytes.data() + off, 4);
  return v;
}

// The profile: objects of this build, relocated onto the other kernel.
std::vector<std::string> profile() {
  return {test_object("trace_exec"), test_object("trace_creds"), test_object("trace_tcp_connect"),
          test_object("trace_sched_switch"), test_object("loader_attach"), test_object("loader_struct_ops")};
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST_CASE("minimize --kernel patches only .BTF and .BTF_ids, and every slot names the same type", "[minimize-kernel]") {
  std::string why;
  const std::string kernel = other_kernel_with_symbols(why);
  if (kernel.empty()) return skip(why);
  if (!have("bpftool") || !have("readelf")) return skip("no bpftool or readelf");
  TempDir dir;
  const std::string out = dir.file("vmlinux.slim"), btf_out = dir.file("slim.btf");
  const RunResult r = btfslim(with({"minimize", "--kernel", kernel, "-o", out, "--btf-out", btf_out}, profile()));
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Contains("each resolving as on the source"));

  const std::string original = read_file(kernel), patched = read_file(out), slim = read_file(btf_out);
  REQUIRE(patched.size() == original.size());
  const Section btf = section(kernel, ".BTF"), ids = section(kernel, ".BTF_ids");
  // Every differing byte lies in one of the two sections.
  auto inside = [](std::uint64_t at, const Section& s) { return at >= s.offset && at < s.offset + s.size; };
  std::size_t outside = 0;
  for (std::size_t i = 0; i < original.size(); ++i)
    if (original[i] != patched[i] && !inside(i, btf) && !inside(i, ids)) ++outside;
  CHECK(outside == 0);

  // .BTF: the slim BTF, then NULs to the section's end; only the header's string length differs.
  const std::string section_bytes = patched.substr(btf.offset, btf.size);
  CHECK(section_bytes.substr(24, slim.size() - 24) == slim.substr(24));
  CHECK(section_bytes.substr(0, 20) == slim.substr(0, 20));
  CHECK(section_bytes.find_first_not_of('\0', slim.size()) == std::string::npos);
  CHECK(u32_at(section_bytes, 20) == u32_at(slim, 20) + (btf.size - slim.size()));

  // Small: at most 10% of the types and of the bytes.
  const auto before = types_of(kernel), after = types_of(btf_out);
  CHECK(types_of(out) == after);  // bpftool reads the patched image's padded .BTF the same
  INFO(after.size() << " of " << before.size() << " types, " << slim.size() << " of " << btf.size << " bytes");
  CHECK(after.size() * 10 <= before.size());
  CHECK(slim.size() * 10 <= btf.size);

  // Every slot: the same kind and name as before. Every set: sorted, the same kinds and names (a slot in
  // a set holds what the sort put there, not what its symbol names).
  const std::vector<Symbol> symbols = btf_id_symbols(kernel);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> set_ranges;
  for (const Symbol& s : symbols)
    if (s.name.rfind("__BTF_ID__set", 0) == 0) set_ranges.push_back({s.value, s.value + s.size});
  std::size_t slots = 0, sets = 0;
  for (const Symbol& s : symbols) {
    const std::uint64_t at = ids.offset + (s.value - ids.addr);
    const bool set8 = s.name.rfind("__BTF_ID__set8__", 0) == 0, set = s.name.rfind("__BTF_ID__set__", 0) == 0;
    if (set || set8) {
      ++sets;
      const std::uint32_t count = u32_at(patched, at);
      REQUIRE(count == u32_at(original, at));
      const std::uint64_t first = at + (set8 ? 8 : 4), stride = set8 ? 8 : 4;
      std::multiset<std::string> old_names, new_names;
      for (std::uint32_t i = 0; i < count; ++i) {
        const std::uint32_t old_id = u32_at(original, first + i * stride), new_id = u32_at(patched, first + i * stride);
        if (i > 0) CHECK(u32_at(patched, first + (i - 1) * stride) <= new_id);
        old_names.insert(old_id ? before.at(old_id) : "");
        new_names.insert(new_id ? after.at(new_id) : "");
      }
      INFO(s.name);
      CHECK(old_names == new_names);
      continue;
    }
    if (std::any_of(set_ranges.begin(), set_ranges.end(),
                    [&](const auto& r) { return s.value >= r.first && s.value < r.second; }))
      continue;
    ++slots;
    const std::uint32_t old_id = u32_at(original, at), new_id = u32_at(patched, at);
    INFO(s.name << ": " << old_id << " -> " << new_id);
    if (old_id == 0) {
      CHECK(new_id == 0);
    } else {
      REQUIRE(after.count(new_id) == 1);
      CHECK(after.at(new_id) == before.at(old_id));
    }
  }
  CHECK(slots > 50);
  CHECK(sets > 10);

  // The same inputs, the same bytes.
  const std::string again = dir.file("again");
  REQUIRE(btfslim(with({"minimize", "--kernel", kernel, "-o", again}, profile())).status == 0);
  CHECK(read_file(again) == patched);
}

// The boot test's programs that read through a BTF-typed pointer what no CO-RE relocation names (a struct
// sockaddr read as sockaddr_in; a struct declared without preserve_access_index), compiled for the other
// kernel on the vmlinux.h btfslim writes from it.
std::vector<std::string> cast_programs(const std::string& kernel, const TempDir& dir) {
  const RunResult header = btfslim({"dump", "--format", "c", kernel});
  REQUIRE(header.status == 0);
  write_file(dir.file("vmlinux.h"), header.out);
  const RunResult multiarch = run({"cc", "-print-multiarch"});
  REQUIRE(multiarch.status == 0);
  std::vector<std::string> out;
  for (const std::string name : {"cast_sockaddr", "cast_local"}) {
    out.push_back(dir.file(name + ".bpf.o"));
    const RunResult cc = run({"clang-19", "-target", "bpf", "-g", "-O2", "-D__TARGET_ARCH_x86", "-I" + dir.path(),
                              "-I/usr/include/" + multiarch.out.substr(0, multiarch.out.find('\n')), "-c",
                              source_data_dir() + "/boot/progs/" + name + ".bpf.c", "-o", out.back()});
    INFO(cc.err);
    REQUIRE(cc.status == 0);
  }
  return out;
}

// bpftool's members of the first struct of `name` in `file`: "name@bits_offset" each.
std::vector<std::string> members_of(const std::string& file, const std::string& name) {
  const RunResult r = run({"bpftool", "btf", "dump", "file", file});
  REQUIRE(r.status == 0);
  std::istringstream in(r.out);
  std::string line;
  std::vector<std::string> out;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] == '[') {
      if (inside) break;
      inside = line.find("] STRUCT '" + name + "' ") != std::string::npos;
      continue;
    }
    if (!inside) continue;
    const auto q1 = line.find('\''), q2 = line.find('\'', q1 + 1), bits = line.find("bits_offset=");
    if (q1 == std::string::npos || bits == std::string::npos) continue;
    out.push_back(line.substr(q1 + 1, q2 - q1 - 1) + "@" + line.substr(bits + 12, line.find(' ', bits) - bits - 12));
  }
  return out;
}

TEST_CASE("minimize --kernel keeps the members the verifier checks a program's loads through BTF pointers against",
          "[minimize-kernel]") {
  std::string why;
  const std::string kernel = other_kernel_with_symbols(why);
  if (kernel.empty()) return skip(why);
  if (!have("clang-19") || !have("bpftool")) return skip("no clang-19 or bpftool");
  TempDir dir;
  const std::vector<std::string> objects = cast_programs(kernel, dir);
  const std::string btf_out = dir.file("slim.btf");
  const RunResult r = btfslim(with({"minimize", "--kernel", kernel, "-o", dir.file("vmlinux.slim"), "--btf-out", btf_out,
                                    "--explain", "struct sockaddr", "--explain", "struct filename"},
                                   objects));
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Contains("loads through BTF-typed pointers), each resolving as on the source"));
  // sockaddr_in's sin_addr is 4 bytes at offset 4 of the struct sockaddr the LSM hook hands the program:
  // the member that covers them there (sa_data, or the union around it) is kept, and --explain says why.
  const std::vector<std::string> sockaddr = members_of(btf_out, "sockaddr");
  INFO("sockaddr: " << sockaddr.size() << " members");
  REQUIRE(sockaddr.size() == 2);
  CHECK(sockaddr[1].ends_with("@16"));
  CHECK_THAT(r.out, Contains("cast_sockaddr.bpf.o restrict_connect insn #"));
  CHECK_THAT(r.out, Contains(": a load of 4 bytes at offset 4 of ["));
  CHECK_THAT(r.out, Contains("STRUCT 'sockaddr', which the verifier checks against the kernel's layout: it reads "));
  // The program's own struct names nothing: filename's uptr (8 bytes at offset 8) is kept for the load.
  const std::vector<std::string> filename = members_of(btf_out, "filename");
  CHECK(std::find(filename.begin(), filename.end(), "uptr@64") != filename.end());
  CHECK_THAT(r.out, Contains("member uptr: " + dir.file("cast_local.bpf.o") + " on_unlinkat_local insn #"));
}

TEST_CASE("minimize --kernel explains what it keeps, and keeps families when asked", "[minimize-kernel]") {
  std::string why;
  const std::string kernel = other_kernel_with_symbols(why);
  if (kernel.empty()) return skip(why);
  TempDir dir;
  const RunResult r = btfslim({"minimize", "--kernel", kernel, "-o", dir.file("out"), test_object("trace_creds"),
                               "--explain", "struct bpf_ctx_convert", "--explain", "func vfs_fsync_range",
                               "--explain", "cred"});
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Contains("STRUCT 'bpf_ctx_convert': kept as ["));
  CHECK_THAT(r.out, Contains("named by the kernel's .BTF_ids slot __BTF_ID__struct__bpf_ctx_convert__"));
  CHECK_THAT(r.out, Contains("FUNC 'vfs_fsync_range': dropped"));
  CHECK_THAT(r.out, Contains("STRUCT 'cred': kept as ["));
  CHECK_THAT(r.out, Contains("trace_creds.bpf.o"));

  // No tracepoint typedef without the family; all of them with it.
  const RunResult plain = btfslim({"minimize", "--kernel", kernel, "-o", dir.file("plain"), "--btf-out", dir.file("plain.btf"),
                                   "--explain", "btf_trace_sched_switch"});
  REQUIRE(plain.status == 0);
  CHECK_THAT(plain.out, Contains("TYPEDEF 'btf_trace_sched_switch': dropped"));
  const RunResult family = btfslim({"minimize", "--kernel", kernel, "-o", dir.file("tp"), "--btf-out", dir.file("tp.btf"),
                                    "--family", "tracepoints", "--explain", "btf_trace_sched_switch"});
  INFO(family.out << family.err);
  REQUIRE(family.status == 0);
  CHECK_THAT(family.out, Contains("--family tracepoints"));
  CHECK(read_file(dir.file("tp.btf")).size() > read_file(dir.file("plain.btf")).size());
}

TEST_CASE("minimize --kernel refuses what it cannot patch, in one line, and writes nothing", "[minimize-kernel]") {
  std::string why;
  const std::string kernel = other_kernel_with_symbols(why);
  if (kernel.empty()) return skip(why);
  TempDir dir;
  const std::string out = dir.file("out");
  auto refused = [&](const std::vector<std::string>& args, const std::string& says) {
    const RunResult r = btfslim(args);
    INFO(r.out << r.err);
    CHECK(r.status == 2);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, Contains(says));
    CHECK(!fs::exists(out));
  };
  // A stripped image: the distribution's vmlinuz payload.
  if (const auto stripped = other_kernel(why))
    refused({"minimize", "--kernel", stripped->vmlinux, "-o", out}, "has no symbol table");
  refused({"minimize", "--kernel", test_object("minimal"), "-o", out}, "has no .BTF_ids");
  write_file(dir.file("text"), "not an image\n");
  refused({"minimize", "--kernel", dir.file("text"), "-o", out}, "not an ELF file");
  refused({"minimize", "--kernel", kernel, "-o", out, "--keep", "struct no_such_type"}, "--keep 'struct no_such_type': no type matches");
  refused({"minimize", "--kernel", kernel, "-o", out, "--btf", kernel}, "--btf: does not go with --kernel");
  refused({"minimize", "-o", out, "--btf-out", dir.file("x"), test_object("minimal")}, "--btf-out: goes with --kernel");
  refused({"minimize", "--kernel", kernel, "-o", out, "--family", "everything"}, "is not one of");
  refused({"minimize", "--kernel", kernel, "-o", kernel}, "refusing to overwrite it");

  // .BTF_ids that belong to another .BTF: a slot outside the sets moved to another type.
  const std::string original = read_file(kernel);
  const Section ids = section(kernel, ".BTF_ids");
  std::string bad = original;
  for (const Symbol& s : btf_id_symbols(kernel))
    if (s.name.rfind("__BTF_ID__struct__task_struct__", 0) == 0) {
      const std::uint64_t at = ids.offset + (s.value - ids.addr);
      const std::uint32_t other = u32_at(original, at) + 1;
      std::memcpy(bad.data() + at, &other, 4);
      break;
    }
  REQUIRE(bad != original);
  write_file(dir.file("bad-vmlinux"), bad);
  refused({"minimize", "--kernel", dir.file("bad-vmlinux"), "-o", out}, "do not belong to its .BTF");
}

// readelf -SW's sections of a file: "name type size" per line, .BTF's size left out.
std::vector<std::string> section_list(const std::string& elf) {
  const RunResult r = run({"readelf", "-SW", elf});
  REQUIRE(r.status == 0);
  std::vector<std::string> out;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    const auto close = line.find(']');
    if (close == std::string::npos || line.find('[') > close) continue;
    std::istringstream fields(line.substr(close + 1));
    std::string name, type, addr, off, size;
    if (!(fields >> name >> type >> addr >> off >> size) || name == "Name") continue;
    out.push_back(name + " " + type + " " + (name == ".BTF" ? "-" : size));
  }
  return out;
}

TEST_CASE("minimize --kernel --modules rewrites every module's BTF onto the slim base, and nothing else",
          "[minimize-kernel]") {
  std::string why;
  const std::string kernel = other_kernel_with_symbols(why);
  if (kernel.empty()) return skip(why);
  const auto other = other_kernel(why);
  if (!other) return skip(why);
  if (!have("bpftool") || !have("readelf")) return skip("no bpftool or readelf");
  TempDir dir;
  const std::string out = dir.file("out");
  const RunResult r = btfslim(with({"minimize", "--kernel", kernel, "--modules", other->modules, "-o", out}, profile()));
  INFO(r.out << r.err);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Contains("rewritten for the slim base"));
  CHECK_THAT(r.out, Contains("scripts/sign-file"));
  REQUIRE(fs::exists(out + "/vmlinux"));

  // The tree, mirrored: every .ko at its path.
  std::size_t in_tree = 0;
  for (const auto& e : fs::recursive_directory_iterator(other->modules))
    if (e.path().extension() == ".ko") {
      ++in_tree;
      CHECK(fs::exists(out + "/" + fs::relative(e.path(), other->modules).string()));
    }
  CHECK(in_tree > 1000);

  for (const std::string m : {"net/netfilter/nf_conntrack.ko", "fs/configfs/configfs.ko", "drivers/net/virtio_net.ko"}) {
    const std::string before = other->module(m), after = out + "/kernel/" + m;
    INFO(m);
    // bpftool reads it on the patched image's BTF; its own types come first, each as it was.
    const RunResult old_dump = run({"bpftool", "btf", "dump", "-B", kernel, "file", before});
    const RunResult new_dump = run({"bpftool", "btf", "dump", "-B", out + "/vmlinux", "file", after});
    INFO(new_dump.err);
    REQUIRE(old_dump.status == 0);
    REQUIRE(new_dump.status == 0);
    auto kinds_and_names = [](const std::string& dump) {
      std::vector<std::string> out;
      std::istringstream in(dump);
      std::string line;
      while (std::getline(in, line))
        if (!line.empty() && line[0] == '[') {
          const auto close = line.find("] ");
          const auto q2 = line.find('\'', line.find('\'', close) + 1);
          out.push_back(line.substr(close + 2, q2 - close - 1));
        }
      return out;
    };
    const auto old_types = kinds_and_names(old_dump.out), new_types = kinds_and_names(new_dump.out);
    REQUIRE(new_types.size() >= old_types.size());
    CHECK(std::vector<std::string>(new_types.begin(), new_types.begin() + static_cast<std::ptrdiff_t>(old_types.size())) ==
          old_types);
    // Every section as it was, .BTF aside (and the signature after the ELF file is gone).
    CHECK(section_list(after) == section_list(before));
    const std::string signature = "~Module signature appended~\n";
    CHECK(read_file(before).ends_with(signature));
    CHECK(!read_file(after).ends_with(signature));
  }
  // Nothing written among the sources.
  const RunResult inside = btfslim({"minimize", "--kernel", kernel, "--modules", other->modules, "-o", other->modules + "/x"});
  CHECK(inside.status == 2);
  CHECK_THAT(inside.err, Contains("inside, the --modules directory"));
}

}  // namespace
}  // namespace btfslim::test
