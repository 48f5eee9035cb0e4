// Kernel modules as distributions ship them ([modules]): compressed (.ko.xz as Debian's 6.12, .ko.zst,
// .ko.gz) wherever a module or BTF is read; a kernel with its modules as one target for check; minimize
// --kernel --modules writing each module back as it came, copying the tree's modules.* files, finding the
// profile's module functions, and leaving nothing behind when it fails. The kernels are Debian's 6.1
// (modules .ko) and 6.12 (.ko.xz) from scripts/fetch-test-kernel.sh; the oracles are xz, zstd and gzip
// (their -t and -d), bpftool (module BTF dumped on its base) and the bytes of an uncompressed run.
#include "process.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

namespace btfslim::test {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

// `tool ARGS < in > out`, which must succeed.
void pipe_through(const std::string& command, const std::string& in, const std::string& out) {
  const RunResult r = run({"sh", "-c", command + " < \"$1\" > \"$2\"", "sh", in, out});
  INFO(command << ": " << r.err);
  REQUIRE(r.status == 0);
}

std::string format_of(const std::string& path) {
  const std::string head = read_file(path).substr(0, 6);
  if (head.starts_with("\xfd" "7zXZ")) return "xz";
  if (head.starts_with("\x28\xb5\x2f\xfd")) return "zstd";
  if (head.starts_with("\x1f\x8b")) return "gzip";
  if (head.starts_with("\x7f" "ELF")) return "elf";
  return "?";
}

bool have_tools() { return have("xz") && have("zstd") && have("gzip") && have("bpftool"); }

// Debian's 6.12 kernel, with a module tree of three formats in `dir`: nf_conntrack and nf_nat as shipped
// (.ko.xz), configfs again as .ko.zst and virtio_net as .ko.gz, a modules.order, and the same tree
// uncompressed beside it.
struct Trees {
  std::string vmlinux, compressed, plain;
};
std::optional<Trees> trees(const TempDir& dir, std::string& why) {
  const auto kernel = test_kernel("6.12", why);
  if (!kernel) return std::nullopt;
  const std::string vmlinux = kernel_with_symbols("6.12", why);
  if (vmlinux.empty()) return std::nullopt;
  if (!have_tools()) {
    why = "no xz, zstd, gzip or bpftool";
    return std::nullopt;
  }
  Trees t{vmlinux, dir.file("compressed"), dir.file("plain")};
  struct Module {
    std::string path, as;  // in the kernel's tree; written with this suffix
  };
  for (const Module& m : {Module{"net/netfilter/nf_conntrack.ko.xz", ".xz"}, Module{"net/netfilter/nf_nat.ko.xz", ".xz"},
                          Module{"net/ipv4/netfilter/nf_defrag_ipv4.ko.xz", ".xz"},
                          Module{"net/ipv6/netfilter/nf_defrag_ipv6.ko.xz", ".xz"},
                          Module{"fs/configfs/configfs.ko.xz", ".zst"}, Module{"drivers/net/virtio_net.ko.xz", ".gz"}}) {
    const std::string stem = m.path.substr(0, m.path.size() - 3);  // ".../x.ko"
    fs::create_directories(fs::path(t.plain + "/kernel/" + stem).parent_path());
    fs::create_directories(fs::path(t.compressed + "/kernel/" + stem).parent_path());
    pipe_through("xz -dc", kernel->module(m.path), t.plain + "/kernel/" + stem);
    const std::string to = t.compressed + "/kernel/" + stem + m.as;
    if (m.as == ".xz")
      fs::copy_file(kernel->module(m.path), to);
    else
      pipe_through(m.as == ".zst" ? "zstd -q -c" : "gzip -n -c", t.plain + "/kernel/" + stem, to);
  }
  for (const std::string& tree : {t.plain, t.compressed})
    write_file(tree + "/modules.order", "kernel/net/netfilter/nf_conntrack.ko\nkernel/net/netfilter/nf_nat.ko\n");
  return t;
}

// The files under a directory, relative, with hidden ones: what an output path holds.
std::set<std::string> listing(const std::string& dir) {
  std::set<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) out.insert(fs::relative(e.path(), dir).string());
  return out;
}

