// Writing output files so that a reader never sees half of one.
#include "btfslim/error.h"
#include "btfslim/output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace btfslim {

void write_file_atomically(const std::string& path, std::string_view bytes) {
  if (path == "-") {
    OutputBuffer out;
    out.write(bytes);
    out.flush();
    return;
  }
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string tmp = dir + "/." + base + ".btfslim-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) fail(path, "cannot create a temporary file in {}: {}", dir, std::strerror(errno));
  auto give_up = [&](const char* what, int err) {
    ::close(fd);
    ::unlink(tmp.c_str());
    fail(path, "{}: {}", what, std::strerror(err));
  };
  // mkstemp makes the file 0600; give it the mode a plain creat() would.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) give_up("cannot set permissions", errno);
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      give_up("write error", errno);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) give_up("cannot flush to disk", errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "write error: {}", std::strerror(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    fail(path, "cannot replace the file: {}", std::strerror(err));
  }
}

}  // namespace btfslim
