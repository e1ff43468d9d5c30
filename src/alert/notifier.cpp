// Notifier: one worker thread and one bounded, ordered queue per sink. submit() copies and
// signals a condition variable (no I/O, no sleeping), so the sampler never waits on a receiver;
// a failing receiver holds back only its own queue, retried with exponential backoff.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <thread>

#include "alert/deliver.h"

namespace gw::alert {
namespace {

using SteadyClock = std::chrono::steady_clock;

int64_t wall_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string describe(const AlertTransition& t) {
  std::string s = t.rule + (t.kind == AlertTransition::Kind::kFiring ? " firing" : " resolved");
  if (t.target.gpu) {
    s += " on GPU " + std::to_string(*t.target.gpu);
  } else if (t.target.pci_bus_id) {
    s += " on " + *t.target.pci_bus_id;
  }
  return s;
}

struct Msg {
  AlertTransition t;
  unsigned attempts = 0;
  SteadyClock::time_point next_at{};
};

class Worker {
 public:
  Worker(SinkConfig cfg, const NotifierOptions& opts) : cfg_(std::move(cfg)), opts_(opts) {
    // Configs built in code skip the parser's checks: a zero timeout would mean "wait forever"
    // to libcurl and a zero backoff a busy retry loop.
    cfg_.timeout = std::max(cfg_.timeout, std::chrono::milliseconds(1));
    cfg_.backoff = std::max(cfg_.backoff, std::chrono::milliseconds(10));
    cfg_.max_backoff = std::max(cfg_.max_backoff, cfg_.backoff);
    cfg_.resend_interval = std::max(cfg_.resend_interval, std::chrono::milliseconds(100));
    cfg_.queue_capacity = std::max<size_t>(cfg_.queue_capacity, 1);
    stats_.name = cfg_.name;
    stats_.type = cfg_.type;
    if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
    thread_ = std::thread([this] { run(); });
  }
  ~Worker() {
    stop(SteadyClock::now());
    join();
    for (int fd : wake_) {
      if (fd >= 0) close(fd);
    }
  }

  const SinkConfig& config() const { return cfg_; }

  void submit(const AlertTransition& t) {
    std::string dropped;
    {
      std::lock_guard lk(mu_);
      if (stopping_) {
        ++stats_.dropped;
        dropped = describe(t) + ": the notifier is shutting down";
      } else {
        if (queue_.size() >= cfg_.queue_capacity) {
          // Never the one in flight: it may be half-delivered already.
          auto victim = queue_.begin() + (in_flight_ ? 1 : 0);
          if (victim != queue_.end()) {
            dropped = describe(victim->t) + ": queue full (" + std::to_string(cfg_.queue_capacity) +
                      " waiting), oldest dropped";
            queue_.erase(victim);
            ++stats_.dropped;
          }
        }
        queue_.push_back({t, 0, SteadyClock::now()});
      }
    }
    cv_.notify_one();
    if (!dropped.empty()) log("sink \"" + cfg_.name + "\": dropped " + dropped);
  }

  void resume(const std::vector<AlertTransition>& firing) {
    if (cfg_.type != SinkType::kAlertmanager) return;
    {
      std::lock_guard lk(mu_);
      for (const AlertTransition& t : firing) {
        if (t.kind == AlertTransition::Kind::kFiring && t.severity >= cfg_.min_severity) {
          firing_[t.fingerprint] = t;
        }
      }
      next_resend_ = SteadyClock::now();  // post them now, then every resend_interval
    }
    cv_.notify_one();
  }

  bool wait_empty(SteadyClock::time_point deadline) {
    std::unique_lock lk(mu_);
    return done_cv_.wait_until(lk, deadline, [&] { return queue_.empty() && !in_flight_; });
  }

  void stop(SteadyClock::time_point deadline) {
    {
      std::lock_guard lk(mu_);
      if (!stopping_ || deadline < deadline_) deadline_ = deadline;
      stopping_ = true;
    }
    cv_.notify_all();
  }

  // Abandons what is in flight now (shutdown deadline passed).
  void abort_now() {
    abort_.store(true);
    if (wake_[1] >= 0) {
      const char c = 1;
      [[maybe_unused]] const ssize_t w = write(wake_[1], &c, 1);
    }
    cv_.notify_all();
  }

