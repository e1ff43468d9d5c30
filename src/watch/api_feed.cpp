// The daemon's JSON API as a feed: /api/gpus, /api/findings, /api/events and /api/history
// over loopback HTTP. The history is fetched again when the window moves or every few polls;
// between fetches the live samples are appended.
#include <httplib.h>

#include <chrono>

#include "core/snapshot_json.h"
#include "watch/feed.h"

namespace gw::watch {
namespace {

using nlohmann::json;

constexpr int kHistoryEvery = 5;      // polls between two history fetches
constexpr int kMaxHistoryPages = 64;  // 8 GPUs x a few pages each; never unbounded
const char* const kSeries[] = {"util_gpu_pct", "temp_c", "power_w", "clock_reasons"};

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class ApiFeed final : public Feed {
 public:
  ApiFeed(const std::string& base_url, int timeout_ms) : url_(base_url), client_(base_url) {
    const auto t = std::chrono::milliseconds(timeout_ms);
    client_.set_connection_timeout(t);
    client_.set_read_timeout(t);
    client_.set_keep_alive(true);
  }

  Result<Frame> poll(const Window& w) override {
    auto gpus = get("/api/gpus");
    if (!gpus) return gpus.error();
    auto snap = snapshot_from_json(*gpus);
    if (!snap) return make_error("watch.bad_api", "daemon /api/gpus: " + snap.error().to_string());
    Frame f;
    f.snapshot = std::move(*snap);
    f.jobs = jobs_from_api(*gpus);
    f.source = "daemon " + url_;
    f.now_ms = wall_ms();
    f.history_to_ms = f.now_ms - w.back_ms;
    f.history_from_ms = f.history_to_ms - w.span_ms;
    if (auto fj = get("/api/findings")) f.findings = findings_from_api(*fj);
    refresh_history(w, f);
    f.history = history_;
    f.users = process_users(f.snapshot);
    return f;
  }

 private:
  Result<json> get(const std::string& path) {
    auto res = client_.Get(path);
    if (!res)
      return make_error("watch.daemon_unreachable",
                        url_ + path + ": " + httplib::to_string(res.error()));
    if (res->status != 200 && res->status != 503)
      return make_error("watch.daemon_error",
                        url_ + path + ": HTTP " + std::to_string(res->status));
    json j = json::parse(res->body, nullptr, false);
    if (j.is_discarded()) return make_error("watch.bad_api", url_ + path + ": not JSON");
    return j;
  }

  void refresh_history(const Window& w, const Frame& f) {
    const bool moved = w.span_ms != last_.span_ms || w.back_ms != last_.back_ms;
    if (moved || polls_++ % kHistoryEvery == 0) {
      fetch_history(w, f.history_from_ms, f.history_to_ms);
      last_ = w;
      return;
    }
    if (w.back_ms == 0) append_live(f);
  }

  void fetch_history(const Window& w, int64_t from, int64_t to) {
    std::map<unsigned, GpuHistory> h;
    const std::string range = "&from=" + std::to_string(from) + "&to=" + std::to_string(to) +
                              "&points=" + std::to_string(std::max(w.columns, 16));
    for (const char* m : kSeries)
      fetch_series(std::string("/api/history?metric=") + m + range, m, h);
    if (auto j = get("/api/events?since=" + std::to_string(from))) events_from_api(*j, h);
    history_ = std::move(h);
  }

  // The API pages GPU by GPU (at most `points` per response): follow the cursor, bounded.
  void fetch_series(const std::string& base, const char* metric,
                    std::map<unsigned, GpuHistory>& h) {
    std::string cursor;
    for (int page = 0; page < kMaxHistoryPages; ++page) {
      const auto j = get(cursor.empty() ? base : base + "&cursor=" + cursor);
      if (!j) return;
      history_from_api(*j, metric, h);
      const auto next = j->find("next");
      if (next == j->end() || !next->is_string()) return;
      cursor = next->get<std::string>();
    }
  }

  void append_live(const Frame& f) {
    for (size_t i = 0; i < f.snapshot.gpus.size(); ++i) {
      const GpuSample& s = f.snapshot.gpus[i].sample;
      GpuHistory& h = history_[static_cast<unsigned>(i)];
      if (s.util_gpu_pct) h.util_pct.push_back({f.now_ms, static_cast<double>(*s.util_gpu_pct)});
      if (s.temp_c) h.temp_c.push_back({f.now_ms, static_cast<double>(*s.temp_c)});
      if (s.power_mw) h.power_w.push_back({f.now_ms, *s.power_mw / 1000.0});
      if ((s.clock_reasons.value_or(0) & kMarkedClockReasons) != 0)
        h.throttle_ms.push_back(f.now_ms);
    }
  }

  std::string url_;
  httplib::Client client_;
  std::map<unsigned, GpuHistory> history_;
  Window last_{-1, -1, 0};
  uint64_t polls_ = 0;
};

}  // namespace

std::unique_ptr<Feed> make_api_feed(const std::string& base_url, int timeout_ms) {
  return std::make_unique<ApiFeed>(base_url, timeout_ms);
}

bool daemon_answers(const std::string& base_url, int timeout_ms) {
  httplib::Client c(base_url);
  c.set_connection_timeout(std::chrono::milliseconds(timeout_ms));
  c.set_read_timeout(std::chrono::milliseconds(timeout_ms));
  return static_cast<bool>(c.Get("/api/health"));
}

}  // namespace gw::watch
