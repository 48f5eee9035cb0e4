// Running the real btfslim binary (and oracles such as bpftool) from tests.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace btfslim::test {

struct RunResult {
  int status = -1;  // exit status, or 128 + signal number
  std::string out;
  std::string err;
};

// Runs argv[0] (looked up in PATH) with the arguments, capturing stdout and stderr.
RunResult run(const std::vector<std::string>& argv);

// A run with what it cost: wall time, the peak resident memory of the program (measured by GNU time),
// and whether it was killed, with all it started, at the limit.
struct MeasuredRun : RunResult {
  double seconds = 0;
  long peak_rss_kib = 0;
  bool timed_out = false;
};
// As run(), killing the process (SIGKILL) once `wall_limit_seconds` have passed (0: no limit).
MeasuredRun run_measured(const std::vector<std::string>& argv, double wall_limit_seconds);
// Runs the btfslim binary under test with these arguments.
RunResult btfslim(const std::vector<std::string>& args);
// True when `program` is on PATH.
bool have(const std::string& program);

// Paths set by meson for the build under test.
std::string btfslim_path();
// True when the btfslim under test is built with AddressSanitizer (gcc's links libasan, clang's holds
// its runtime): valgrind cannot run it, and its RSS holds the sanitizer's quarantine.
bool sanitized_binary();
std::string build_data_dir();   // compiled test inputs (BPF objects, pahole ELF)
std::string source_data_dir();  // tests/ in the source tree
// A BPF object the build compiled from tests/bpf/NAME.bpf.c, and a CO-RE target BTF from
// tests/data/core_target_NAME.c.
std::string test_object(const std::string& name);
std::string core_target(const std::string& name);

// A fresh directory removed with everything in it when the object goes.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& bytes);

// Where the running kernel's BTF is, or "" when this machine has none (tests then skip visibly).
std::string running_vmlinux();
// Prints a visible skip line (counted by scripts/test.sh) and returns.
void skip(const std::string& why);

// Runs `fn` with this thread allowed on its current CPU only (where btfslim starts no second thread:
// Btf::parse's index pass, Beside), then as before, also when `fn` throws. Throws std::runtime_error
// when the affinity cannot be set.
void on_one_cpu(const std::function<void()>& fn);

// The shared corpus of real projects' objects (MANIFEST.tsv and the objects under it): $BTFSLIM_TEST_CORPUS,
// else ../shared/corpus beside the checkout, else /work/shared/corpus; "" where none is here (tests that
// use it then skip visibly: a clone elsewhere, without the team's directory beside it).
std::string corpus_dir();

// A row of the corpus's MANIFEST.tsv (file, repo, commit, path_in_repo, bytes, endianness, has_btf_ext,
// programs, core_relocations, bpftool_min_core_btf).
struct CorpusEntry {
  std::string file;  // as the manifest names it, below corpus_dir()
  std::string path;  // corpus_dir()/file
  bool little_endian = false;
  bool has_btf_ext = false;
  std::size_t programs = 0, relocations = 0;
  bool bpftool_ok = false;  // bpftool gen min_core_btf takes it
};
// Every row, in the manifest's order; none where there is no corpus.
std::vector<CorpusEntry> corpus_manifest();

// The running kernel's release (uname -r).
std::string running_release();

// A second, real kernel, which scripts/fetch-test-kernel.sh keeps outside the checkout (in
// $BTFSLIM_TEST_KERNEL_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/btfslim-test/kernel-6.1): its release,
// its vmlinux (an ELF with .BTF) and its modules' tree (lib/modules/RELEASE: .ko with split BTF).
struct OtherKernel {
  std::string release;
  std::string vmlinux;
  std::string modules;
  std::string module(const std::string& relative) const { return modules + "/kernel/" + relative; }
};
// The kernel, or "" in `why_not` (then the caller skips) when it was not fetched or is the running one.
std::optional<OtherKernel> other_kernel(std::string& why_not);
// The same for each kernel scripts/fetch-test-kernel.sh fetches: "6.1" (the one above) or "6.12" (whose
// modules are .ko.xz).
std::optional<OtherKernel> test_kernel(const std::string& series, std::string& why_not);
// That kernel's vmlinux with its symbol table (the -dbg package's, without debug info: what `minimize
// --kernel` rewrites and qemu boots), or "" with the reason in `why_not` when it was not fetched.
std::string other_kernel_with_symbols(std::string& why_not);
// The same for each kernel the script fetches: "6.1" (the one above) or "6.12" (Debian's 6.12 cloud
// kernel, in $BTFSLIM_TEST_KERNEL_6_12_DIR, else .../btfslim-test/kernel-6.12).
std::string kernel_with_symbols(const std::string& series, std::string& why_not);

}  // namespace btfslim::test