  void join() {
    if (thread_.joinable()) thread_.join();
  }

  SinkStats stats() const {
    std::lock_guard lk(mu_);
    SinkStats s = stats_;
    s.queued = queue_.size();
    return s;
  }

 private:
  void log(const std::string& line) const { opts_.log(line); }

  std::chrono::milliseconds backoff_for(unsigned attempts) const {
    auto d = cfg_.backoff;
    for (unsigned i = 1; i < attempts && d < cfg_.max_backoff; ++i) d *= 2;
    return std::min(d, cfg_.max_backoff);
  }

  Attempt deliver(const std::vector<AlertTransition>& ts, HttpPoster* http) {
    const AlertTransition& t = ts.front();
    switch (cfg_.type) {
      case SinkType::kLog:
        log(log_line(t, cfg_.json, cfg_.journal));
        return {true, false, {}};
      case SinkType::kWebhook:
        return http->post_json(cfg_.url, webhook_payload_json(t, cfg_.name, opts_.external_url),
                               cfg_.headers, cfg_.timeout, abort_);
      case SinkType::kAlertmanager:
        return http->post_json(cfg_.url + "/api/v2/alerts",
                               alertmanager_payload_json(ts, opts_.external_url, wall_now_ms(),
                                                         4 * cfg_.resend_interval),
                               cfg_.headers, cfg_.timeout, abort_);
      case SinkType::kExec:
        return run_command(cfg_.command, alert_env(t),
                           webhook_payload_json(t, cfg_.name, opts_.external_url), cfg_.timeout,
                           wake_[0], abort_);
    }
    return {false, false, "unknown sink type"};
  }

  void run() {
    // Writes to a closed pipe or socket must fail with EPIPE here, not kill the daemon.
    sigset_t pipe_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, nullptr);
    std::unique_ptr<HttpPoster> http;
    if (cfg_.type == SinkType::kWebhook || cfg_.type == SinkType::kAlertmanager) {
      http = std::make_unique<HttpPoster>(wake_[0]);
    }
    const bool am = cfg_.type == SinkType::kAlertmanager;
    std::unique_lock lk(mu_);
    while (true) {
      const auto now = SteadyClock::now();
      if (stopping_ && (queue_.empty() || now >= deadline_ || abort_.load())) break;
      const bool ready = !queue_.empty() && queue_.front().next_at <= now;
      const bool resend = am && !stopping_ && !firing_.empty() && now >= next_resend_;
      if (!ready && !resend) {
        auto wake = SteadyClock::time_point::max();
        if (!queue_.empty()) wake = queue_.front().next_at;
        if (am && !stopping_ && !firing_.empty()) wake = std::min(wake, next_resend_);
        if (stopping_) wake = std::min(wake, deadline_);
        if (wake == SteadyClock::time_point::max()) {
          cv_.wait(lk);
        } else {
          cv_.wait_until(lk, wake);
        }
        continue;
      }
      std::vector<AlertTransition> batch;
      if (ready) {
        batch.push_back(queue_.front().t);
        in_flight_ = true;
      } else {
        for (const auto& [fp, t] : firing_) batch.push_back(t);
      }
      lk.unlock();
      const Attempt a = deliver(batch, http.get());
      std::string note;
      lk.lock();
      if (am) next_resend_ = SteadyClock::now() + cfg_.resend_interval;
      if (!ready) {
        // A failed re-send is not retried on its own: the next interval sends it again.
        if (!a.ok)
          note = "re-sending " + std::to_string(batch.size()) + " firing alerts: " + a.error;
      } else if (a.ok) {
        const AlertTransition& t = queue_.front().t;
        if (t.kind == AlertTransition::Kind::kFiring) {
          firing_[t.fingerprint] = t;
        } else {
          firing_.erase(t.fingerprint);
        }
        if (queue_.front().attempts > 0) {
          note = "delivered " + describe(t) + " after " +
                 std::to_string(queue_.front().attempts + 1) + " attempts";
        }
        queue_.pop_front();
        ++stats_.delivered;
      } else {
        Msg& m = queue_.front();
        ++m.attempts;
        ++stats_.failed_attempts;
        stats_.last_error = a.error;
        note = "delivering " + describe(m.t) + " failed (attempt " + std::to_string(m.attempts) +
               "): " + a.error;
        if (!a.retry || (cfg_.max_attempts && m.attempts >= cfg_.max_attempts)) {
          note += "; giving up on this message";
          queue_.pop_front();
          ++stats_.given_up;
        } else {
          const auto wait = backoff_for(m.attempts);
          m.next_at = SteadyClock::now() + wait;
          note += "; retrying in " + format_duration(wait);
        }
      }
      // Logged before the message counts as done, so whoever flushed sees the line too.
      lk.unlock();
      if (!note.empty()) log("sink \"" + cfg_.name + "\": " + note);
      lk.lock();
      in_flight_ = false;
      lk.unlock();
      done_cv_.notify_all();
      lk.lock();
    }
    const size_t left = queue_.size();
    in_flight_ = false;
    lk.unlock();
    done_cv_.notify_all();
    if (left) {
      log("sink \"" + cfg_.name + "\": shutting down with " + std::to_string(left) +
          " undelivered message(s)");
    }
  }