TEST_CASE("compressed modules and BTF are read as their contents, and a corrupt stream is one line", "[modules]") {
  TempDir dir;
  std::string why;
  const auto t = trees(dir, why);
  if (!t) return skip(why);
  // Each format dumps as the uncompressed module does, on the same base.
  const std::string base = test_kernel("6.12", why)->vmlinux;
  const RunResult plain = btfslim({"dump", t->plain + "/kernel/fs/configfs/configfs.ko", "--base", base});
  REQUIRE(plain.status == 0);
  for (const std::string f : {"fs/configfs/configfs.ko.zst"}) {
    const RunResult r = btfslim({"dump", t->compressed + "/kernel/" + f, "--base", base});
    INFO(f << ": " << r.err);
    CHECK(r.status == 0);
    CHECK(r.out == plain.out);
  }
  const RunResult gz = btfslim({"dump", t->compressed + "/kernel/drivers/net/virtio_net.ko.gz", "--base", base});
  const RunResult gz_plain = btfslim({"dump", t->plain + "/kernel/drivers/net/virtio_net.ko", "--base", base});
  CHECK(gz.status == 0);
  CHECK(gz.out == gz_plain.out);
  const RunResult xz = btfslim({"measure", t->compressed + "/kernel/net/netfilter/nf_nat.ko.xz", "--base", base});
  INFO(xz.err);
  CHECK(xz.status == 0);
  CHECK_THAT(xz.out, Contains("split BTF"));

  // Raw BTF compressed, and an archive of one kernel's BTF, read by dump and measure as by check.
  const std::string raw = dir.file("k.btf");
  REQUIRE(run({"objcopy", "-O", "binary", "--only-section=.BTF", base, raw}).status == 0);
  pipe_through("xz -c", raw, dir.file("k.btf.xz"));
  const RunResult raw_measure = btfslim({"measure", raw, "-n", "3"}), xz_measure = btfslim({"measure", dir.file("k.btf.xz"), "-n", "3"});
  CHECK(xz_measure.status == 0);
  CHECK(xz_measure.out.substr(xz_measure.out.find('\n')) == raw_measure.out.substr(raw_measure.out.find('\n')));
  REQUIRE(run({"tar", "-C", dir.path(), "-cJf", dir.file("k.btf.tar.xz"), "k.btf"}).status == 0);
  const RunResult archived = btfslim({"dump", dir.file("k.btf.tar.xz")});
  INFO(archived.err);
  CHECK(archived.status == 0);
  CHECK(archived.out == btfslim({"dump", raw}).out);

  // Cut short, and flipped: exit 2, one line naming the file and the stream.
  const std::string whole = read_file(t->compressed + "/kernel/net/netfilter/nf_nat.ko.xz");
  write_file(dir.file("cut.ko.xz"), whole.substr(0, whole.size() / 2));
  std::string flipped = whole;
  for (std::size_t i = whole.size() / 3; i < whole.size() / 3 + 8; ++i) flipped[i] = static_cast<char>(~flipped[i]);
  write_file(dir.file("flipped.ko.xz"), flipped);
  for (const std::string& bad : {dir.file("cut.ko.xz"), dir.file("flipped.ko.xz")})
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"dump", bad, "--base", base}, {"measure", bad, "--base", base},
          {"check", test_object("module_nat"), "--btf", base, "--modules", bad}}) {
      const RunResult r = btfslim(args);
      INFO(args[0] << " " << bad);
      CHECK(r.status == 2);
      CHECK_THAT(r.err, StartsWith("btfslim: " + bad + ": "));
      CHECK_THAT(r.err, Contains("xz stream"));
      CHECK(r.err.find('\n') == r.err.size() - 1);
    }
}

TEST_CASE("measure --modules reads a tree of compressed modules", "[modules]") {
  TempDir dir;
  std::string why;
  const auto t = trees(dir, why);
  if (!t) return skip(why);
  const RunResult compressed = btfslim({"measure", "--modules", t->compressed, "--base", t->vmlinux, "-f", "csv", "--all"});
  const RunResult plain = btfslim({"measure", "--modules", t->plain, "--base", t->vmlinux, "-f", "csv", "--all"});
  INFO(compressed.err);
  REQUIRE(compressed.status == 0);
  REQUIRE(plain.status == 0);
  for (const std::string name : {"nf_conntrack", "nf_nat", "configfs", "virtio_net"}) CHECK_THAT(compressed.out, Contains(name));
  CHECK(compressed.err.find("skipped") == std::string::npos);
}

