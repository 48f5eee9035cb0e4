// A progress bar on stderr for long batches, drawn only where a person watches it.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace btfslim {

// "[=======>        ] 37/120 kernels  ubuntu/20.04/x86_64/5.4.0-1018-aws.btf" on one line of stderr,
// redrawn in place. Drawn only when stderr is a terminal and TERM is not "dumb"; otherwise every call
// does nothing, so that logs and pipes get no control characters. Lines printed while it is shown must
// go after clear(), which the next update() follows with a fresh bar.
class ProgressBar {
 public:
  ProgressBar(std::size_t total, std::string unit);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  bool shown() const { return enabled_; }
  // `done` of the total are finished; `current` names the last one (shortened to fit).
  void update(std::size_t done, std::string_view current);
  void clear();

 private:
  void draw();

  bool enabled_ = false;
  bool visible_ = false;
  std::size_t total_ = 0, done_ = 0;
  std::string unit_, current_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace btfslim
