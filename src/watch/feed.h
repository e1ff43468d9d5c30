// Where `watch` gets its frames: one interface, one file per implementation. The daemon's JSON
// API (api_feed.cpp) is the normal path; a direct GPU source (direct_feed.cpp) serves when no
// daemon runs, with the history this process has seen and the same diagnosis rules.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "core/result.h"
#include "sources/gpu_source.h"
#include "watch/frame.h"

namespace gw::watch {

struct Window {
  int64_t span_ms = 10 * 60'000;  // width of the sparkline window
  int64_t back_ms = 0;            // how far before now it ends
  int columns = 80;               // sparkline resolution wanted (points per series)
};

class Feed {
 public:
  virtual ~Feed() = default;
  // One refresh. A failure of the whole feed is an Error (the view keeps the last frame and
  // says why); per-GPU trouble is inside the frame.
  virtual Result<Frame> poll(const Window& window) = 0;
};

// The daemon at `base_url` ("http://127.0.0.1:9400"). `timeout_ms` bounds every request.
std::unique_ptr<Feed> make_api_feed(const std::string& base_url, int timeout_ms);
// Whether a daemon answers /api/health at `base_url` within `timeout_ms` (any status).
bool daemon_answers(const std::string& base_url, int timeout_ms);
// GPUs read directly; findings from the doctor rules over the recent samples.
std::unique_ptr<Feed> make_direct_feed(std::unique_ptr<GpuSource> source);

// The user owning each process of `snapshot`, read from <proc_root>/<pid> (the processes live
// on this machine whether the numbers came from the daemon or straight from NVML).
UserOf process_users(const Snapshot& snapshot, const std::string& proc_root = "/proc");

// Frame pieces from the daemon's JSON bodies (pure, so tests feed them recorded bodies).
std::vector<WatchFinding> findings_from_api(const nlohmann::json& body);
// Adds the /api/history points of `metric` to each GPU's series (`max` of each point).
void history_from_api(const nlohmann::json& body, const std::string& metric,
                      std::map<unsigned, GpuHistory>& out);
// The queue job id of each process ("jobs_by_pid" of /api/gpus); bad entries are skipped.
std::map<uint32_t, int64_t> jobs_from_api(const nlohmann::json& gpus_body);
// Xid and lost-GPU events of /api/events as marks.
void events_from_api(const nlohmann::json& body, std::map<unsigned, GpuHistory>& out);

}  // namespace gw::watch