TEST_CASE("check --btf VMLINUX --modules DIR looks up what the kernel lacks in its modules", "[modules]") {
  const std::string object = test_object("module_nat");
  for (const std::string series : {"6.1", "6.12"}) {
    INFO("Linux " << series);
    std::string why;
    const auto kernel = test_kernel(series, why);
    if (!kernel) {
      skip(why);
      continue;
    }
    const RunResult alone = btfslim({"check", object, "--btf", kernel->vmlinux});
    CHECK(alone.status == 1);
    CHECK_THAT(alone.out, Contains("MISSING"));
    const RunResult with = btfslim({"check", object, "--btf", kernel->vmlinux, "--modules", kernel->modules});
    INFO(with.out << with.err);
    CHECK(with.status == 0);
    CHECK_THAT(with.out, Contains("FUNC nf_nat_packet (nf_nat)"));
    // A modules tree is not a set of kernels.
    const RunResult tree = btfslim({"check", object, "--btf", kernel->modules});
    CHECK(tree.status == 2);
    CHECK_THAT(tree.err, Contains("--modules"));
    // The modules of another kernel do not fit this one.
    const auto other = test_kernel(series == "6.1" ? "6.12" : "6.1", why);
    if (other) {
      const RunResult wrong = btfslim({"check", object, "--btf", kernel->vmlinux, "--modules",
                                       other->module(series == "6.1" ? "net/netfilter/nf_nat.ko.xz" : "net/netfilter/nf_nat.ko")});
      CHECK(wrong.status == 2);
      CHECK(wrong.err.find('\n') == wrong.err.size() - 1);
    }
  }
}

TEST_CASE("minimize --kernel --modules writes each module back compressed as it came", "[modules]") {
  TempDir dir;
  std::string why;
  const auto t = trees(dir, why);
  if (!t) return skip(why);
  auto minimize = [&](const std::string& tree, const std::string& out) {
    const RunResult r = btfslim({"minimize", "--kernel", t->vmlinux, "--modules", tree, "-o", out, test_object("module_nat")});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    return r;
  };
  const RunResult r = minimize(t->compressed, dir.file("out"));
  CHECK_THAT(r.out, Contains("6 modules of"));
  CHECK_THAT(r.out, Contains("6 compressed as they came"));
  CHECK_THAT(r.out, Contains("attach 'nf_nat_packet' is module nf_nat's"));
  minimize(t->plain, dir.file("plain-out"));

  // The same paths, in the same formats; each tool accepts its file; the contents are those an
  // uncompressed tree gives, byte for byte.
  std::set<std::string> in = listing(t->compressed), out = listing(dir.file("out"));
  in.insert("vmlinux");
  CHECK(out == in);
  CHECK(read_file(dir.file("out/modules.order")) == read_file(t->compressed + "/modules.order"));
  for (const std::string& f : out) {
    if (!f.ends_with(".xz") && !f.ends_with(".zst") && !f.ends_with(".gz")) continue;
    INFO(f);
    const std::string path = dir.file("out/" + f);
    CHECK(format_of(path) == format_of(t->compressed + "/" + f));
    const std::string tool = f.ends_with(".xz") ? "xz" : f.ends_with(".zst") ? "zstd" : "gzip";
    CHECK(run({tool, "-t", path}).status == 0);
    pipe_through(tool + " -dc", path, dir.file("inflated"));
    CHECK(read_file(dir.file("inflated")) == read_file(dir.file("plain-out/" + f.substr(0, f.rfind('.')))));
  }
  // xz as the kernel's decompressor reads it: a CRC32 check.
  const RunResult list = run({"xz", "-lvv", dir.file("out/kernel/net/netfilter/nf_nat.ko.xz")});
  CHECK_THAT(list.out, Contains("CRC32"));
  // bpftool reads the rewritten module on the patched image.
  const RunResult dumped = run({"sh", "-c", "xz -dc \"$1\" > \"$2\" && bpftool btf dump -B \"$3\" file \"$2\"", "sh",
                                dir.file("out/kernel/net/netfilter/nf_nat.ko.xz"), dir.file("nf_nat.ko"),
                                dir.file("out/vmlinux")});
  INFO(dumped.err);
  CHECK(dumped.status == 0);
  CHECK_THAT(dumped.out, Contains("FUNC 'nf_nat_packet'"));

  // The same bytes on every run.
  minimize(t->compressed, dir.file("again"));
  for (const std::string& f : out) {
    if (fs::is_directory(dir.file("out/" + f))) continue;
    INFO(f);
    CHECK(read_file(dir.file("again/" + f)) == read_file(dir.file("out/" + f)));
  }
}

