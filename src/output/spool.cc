// A spool: output written before what must precede it is known (check's JSON puts counts of every
// object before the first object's record). Past 1 MiB the records go to disk as each object is done,
// so a run's memory does not grow with its objects; the file has no name (O_TMPFILE, else a mkstemp
// file unlinked at once), so nothing is left behind by a crash. Below that nothing touches the disk.
#include "btfslim/error.h"
#include "btfslim/output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace btfslim {
namespace {

std::string spool_directory() {
  const char* dir = std::getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

int open_spool(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  std::string name = dir + "/.btfslim-spool-XXXXXX";
  fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) fail(dir, "cannot create a temporary file: {}", std::strerror(errno));
  ::unlink(name.c_str());
  return fd;
}

}  // namespace

Spool::Spool() : dir_(spool_directory()), out_([this] { return open_spool(dir_); }, "a temporary file in " + dir_, kKeep) {}

Spool::~Spool() {
  if (out_.fd() >= 0) ::close(out_.fd());
}

void Spool::copy_to(OutputBuffer& to) {
  if (out_.fd() < 0) {  // all of it still in memory
    to.write(std::string_view(out_.buffer().data(), out_.buffer().size()));
    out_.buffer().clear();
    return;
  }
  out_.flush();
  char chunk[1 << 16];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(out_.fd(), chunk, sizeof chunk, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("a temporary file in " + dir_, "cannot read it back: {}", std::strerror(errno));
    if (n == 0) break;
    to.write(std::string_view(chunk, static_cast<std::size_t>(n)));
    at += n;
  }
}

}  // namespace btfslim
