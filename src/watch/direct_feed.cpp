// GPUs read straight from a GpuSource (NVML, or the fake one for --demo/--scenario) when no
// daemon runs: the history is what this process has sampled (at most a day), the findings are
// the doctor rules over the last samples. No kernel log here: Xids need the daemon.
#include <chrono>
#include <deque>

#include "diagnose/diagnose.h"
#include "watch/feed.h"

namespace gw::watch {
namespace {

constexpr size_t kDiagnoseWindow = 10;      // samples the rules look at
constexpr int64_t kKeepMs = 24 * 3600'000;  // history kept in memory

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

template <class T>
void trim(std::vector<T>& v, int64_t oldest, int64_t T::*field) {
  size_t k = 0;
  while (k < v.size() && v[k].*field < oldest) ++k;
  v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k));
}

class DirectFeed final : public Feed {
 public:
  explicit DirectFeed(std::unique_ptr<GpuSource> s) : source_(std::move(s)) {}

  Result<Frame> poll(const Window& w) override {
    auto snap = source_->sample();
    if (!snap) return snap.error();
    Frame f;
    f.now_ms = wall_ms();
    f.source = source_->describe();
    f.snapshot = std::move(*snap);
    remember(f.snapshot, f.now_ms);
    f.findings = diagnose_recent(f.now_ms);
    f.history_to_ms = f.now_ms - w.back_ms;
    f.history_from_ms = f.history_to_ms - w.span_ms;
    f.history = history_;
    f.users = process_users(f.snapshot);
    return f;
  }

 private:
  void remember(const Snapshot& s, int64_t now) {
    window_.push_back(s);
    if (window_.size() > kDiagnoseWindow) window_.pop_front();
    for (size_t i = 0; i < s.gpus.size(); ++i) {
      const GpuState& g = s.gpus[i];
      GpuHistory& h = history_[static_cast<unsigned>(i)];
      if (g.access == GpuAccess::kLost && last_access_[i] != GpuAccess::kLost)
        h.xid_ms.push_back(now);
      last_access_[i] = g.access;
      if (g.sample.util_gpu_pct)
        h.util_pct.push_back({now, static_cast<double>(*g.sample.util_gpu_pct)});
      if (g.sample.temp_c) h.temp_c.push_back({now, static_cast<double>(*g.sample.temp_c)});
      if (g.sample.power_mw) h.power_w.push_back({now, *g.sample.power_mw / 1000.0});
      if ((g.sample.clock_reasons.value_or(0) & kMarkedClockReasons) != 0)
        h.throttle_ms.push_back(now);
      trim(h.util_pct, now - kKeepMs, &Point::t_ms);
      trim(h.temp_c, now - kKeepMs, &Point::t_ms);
      trim(h.power_w, now - kKeepMs, &Point::t_ms);
    }
  }

  std::vector<WatchFinding> diagnose_recent(int64_t now) {
    Observation obs;
    obs.samples.assign(window_.begin(), window_.end());
    std::vector<WatchFinding> out;
    std::map<std::string, int64_t> seen;
    for (Finding& f : diagnose(obs)) {
      const std::string key = f.code + "/" + (f.gpu ? std::to_string(*f.gpu) : "host");
      const auto [it, fresh] = raised_.emplace(key, now);
      seen[key] = it->second;
      out.push_back({std::move(f), true, it->second, std::nullopt});
    }
    std::erase_if(raised_, [&](const auto& kv) { return !seen.contains(kv.first); });
    return out;
  }

  std::unique_ptr<GpuSource> source_;
  std::deque<Snapshot> window_;
  std::map<unsigned, GpuHistory> history_;
  std::map<size_t, GpuAccess> last_access_;
  std::map<std::string, int64_t> raised_;  // when each finding was first seen
};

}  // namespace

std::unique_ptr<Feed> make_direct_feed(std::unique_ptr<GpuSource> source) {
  return std::make_unique<DirectFeed>(std::move(source));
}

}  // namespace gw::watch