  SinkConfig cfg_;
  const NotifierOptions& opts_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable done_cv_;
  std::deque<Msg> queue_;
  bool in_flight_ = false;
  bool stopping_ = false;
  SteadyClock::time_point deadline_ = SteadyClock::time_point::max();
  std::atomic<bool> abort_{false};
  int wake_[2] = {-1, -1};
  SinkStats stats_;
  // Alertmanager: what is firing now, re-posted every resend_interval so Alertmanager keeps
  // it (and forgets it by itself if this daemon dies).
  std::map<std::string, AlertTransition> firing_;
  SteadyClock::time_point next_resend_{};
  std::thread thread_;  // last: starts after every other member exists
};

}  // namespace

struct Notifier::Impl {
  NotifierOptions opts;
  std::vector<std::unique_ptr<Worker>> workers;
  bool shut = false;
  bool clean = true;
};

Notifier::Notifier(std::vector<SinkConfig> sinks, NotifierOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->opts = std::move(options);
  if (!impl_->opts.log) {
    impl_->opts.log = [](std::string_view line) {
      std::string l(line);
      l += '\n';
      std::fwrite(l.data(), 1, l.size(), stderr);  // one write: lines from threads stay whole
    };
  }
  for (SinkConfig& s : sinks) {
    impl_->workers.push_back(std::make_unique<Worker>(std::move(s), impl_->opts));
  }
}

Notifier::~Notifier() {
  if (!impl_->shut) shutdown(std::chrono::seconds(5));
}

void Notifier::submit(const std::vector<AlertTransition>& transitions) {
  for (const auto& w : impl_->workers) {
    const SinkConfig& c = w->config();
    for (const AlertTransition& t : transitions) {
      if (t.severity < c.min_severity) continue;
      if (t.kind == AlertTransition::Kind::kResolved && !c.send_resolved) continue;
      w->submit(t);
    }
  }
}

void Notifier::resume_firing(const std::vector<AlertTransition>& firing) {
  for (const auto& w : impl_->workers) w->resume(firing);
}

bool Notifier::flush(std::chrono::milliseconds deadline) {
  const auto until = SteadyClock::now() + deadline;
  bool all = true;
  for (const auto& w : impl_->workers) all = w->wait_empty(until) && all;
  return all;
}

bool Notifier::shutdown(std::chrono::milliseconds deadline) {
  if (impl_->shut) return impl_->clean;
  impl_->shut = true;
  const auto until = SteadyClock::now() + deadline;
  for (const auto& w : impl_->workers) w->stop(until);
  bool all = true;
  for (const auto& w : impl_->workers) all = w->wait_empty(until) && all;
  if (!all) {
    for (const auto& w : impl_->workers) w->abort_now();
  }
  for (const auto& w : impl_->workers) w->join();
  impl_->clean = all;
  return all;
}

std::vector<SinkStats> Notifier::stats() const {
  std::vector<SinkStats> out;
  for (const auto& w : impl_->workers) out.push_back(w->stats());
  return out;
}

}  // namespace gw::alert