TEST_CASE("a minimize --kernel that fails leaves nothing at its output paths", "[modules]") {
  TempDir dir;
  std::string why;
  const auto t = trees(dir, why);
  if (!t) return skip(why);
  const auto old = test_kernel("6.1", why);
  const std::string object = test_object("module_nat");
  fs::create_directories(dir.file("outputs"));
  auto refused = [&](const std::vector<std::string>& args, const std::string& says) {
    const std::set<std::string> before = listing(dir.file("outputs"));
    const RunResult r = btfslim(args);
    INFO(r.out << r.err);
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains(says));
    CHECK(r.err.find('\n') == r.err.size() - 1);
    CHECK(listing(dir.file("outputs")) == before);
  };
  // A module of another release deep in the tree: found while writing, after the image.
  if (old) {
    fs::create_directories(t->compressed + "/kernel/zz");
    fs::copy_file(old->module("net/netfilter/nf_nat.ko"), t->compressed + "/kernel/zz/nf_nat.ko");
    refused({"minimize", "--kernel", t->vmlinux, "--modules", t->compressed, "-o", dir.file("outputs/out"), object},
            "a module of Linux 6.1");
    // An earlier run's output stays as it was.
    fs::remove(t->compressed + "/kernel/zz/nf_nat.ko");
    REQUIRE(btfslim({"minimize", "--kernel", t->vmlinux, "--modules", t->compressed, "-o", dir.file("outputs/out"), object})
                .status == 0);
    fs::copy_file(old->module("net/netfilter/nf_nat.ko"), t->compressed + "/kernel/zz/nf_nat.ko");
    const std::string image = read_file(dir.file("outputs/out/vmlinux"));
    refused({"minimize", "--kernel", t->vmlinux, "--modules", t->compressed, "-o", dir.file("outputs/out"), object},
            "a module of Linux 6.1");
    CHECK(read_file(dir.file("outputs/out/vmlinux")) == image);
    fs::remove(t->compressed + "/kernel/zz/nf_nat.ko");
  }
  // --btf-out into a directory that is not there: refused before the image is written.
  refused({"minimize", "--kernel", t->vmlinux, "-o", dir.file("outputs/vmlinux"), "--btf-out", dir.file("none/slim.btf"), object},
          "no directory");
  refused({"minimize", "--kernel", t->vmlinux, "--modules", t->compressed, "-o", dir.file("outputs/tree"), "--btf-out",
           dir.file("none/slim.btf"), object},
          "no directory");
  // A tree without modules, and -o as a file where a directory goes.
  fs::create_directories(dir.file("empty"));
  refused({"minimize", "--kernel", t->vmlinux, "--modules", dir.file("empty"), "-o", dir.file("outputs/tree"), object},
          "holds no kernel modules");
  // A directory of someone's files is not replaced by the output.
  fs::create_directories(dir.file("outputs/theirs"));
  write_file(dir.file("outputs/theirs/notes.txt"), "mine");
  refused({"minimize", "--kernel", t->vmlinux, "--modules", t->compressed, "-o", dir.file("outputs/theirs"), object},
          "holds other files");
  write_file(dir.file("outputs/file"), "x");
  refused({"minimize", "--kernel", t->vmlinux, "--modules", t->compressed, "-o", dir.file("outputs/file"), object},
          "is a file");

  // --btf-out alone: the slim BTF without an image.
  const RunResult alone = btfslim({"minimize", "--kernel", t->vmlinux, "--btf-out", dir.file("outputs/slim.btf"), object});
  INFO(alone.err);
  CHECK(alone.status == 0);
  CHECK(listing(dir.file("outputs")).count("slim.btf") == 1);
  CHECK(run({"bpftool", "btf", "dump", "file", dir.file("outputs/slim.btf")}).status == 0);
}

