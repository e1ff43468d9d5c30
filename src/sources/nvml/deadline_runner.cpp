#include "sources/nvml/deadline_runner.h"

#include <utility>

namespace gw::nvml {

// Shared by the caller and the worker thread; the thread holds its own reference so that
// an abandoned worker never touches freed memory.
struct DeadlineRunner::Worker {
  std::mutex m;
  std::condition_variable cv;
  Task task;
  bool has_task = false;
  bool done = false;
  bool stop = false;
  bool abandoned = false;
  CallTracker tracker;

  static void loop(const std::shared_ptr<Worker>& w) {
    std::unique_lock lk(w->m);
    for (;;) {
      w->cv.wait(lk, [&] { return w->has_task || w->stop; });
      if (!w->has_task) return;
      Task t = std::move(w->task);
      w->task = nullptr;
      lk.unlock();
      t(w->tracker);
      t = nullptr;  // drop what the task owns before reporting back
      w->tracker.end();
      lk.lock();
      w->has_task = false;
      w->done = true;
      w->cv.notify_all();
      if (w->abandoned) return;
    }
  }
};

DeadlineRunner::~DeadlineRunner() {
  if (!worker_) return;
  {
    std::lock_guard lk(worker_->m);
    worker_->stop = true;
  }
  worker_->cv.notify_all();
  thread_.join();
}

void DeadlineRunner::submit(Task task) {
  if (!worker_) {
    worker_ = std::make_shared<Worker>();
    thread_ = std::thread([w = worker_] { Worker::loop(w); });
  }
  Worker& w = *worker_;
  std::lock_guard lk(w.m);
  w.task = std::move(task);
  w.has_task = true;
  w.done = false;
  w.cv.notify_all();
}

DeadlineRunner::Outcome DeadlineRunner::await() {
  if (!worker_) return Outcome{};
  Worker& w = *worker_;
  std::unique_lock lk(w.m);
  const int64_t deadline_ns = std::chrono::nanoseconds(deadline_).count();
  while (!w.done) {
    const int64_t start = w.tracker.start_ns();
    const int64_t now = CallTracker::now_ns();
    if (start != 0 && now - start >= deadline_ns) {
      Outcome out{false, w.tracker.call()};
      w.abandoned = true;
      lk.unlock();
      thread_.detach();
      worker_.reset();
      return out;
    }
    // Wake when the current call would overrun; a new call restarts the clock.
    const int64_t wake = (start != 0 ? start : now) + deadline_ns;
    w.cv.wait_for(lk, std::chrono::nanoseconds(wake - now));
  }
  return Outcome{};
}

}  // namespace gw::nvml
