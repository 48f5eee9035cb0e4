// A progress bar on stderr for long batches, drawn only where a person watches it.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>

namespace btfslim {

// --quiet: no progress bar is drawn, on a terminal or not.
void set_progress_quiet(bool quiet);

// "[=======>        ] 37/120 kernels  ubuntu/20.04/x86_64/5.4.0-1018-aws.btf" on one line of stderr,
// redrawn in place. Drawn only when stderr is a terminal, TERM is not "dumb" and --quiet is not given;
// otherwise every call does nothing, so that logs and pipes get no control characters. Lines printed
// while it is shown must go after clear(), which the next update() follows with a fresh bar. Every call
// may come from any thread (a parallel_for's workers step it).
class ProgressBar {
 public:
  ProgressBar(std::size_t total, std::string unit);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  bool shown() const { return enabled_; }
  // `done` of the total are finished; `current` names the last one (shortened to fit).
  void update(std::size_t done, std::string_view current);
  // One more is finished.
  void step(std::string_view current);
  void clear();

 private:
  void show(std::size_t done, std::string_view current);  // with mutex_ held
  void draw();

  bool enabled_ = false;
  bool visible_ = false;
  std::size_t total_ = 0, done_ = 0;
  std::string unit_, current_;
  std::chrono::steady_clock::time_point last_{};
  std::mutex mutex_;
};

}  // namespace btfslim
