// Independent pieces of work on the CPUs this process may use: a thousand modules of a kernel tree,
// each read, rewritten and compressed on its own; or, for one input, a second piece of work beside the
// one this thread does (measure's string shares beside its reference graph).
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

namespace btfslim {

// The CPUs this process may run on (its affinity mask), at least 1.
inline unsigned available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return static_cast<unsigned>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// Calls fn(i) for every i in [0, n) on up to `jobs` threads (this one among them), each i once, in no
// set order. After the first exception no further i is started; once every thread is done, the
// exception of the lowest i that threw is rethrown, so that the error reported does not depend on the
// threads' timing.
template <typename Fn>
void parallel_for(std::size_t n, unsigned jobs, Fn&& fn) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::vector<std::exception_ptr> errors(n);
  auto work = [&] {
    for (std::size_t i; !stop.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
        stop.store(true, std::memory_order_relaxed);
      }
    }
  };
  std::vector<std::thread> threads;
  const std::size_t extra = std::min<std::size_t>(std::max(jobs, 1u), n) - (n > 0 ? 1 : 0);
  for (std::size_t t = 0; t < extra; ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

// Starts run(arg) on a detached thread on another CPU than this one. False where this process may run
// on one CPU only, or no thread could be made. Another CPU, because a new thread is otherwise put on its
// parent's CPU, where it waits until this thread blocks or is preempted (milliseconds), not on the idle
// one (50 us). Detached, so that whoever waits for it waits for a flag of its own rather than a join: a
// thread's exit takes 50 us after its last write, which a join would wait for.
bool start_beside(void* (*run)(void*), void* arg);

// One piece of work on another CPU (start_beside), begun when this is made, waited for by wait(), which
// rethrows what it threw. Where no thread can be had, or `worth_a_thread` is false (starting one costs
// some 100 us, more than a small input's work), it is done at wait(), on this thread. What `fn` refers
// to must live until wait() returns; the destructor waits too, and swallows an exception.
class Beside {
 public:
  explicit Beside(std::function<void()> fn, bool worth_a_thread = true);
  Beside(const Beside&) = delete;
  Beside& operator=(const Beside&) = delete;
  ~Beside();
  void wait();

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with the thread, which drops its share once done is set
  bool waited_ = false;
};

}  // namespace btfslim