TEST_CASE("minimize --kernel --keep-for-modules keeps what the modules refer to, whole, and says what it costs",
          "[modules]") {
  TempDir dir;
  std::string why;
  const auto t = trees(dir, why);
  if (!t) return skip(why);
  const std::string object = test_object("module_nat");
  const RunResult plain = btfslim({"minimize", "--kernel", t->vmlinux, "--btf-out", dir.file("plain.btf"), object});
  const RunResult kept = btfslim({"minimize", "--kernel", t->vmlinux, "--btf-out", dir.file("kept.btf"), "--keep-for-modules",
                                  t->compressed, "--explain", "struct nf_conn", object});
  INFO(kept.out << kept.err);
  REQUIRE(plain.status == 0);
  REQUIRE(kept.status == 0);
  CHECK_THAT(kept.out, Contains("its 6 modules with BTF refer to, whole with all they reach"));
  CHECK(read_file(dir.file("kept.btf")).size() > read_file(dir.file("plain.btf")).size());
  // nf_conntrack's functions take struct nf_conn: all of its members are there, and --explain says why.
  CHECK_THAT(kept.out, Contains("--keep-for-modules: a module refers to it"));
  const RunResult dumped = run({"bpftool", "btf", "dump", "file", dir.file("kept.btf")});
  const RunResult source = run({"bpftool", "btf", "dump", "file", t->vmlinux});
  auto vlen_of = [](const std::string& dump, const std::string& name) {
    const auto at = dump.find("STRUCT '" + name + "' size=");
    REQUIRE(at != std::string::npos);
    return dump.substr(at, dump.find('\n', at) - at);
  };
  CHECK(vlen_of(dumped.out, "nf_conn") == vlen_of(source.out, "nf_conn"));
  CHECK(btfslim({"minimize", "--btf-out", dir.file("x.btf"), "--keep-for-modules", t->compressed, object}).status == 2);
}

TEST_CASE("measure --modules gives the kernel with its modules loaded; a resident base must be the kernel's", "[modules]") {
  std::string why;
  const auto old = test_kernel("6.1", why), current = test_kernel("6.12", why);
  if (!old || !current) return skip(why);
  const RunResult loaded = btfslim({"measure", "--modules", old->modules + "/kernel/net/netfilter", "--base", old->vmlinux});
  INFO(loaded.err);
  REQUIRE(loaded.status == 0);
  CHECK_THAT(loaded.out, Contains("the kernel with these modules loaded: "));
  const RunResult json = btfslim({"measure", "--modules", old->modules + "/kernel/net/netfilter", "--base", old->vmlinux,
                                  "--format", "json"});
  CHECK_THAT(json.out, Contains("\"loaded_with_modules_bytes\""));

  // A minimized BTF of each kernel: only 6.12's is a resident base of 6.12 (task_struct tells them apart).
  TempDir dir;
  const std::string object = test_object("trace_exec");
  if (!fs::exists(object)) return skip("no trace_exec.bpf.o (built where the running kernel has BTF)");
  for (const auto& [kernel, out] : {std::pair{old->vmlinux, dir.file("old.btf")}, std::pair{current->vmlinux, dir.file("new.btf")}})
    REQUIRE(btfslim({"minimize", "--btf", kernel, "-o", out, object}).status == 0);
  const RunResult right =
      btfslim({"measure", current->vmlinux, "--kernel-model", "module", "--resident-base", dir.file("new.btf"), "-n", "1"});
  CHECK(right.status == 0);
  const RunResult wrong =
      btfslim({"measure", current->vmlinux, "--kernel-model", "module", "--resident-base", dir.file("old.btf"), "-n", "1"});
  CHECK(wrong.status == 2);
  CHECK(wrong.out.empty());
  CHECK_THAT(wrong.err, StartsWith("btfslim: " + dir.file("old.btf") + ": is no resident base of " + current->vmlinux));
}

}  // namespace
}  // namespace btfslim::test
