// The thread beside this one (parallel.h).
#include "btfslim/parallel.h"

#include <pthread.h>

namespace btfslim {

bool start_beside(void* (*run)(void*), void* arg) {
  cpu_set_t cpus;
  const int here = sched_getcpu();
  if (here < 0 || sched_getaffinity(0, sizeof cpus, &cpus) != 0 || !CPU_ISSET(here, &cpus)) return false;
  CPU_CLR(here, &cpus);
  if (CPU_COUNT(&cpus) == 0) return false;
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  pthread_attr_setaffinity_np(&attr, sizeof cpus, &cpus);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  const bool started = pthread_create(&thread, &attr, run, arg) == 0;
  pthread_attr_destroy(&attr);
  return started;
}

struct Beside::State {
  std::function<void()> fn;
  std::exception_ptr error;
  std::atomic<int> done{0};
  bool on_thread = false;

  void run() {
    try {
      fn();
    } catch (...) {
      error = std::current_exception();
    }
  }
  // The thread's: its share of the state comes in a heap-allocated shared_ptr, which it drops last.
  static void* thread(void* arg) {
    const std::unique_ptr<std::shared_ptr<State>> own(static_cast<std::shared_ptr<State>*>(arg));
    State& s = **own;
    s.run();
    s.done.store(1, std::memory_order_release);
    s.done.notify_one();
    return nullptr;
  }
};

Beside::Beside(std::function<void()> fn, bool worth_a_thread) : state_(std::make_shared<State>()) {
  state_->fn = std::move(fn);
  if (!worth_a_thread) return;
  auto* share = new std::shared_ptr<State>(state_);
  state_->on_thread = start_beside(&State::thread, share);
  if (!state_->on_thread) delete share;
}

void Beside::wait() {
  if (waited_) return;
  waited_ = true;
  State& s = *state_;
  if (s.on_thread) {
    while (s.done.load(std::memory_order_acquire) == 0) s.done.wait(0, std::memory_order_acquire);
  } else {
    s.run();
  }
  s.fn = nullptr;  // what it captured goes now, on this thread
  if (s.error) std::rethrow_exception(s.error);
}

Beside::~Beside() {
  try {
    wait();
  } catch (...) {  // NOLINT(bugprone-empty-catch): an exception already on its way out wins
  }
}

}  // namespace btfslim
