// DeadlineRunner: runs NVML work on a worker thread so that one call that never returns
// (a wedged GPU, a stuck driver) cannot stall the caller. The worker publishes which call it
// is in and when that call started; the caller waits until the work is done or until the
// current call has run past the deadline. Work is handed over once per task (a whole sample),
// not once per call, so the cost stays a few atomic stores per call.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace gw::nvml {

// What the worker publishes about the call it is in. Written by the worker, read by the caller.
class CallTracker {
 public:
  void begin(const char* call) {
    call_.store(call, std::memory_order_relaxed);
    start_ns_.store(now_ns(), std::memory_order_release);
  }
  void end() { start_ns_.store(0, std::memory_order_release); }
  const char* call() const { return call_.load(std::memory_order_relaxed); }
  // 0 while the worker is between calls.
  int64_t start_ns() const { return start_ns_.load(std::memory_order_acquire); }

  static int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

 private:
  std::atomic<const char*> call_{""};
  std::atomic<int64_t> start_ns_{0};
};

class DeadlineRunner {
 public:
  using Task = std::function<void(CallTracker&)>;

  struct Outcome {
    bool finished = true;
    std::string hung_call;  // set when !finished: the call that overran
  };

  // A deadline under 1 ms is raised to 1 ms (0 would call every call hung).
  explicit DeadlineRunner(std::chrono::milliseconds deadline)
      : deadline_(std::max(deadline, std::chrono::milliseconds(1))) {}
  ~DeadlineRunner();
  DeadlineRunner(const DeadlineRunner&) = delete;
  DeadlineRunner& operator=(const DeadlineRunner&) = delete;

  // Runs `task` on the worker. When one tracked call overruns the deadline the worker is
  // abandoned (it exits on its own once the call returns) and the next run gets a fresh one.
  // The task must own what it touches (capture shared_ptrs): it may outlive this call.
  Outcome run(Task task) {
    submit(std::move(task));
    return await();
  }

  // run() in two halves, so that several runners (one per GPU) work at the same time and a
  // caller waiting on all of them pays one deadline, not one per wedged GPU. Every submit()
  // must be followed by one await().
  void submit(Task task);
  Outcome await();

  std::chrono::milliseconds deadline() const { return deadline_; }

 private:
  struct Worker;
  std::chrono::milliseconds deadline_;
  std::shared_ptr<Worker> worker_;
  std::thread thread_;
};

}  // namespace gw::nvml
