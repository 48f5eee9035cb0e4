#include "process.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace btfslim::test {

namespace {

// Runs argv in its own process group (so that a timeout kills all of it); `rss_file` non-empty: under
// GNU time, which writes the program's peak RSS there.
MeasuredRun spawn(const std::vector<std::string>& argv, double wall_limit_seconds) {
  const auto start = std::chrono::steady_clock::now();
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  const int rc = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  close(err_pipe[1]);
  MeasuredRun r;
  if (rc != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    r.status = 127;
    r.err = std::string("cannot run ") + argv[0] + ": " + std::strerror(rc);
    return r;
  }
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    int wait_ms = -1;
    if (wall_limit_seconds > 0) {
      const double left = wall_limit_seconds - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (left <= 0) {
        // Over its time: killed, and its pipes drained to their end.
        if (!r.timed_out) kill(-pid, SIGKILL);
        r.timed_out = true;
      } else {
        wait_ms = static_cast<int>(left * 1000) + 1;
      }
    }
    const int ready = poll(fds, 2, r.timed_out ? -1 : wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (ready == 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  struct rusage usage {};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.peak_rss_kib = usage.ru_maxrss;
  return r;
}

}  // namespace

// The peak RSS comes from GNU time: the rusage of a process spawned from this one counts this
// (large) test process's memory, which its child shares until it execs; GNU time's child forks from
// a small process.
MeasuredRun run_measured(const std::vector<std::string>& argv, double wall_limit_seconds) {
  const char* time_path = "/usr/bin/time";
  if (access(time_path, X_OK) != 0) throw std::runtime_error("GNU time (/usr/bin/time, Debian package time) is missing");
  char rss_path[] = "/tmp/btfslim-test-rss-XXXXXX";
  const int fd = mkstemp(rss_path);
  if (fd < 0) throw std::runtime_error("mkstemp");
  close(fd);
  std::vector<std::string> timed{time_path, "-f", "%M", "-o", rss_path};
  timed.insert(timed.end(), argv.begin(), argv.end());
  MeasuredRun r = spawn(timed, wall_limit_seconds);
  if (FILE* f = std::fopen(rss_path, "r")) {
    long kib = 0;
    // GNU time writes "Command exited with non-zero status N" first when the program fails.
    char line[256];
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "%ld", &kib) == 1) r.peak_rss_kib = kib;
    std::fclose(f);
  }
  unlink(rss_path);
  return r;
}

RunResult run(const std::vector<std::string>& argv) { return spawn(argv, 0); }

std::string btfslim_path() {
  const char* p = std::getenv("BTFSLIM");
  return p ? p : "btfslim";
}
bool sanitized_binary() {
  static const bool sanitized = [] {
    if (run({"sh", "-c", "ldd \"$1\" | grep -q libasan", "sh", btfslim_path()}).status == 0) return true;
    std::string path = btfslim_path();
    if (path.find('/') == std::string::npos) {
      const RunResult which = run({"sh", "-c", "command -v \"$1\"", "sh", path});
      path = which.out.substr(0, which.out.find('\n'));
    }
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    return bytes.find("__asan_init") != std::string::npos;
  }();
  return sanitized;
}
std::string build_data_dir() {
  const char* p = std::getenv("BTFSLIM_TEST_BUILD_DIR");
  return p ? p : ".";
}
std::string source_data_dir() {
  const char* p = std::getenv("BTFSLIM_TEST_SOURCE_DIR");
  return p ? p : ".";
}
std::string test_object(const std::string& name) { return build_data_dir() + "/" + name + ".bpf.o"; }
std::string core_target(const std::string& name) { return build_data_dir() + "/core_target_" + name + ".o"; }

