// The progress bar (see progress.h). Redraws are limited to ten a second, except the last one, so a
// batch of thousands of small kernels does not spend its time writing to the terminal.
#include "btfslim/escape.h"
#include "btfslim/progress.h"

#include "btfslim/terminal.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace btfslim {

namespace {
bool quiet = false;
}  // namespace

void set_progress_quiet(bool q) { quiet = q; }

ProgressBar::ProgressBar(std::size_t total, std::string unit) : total_(total), unit_(std::move(unit)) {
  const char* term = std::getenv("TERM");
  enabled_ = !quiet && ::isatty(STDERR_FILENO) == 1 && !(term && std::strcmp(term, "dumb") == 0) && total > 0;
}

ProgressBar::~ProgressBar() { clear(); }

void ProgressBar::update(std::size_t done, std::string_view current) {
  if (!enabled_) return;
  const std::scoped_lock lock(mutex_);
  show(done, current);
}

void ProgressBar::step(std::string_view current) {
  if (!enabled_) return;
  const std::scoped_lock lock(mutex_);
  show(done_ + 1, current);
}

void ProgressBar::show(std::size_t done, std::string_view current) {
  done_ = done;
  const auto now = std::chrono::steady_clock::now();
  if (visible_ && done_ < total_ && now - last_ < std::chrono::milliseconds(100)) return;
  current_.assign(current);
  last_ = now;
  draw();
}

void ProgressBar::clear() {
  if (!enabled_) return;
  const std::scoped_lock lock(mutex_);
  if (!visible_) return;
  std::fputs("\r\x1b[K", stderr);
  std::fflush(stderr);
  visible_ = false;
}

void ProgressBar::draw() {
  const std::size_t columns = terminal_columns(STDERR_FILENO);
  const std::size_t width = columns ? columns - 1 : 79;  // the last column would wrap on some terminals
  const std::string count = fmt::format(" {}/{} {}", done_, total_, unit_);
  std::string line;
  // The bar takes a third of the line, between 10 and 40 cells.
  const std::size_t cells = std::min<std::size_t>(40, std::max<std::size_t>(10, width / 3));
  if (width >= cells + 2 + count.size()) {
    const std::size_t filled = total_ ? cells * done_ / total_ : 0;
    line.push_back('[');
    line.append(filled, '=');
    if (filled < cells) line.push_back('>');
    line.append(cells - filled - (filled < cells ? 1 : 0), ' ');
    line.push_back(']');
  }
  line.append(count);
  if (line.size() + 2 < width && !current_.empty()) {
    const std::size_t room = width - line.size() - 2;
    const std::string current = escape(current_);
    line.append("  ");
    // Keep the end of a long name: the kernel version is there.
    if (current.size() <= room) {
      line.append(current);
    } else if (room > 3) {
      std::size_t from = current.size() - (room - 3);
      while (from < current.size() && (static_cast<unsigned char>(current[from]) & 0xc0) == 0x80) ++from;  // whole UTF-8 characters
      line.append("...");
      line.append(current, from);
    }
  }
  std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
  std::fflush(stderr);
  visible_ = true;
}

}  // namespace btfslim
