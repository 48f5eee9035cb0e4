// Shortest unique path suffixes (btfslim/paths.h): how tables name files.
#include "btfslim/paths.h"

#include <catch2/catch.hpp>

#include <sys/utsname.h>

#include <string>
#include <vector>

namespace btfslim {
namespace {

std::vector<std::string> shown(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string_view s : shortest_unique_suffixes(paths)) out.emplace_back(s);
  return out;
}

}  // namespace

TEST_CASE("paths: a file is shown by its name when no other has that name", "[paths]") {
  CHECK(shown({"/work/corpus/bcc/biolatency.bpf.o", "/work/corpus/cilium/bpf_lxc.o"}) ==
        std::vector<std::string>{"biolatency.bpf.o", "bpf_lxc.o"});
  CHECK(shown({"prog.bpf.o"}) == std::vector<std::string>{"prog.bpf.o"});
  CHECK(shown({"/sys/kernel/btf/vmlinux"}) == std::vector<std::string>{"vmlinux"});
  CHECK(shown({}).empty());
}

TEST_CASE("paths: the same name in two directories takes as many directories as tell them apart", "[paths]") {
  CHECK(shown({"/a/libbpf-tools/runqlat.bpf.o", "/a/tools/runqlat.bpf.o", "/a/x.o"}) ==
        std::vector<std::string>{"libbpf-tools/runqlat.bpf.o", "tools/runqlat.bpf.o", "x.o"});
  // The running kernel beside another vmlinux.
  CHECK(shown({"/sys/kernel/btf/vmlinux", "/root/.cache/kernel-6.1/vmlinux"}) ==
        std::vector<std::string>{"btf/vmlinux", "kernel-6.1/vmlinux"});
  // Directories that differ only further up.
  CHECK(shown({"/x/one/src/p.o", "/x/two/src/p.o"}) == std::vector<std::string>{"one/src/p.o", "two/src/p.o"});
  // Each path takes its own length: a unique name stays short beside names that need more.
  CHECK(shown({"a/b/p.o", "c/b/p.o", "d/q.o"}) == std::vector<std::string>{"a/b/p.o", "c/b/p.o", "q.o"});
}

TEST_CASE("paths: a path that is a suffix of another is shown whole, and so is the other", "[paths]") {
  CHECK(shown({"a/b.o", "x/a/b.o"}) == std::vector<std::string>{"a/b.o", "x/a/b.o"});
  CHECK(shown({"b.o", "a/b.o"}) == std::vector<std::string>{"b.o", "a/b.o"});
  // A relative path and an absolute one to the same name.
  CHECK(shown({"vmlinux", "/sys/kernel/btf/vmlinux"}) == std::vector<std::string>{"vmlinux", "btf/vmlinux"});
}

TEST_CASE("paths: suffixes start after a '/', never inside a name", "[paths]") {
  // "b.o" ends both names, but is not a component of "ab.o".
  CHECK(shown({"x/ab.o", "y/b.o"}) == std::vector<std::string>{"ab.o", "b.o"});
  // Archive members: "ARCHIVE:MEMBER", the member's name inside the last component.
  CHECK(shown({"hub/ubuntu/5.4.btf.tar.xz:5.4.btf", "hub/debian/5.4.btf.tar.xz:5.4.btf"}) ==
        std::vector<std::string>{"ubuntu/5.4.btf.tar.xz:5.4.btf", "debian/5.4.btf.tar.xz:5.4.btf"});
  // Doubled and trailing slashes start nothing: no empty names.
  CHECK(shown({"a//p.o", "b//p.o"}) == std::vector<std::string>{"a//p.o", "b//p.o"});
  CHECK(shown({"dir/"}) == std::vector<std::string>{"dir/"});
}

TEST_CASE("paths: a path given twice is shown the same both times", "[paths]") {
  CHECK(shown({"/k/vmlinux", "/k/vmlinux"}) == std::vector<std::string>{"vmlinux", "vmlinux"});
  CHECK(shown({"/k/vmlinux", "/j/vmlinux", "/k/vmlinux"}) == std::vector<std::string>{"k/vmlinux", "j/vmlinux", "k/vmlinux"});
}

}  // namespace btfslim

namespace btfslim {

TEST_CASE("paths: kernels are named by their release where their file names hold one", "[paths]") {
  CHECK(kernel_release("hub/debian/12/x86_64/6.1.0-57-amd64.btf.tar.xz:6.1.0-57-amd64.btf") == "6.1.0-57-amd64");
  CHECK(kernel_release("/k/5.4.0-1009-aws.btf") == "5.4.0-1009-aws");
  CHECK(kernel_release("/k/6.12.118+deb12-cloud-amd64.btf.xz") == "6.12.118+deb12-cloud-amd64");
  CHECK(kernel_release("/usr/lib/debug/boot/vmlinux-6.1.0-57-cloud-amd64") == "6.1.0-57-cloud-amd64");
  // The running kernel's, by what it says it is.
  struct utsname u {};
  REQUIRE(::uname(&u) == 0);
  CHECK(kernel_release("/sys/kernel/btf/vmlinux") == u.release);
  for (const char* none : {"/k/vmlinux", "core_target_moved.o", "a.btf", "x/long-release-6.1.o", "/k/6",
                           "/k/6.1 0.btf", ""})
    CHECK(kernel_release(none).empty());

  using Names = std::vector<std::string>;
  // Unique releases: the release alone; a file without one, by its path suffix.
  CHECK(kernel_short_names(Names{"h/u/20.04/x86_64/5.4.0-1009-aws.btf.tar.xz:5.4.0-1009-aws.btf",
                                 "h/u/22.04/x86_64/5.15.0-1.btf.tar.xz:5.15.0-1.btf", "/k/vmlinux",
                                 "/sys/kernel/btf/vmlinux"}) ==
        Names{"5.4.0-1009-aws", "5.15.0-1", "vmlinux", u.release});
  // One release in two directories: as many directories as tell them apart, the release as file name.
  CHECK(kernel_short_names(Names{"h/u/20.04/x86_64/5.4.0-1009-aws.btf.tar.xz:5.4.0-1009-aws.btf",
                                 "h/u/18.04/x86_64/5.4.0-1009-aws.btf.tar.xz:5.4.0-1009-aws.btf"}) ==
        Names{"20.04/x86_64/5.4.0-1009-aws", "18.04/x86_64/5.4.0-1009-aws"});
  // Two files of one directory that hold one release: their own paths' suffixes.
  CHECK(kernel_short_names(Names{"k/6.1.0-57.btf", "k/6.1.0-57.btf.xz", "k/6.12.1.btf"}) ==
        Names{"6.1.0-57.btf", "6.1.0-57.btf.xz", "6.12.1"});
  // The same kernel given twice is named the same twice.
  CHECK(kernel_short_names(Names{"k/6.1.0-57.btf", "k/6.1.0-57.btf"}) == Names{"6.1.0-57", "6.1.0-57"});
}

}  // namespace btfslim