RunResult btfslim(const std::vector<std::string>& args) {
  std::vector<std::string> argv{btfslim_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

bool have(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::stringstream ss(path);
  std::string dir;
  while (std::getline(ss, dir, ':'))
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  return false;
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "btfslim-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}
TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  // A regular file in one read of its size (kernel images are 80 MB); anything else as a stream.
  std::error_code ec;
  if (const auto size = std::filesystem::file_size(path, ec); !ec && std::filesystem::is_regular_file(path, ec)) {
    std::string out(size, '\0');
    if (in.read(out.data(), static_cast<std::streamsize>(size)) && in.peek() == std::ifstream::traits_type::eof())
      return out;
    in.clear();
    in.seekg(0);
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string running_vmlinux() {
  struct stat st {};
  return stat("/sys/kernel/btf/vmlinux", &st) == 0 ? "/sys/kernel/btf/vmlinux" : "";
}

void skip(const std::string& why) { std::printf("btfslim-test: SKIP: %s\n", why.c_str()); }

void on_one_cpu(const std::function<void()>& fn) {
  cpu_set_t all, one;
  const int here = sched_getcpu();
  if (here < 0 || sched_getaffinity(0, sizeof all, &all) != 0) throw std::runtime_error("cannot read this thread's CPUs");
  CPU_ZERO(&one);
  CPU_SET(here, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) throw std::runtime_error("cannot keep this thread on one CPU");
  try {
    fn();
  } catch (...) {
    sched_setaffinity(0, sizeof all, &all);
    throw;
  }
  if (sched_setaffinity(0, sizeof all, &all) != 0) throw std::runtime_error("cannot give this thread its CPUs back");
}

std::string running_release() {
  struct utsname u {};
  return uname(&u) == 0 ? u.release : "";
}

namespace {
// Where scripts/fetch-test-kernel.sh keeps the kernel of a series ("6.1": the second kernel).
std::string kernel_dir(const std::string& series) {
  const char* variable = series == "6.1" ? "BTFSLIM_TEST_KERNEL_DIR" : "BTFSLIM_TEST_KERNEL_6_12_DIR";
  if (const char* d = std::getenv(variable); d && *d) return d;
  const char* cache = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  return (cache && *cache ? std::string(cache) : std::string(home ? home : "") + "/.cache") + "/btfslim-test/kernel-" + series;
}
}  // namespace

std::optional<OtherKernel> other_kernel(std::string& why_not) { return test_kernel("6.1", why_not); }

std::string corpus_dir() {
  std::vector<std::string> candidates;
  for (const char* variable : {"BTFSLIM_TEST_CORPUS", "CORPUS_DIR"})
    if (const char* d = std::getenv(variable); d && *d) candidates.push_back(d);
  candidates.push_back(source_data_dir() + "/../../shared/corpus");
  candidates.push_back("/work/shared/corpus");
  struct stat st {};
  for (const std::string& dir : candidates)
    if (stat((dir + "/MANIFEST.tsv").c_str(), &st) == 0) return dir;
  return "";
}

std::vector<CorpusEntry> corpus_manifest() {
  const std::string dir = corpus_dir();
  std::vector<CorpusEntry> out;
  if (dir.empty()) return out;
  std::istringstream manifest(read_file(dir + "/MANIFEST.tsv"));
  std::string line;
  std::getline(manifest, line);  // the header
  while (std::getline(manifest, line)) {
    std::vector<std::string> f;
    std::istringstream in(line);
    for (std::string field; std::getline(in, field, '\t');) f.push_back(field);
    if (f.size() < 10) continue;
    CorpusEntry e;
    e.file = f[0];
    e.path = dir + "/" + f[0];
    e.little_endian = f[5] == "little";
    e.has_btf_ext = f[6] == "yes";
    e.programs = std::stoul(f[7]);
    e.relocations = std::stoul(f[8]);
    e.bpftool_ok = f[9] == "ok";
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<OtherKernel> test_kernel(const std::string& series, std::string& why_not) {
  const std::string dir = kernel_dir(series);
  struct stat st {};
  if (stat((dir + "/.complete").c_str(), &st) != 0) {
    why_not = "no second kernel in " + dir + " (scripts/fetch-test-kernel.sh fetches it)";
    return std::nullopt;
  }
  OtherKernel k;
  std::ifstream(dir + "/release") >> k.release;
  k.vmlinux = dir + "/vmlinux";
  k.modules = dir + "/modules";
  if (k.release.empty() || k.release == running_release()) {
    why_not = "the kernel in " + dir + " is the running one (" + k.release + "): it is no other kernel";
    return std::nullopt;
  }
  return k;
}

std::string other_kernel_with_symbols(std::string& why_not) { return kernel_with_symbols("6.1", why_not); }

std::string kernel_with_symbols(const std::string& series, std::string& why_not) {
  const std::string dir = kernel_dir(series);
  struct stat st {};
  if (stat((dir + "/.complete-sym").c_str(), &st) != 0) {
    why_not = "no Linux " + series + " vmlinux with symbols in " + dir + " (scripts/fetch-test-kernel.sh fetches it)";
    return "";
  }
  return dir + "/vmlinux-sym";
}

}  // namespace btfslim::test
