// Writing output files so that a reader never sees half of one.
#include "btfslim/error.h"
#include "btfslim/output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace btfslim {

namespace {

// Writes all of `bytes` to `fd`: "" or what went wrong.
std::string write_piece(int fd, std::string_view bytes) {
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fmt::format("write error: {}", std::strerror(errno));
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return "";
}

}  // namespace

// The bytes go to a file without a name (O_TMPFILE) in the target's directory, which gets a name only
// once complete, .NAME.btfslim, and is renamed over the target by the very next system call: a process
// killed while writing leaves nothing behind, and one killed between those two calls (microseconds) a
// complete .NAME.btfslim, which the next write of NAME removes. (A concurrent writer's file in that same
// window would be removed as well; that writer then fails to rename it and says so, and the target
// holds the other's whole output.) Where the file system has no O_TMPFILE, a named temporary file
// (mkstemp, .NAME.btfslim-XXXXXX) is written instead, and a kill while it is written leaves it.
// There is no fsync: the rename makes the new file visible whole to every other process, which is the
// promise; surviving a power cut is the file system's (ext4, xfs and btrfs flush a file renamed over
// another), and an fsync would cost more than all the rest of a minimize (8 ms, sometimes 90).
void write_file_atomically(const std::string& path, std::string_view bytes) {
  write_file_atomically(path, std::span<const std::string_view>(&bytes, 1));
}

void write_file_atomically(const std::string& path, std::span<const std::string_view> pieces) {
  if (path == "-") {
    OutputBuffer out;
    for (const std::string_view bytes : pieces) out.write(bytes);
    out.flush();
    return;
  }
  auto write_all = [&](int fd) {
    for (const std::string_view bytes : pieces)
      if (std::string problem = write_piece(fd, bytes); !problem.empty()) return problem;
    return std::string();
  };
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string tmp = dir + "/." + base + ".btfslim";
  int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);  // umask applies
  if (fd >= 0) {
    if (const std::string problem = write_all(fd); !problem.empty()) {
      ::close(fd);
      fail(path, "{}", problem);
    }
    const std::string self = fmt::format("/proc/self/fd/{}", fd);
    int linked = ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, tmp.c_str(), AT_SYMLINK_FOLLOW);
    if (linked != 0 && errno == EEXIST) {  // left by a process killed after naming its file
      ::unlink(tmp.c_str());
      linked = ::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, tmp.c_str(), AT_SYMLINK_FOLLOW);
    }
    if (linked != 0) {
      const int err = errno;
      ::close(fd);
      fail(path, "cannot give the written file a name in {}: {}", dir, std::strerror(err));
    }
    const int renamed = ::rename(tmp.c_str(), path.c_str());
    const int err = errno;
    ::close(fd);
    if (renamed != 0) {
      ::unlink(tmp.c_str());
      fail(path, "cannot replace the file: {}", std::strerror(err));
    }
    return;
  }
  const int no_tmpfile = errno;
  tmp += "-XXXXXX";
  if (no_tmpfile == EOPNOTSUPP || no_tmpfile == EISDIR || no_tmpfile == EINVAL) {
    fd = ::mkstemp(tmp.data());
    if (fd < 0) fail(path, "cannot create a temporary file in {}: {}", dir, std::strerror(errno));
    // mkstemp makes the file 0600; give it the mode a plain creat() would.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    std::string problem;
    if (::fchmod(fd, 0666 & ~mask) != 0) problem = fmt::format("cannot set permissions: {}", std::strerror(errno));
    if (problem.empty()) problem = write_all(fd);
    if (::close(fd) != 0 && problem.empty()) problem = fmt::format("write error: {}", std::strerror(errno));
    if (!problem.empty()) {
      ::unlink(tmp.c_str());
      fail(path, "{}", problem);
    }
  } else {
    fail(path, "cannot create a file in {}: {}", dir, std::strerror(no_tmpfile));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "cannot replace the file: {}", std::strerror(err));
  }
}

namespace {

// The directory a path is in ("." for a bare name).
std::string parent_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

void check_output_file(const std::string& path, std::string_view option) {
  if (path.empty() || path == "-") return;
  const std::string dir = parent_of(path);
  if (!is_directory(dir)) fail(path, "cannot be written ({}): no directory {}", option, dir);
  if (::access(dir.c_str(), W_OK) != 0) fail(path, "cannot be written ({}): {}: {}", option, dir, std::strerror(errno));
  if (is_directory(path)) fail(path, "is a directory ({} writes a file)", option);
}

StagedDirectory::StagedDirectory(const std::string& target) : target_(target) {
  while (target_.size() > 1 && target_.back() == '/') target_.pop_back();
  struct stat st {};
  if (::stat(target_.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    fail(target_, "is a file: a directory is written here");
  const std::string dir = parent_of(target_);
  if (!is_directory(dir)) fail(target_, "cannot be written: no directory {}", dir);
  const std::size_t slash = target_.rfind('/');
  staging_ = fmt::format("{}/.{}.btfslim-XXXXXX", dir, slash == std::string::npos ? target_ : target_.substr(slash + 1));
  if (!::mkdtemp(staging_.data())) fail(target_, "cannot create a directory in {}: {}", dir, std::strerror(errno));
  // mkdtemp makes it 0700: give it the mode mkdir() would.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(staging_.c_str(), 0777 & ~mask);
}

StagedDirectory::~StagedDirectory() {
  if (committed_) return;
  std::error_code ec;
  std::filesystem::remove_all(staging_, ec);
}

void StagedDirectory::commit() {
  // rename() replaces an empty directory only: move an existing one aside, and remove it once replaced.
  std::string aside;
  if (is_directory(target_)) {
    aside = staging_ + "-old";
    if (::rename(target_.c_str(), aside.c_str()) != 0) fail(target_, "cannot replace the directory: {}", std::strerror(errno));
  }
  if (::rename(staging_.c_str(), target_.c_str()) != 0) {
    const int err = errno;
    if (!aside.empty()) ::rename(aside.c_str(), target_.c_str());
    fail(target_, "cannot put the written directory in place: {}", std::strerror(err));
  }
  committed_ = true;
  std::error_code ec;
  if (!aside.empty()) std::filesystem::remove_all(aside, ec);
}

}  // namespace btfslim
