// The queue as the daemon's HTTP API shows it. HTTP has no peer credentials, so this is what
// any local user sees with `queue`, narrowed further: the command line, working directory and
// output paths stay on the socket (arguments carry paths, hosts and sometimes secrets; squeue
// shows a job's name, not its command). Environments are never listed anywhere.
#include <fmt/format.h>

#include "jobreport/jobreport.h"
#include "queue/service.h"

namespace gw::queue {
namespace {

using nlohmann::json;

// The fields of a `queue` entry an HTTP reader may see.
constexpr const char* kPublicFields[] = {
    "id",         "name",     "user",        "gpus",     "gpu_indices",   "priority",
    "state",      "reason",   "submit_ms",   "start_ms", "end_ms",        "exit_code",
    "signal",     "attempts", "array_index", "after",    "time_limit_ms", "cancel_requested",
    "wait_reason"};

json public_fields(const json& entry) {
  json o = json::object();
  for (const char* k : kPublicFields)
    if (entry.contains(k)) o[k] = entry[k];
  return o;
}

// Nobody in particular: `queue` ignores who asks, and nothing else is asked with this caller.
Caller http_reader() {
  Caller c;
  c.uid = c.gid = 65534;
  c.user = "(http)";
  return c;
}

json cause_of(const jobreport::JobReport& rep) {
  if (!rep.causes.empty()) {
    const jobreport::Cause& c = rep.causes.front();
    return {{"code", c.code}, {"text", c.text}, {"gpu", c.gpu ? json(*c.gpu) : json(nullptr)}};
  }
  if (rep.no_data)
    return {{"code", nullptr}, {"text", "no history samples fall into the job's time span"}};
  return {{"code", nullptr}, {"text", "no cause of slowness found"}};
}

}  // namespace

// A finished run never changes, so its top cause is built once from the history database.
json QueueService::top_cause(const JobRecord& j) {
  const std::string key = fmt::format("{}.{}", j.id, j.attempts);
  if (auto it = report_causes_.find(key); it != report_causes_.end()) return it->second;
  store::StoreOptions so;
  so.read_only = true;
  auto st = store::Store::open(opts_.history_path, so);
  if (!st) return {{"error", st.error().to_string()}};  // not cached: the store may come back
  auto rep = jobreport::build(**st, report_window(j));
  if (!rep) return {{"error", rep.error().to_string()}};
  return report_causes_[key] = cause_of(*rep);
}

json QueueService::overview(size_t finished) {
  const json list = handle(http_reader(), {{"cmd", "queue"}, {"finished", finished}});
  if (!list.value("ok", false)) return list;
  std::lock_guard lk(reports_m_);
  std::map<std::string, json> keep;  // only the finished jobs still listed stay cached
  json jobs = json::array();
  for (const json& entry : list["jobs"]) {
    json o = public_fields(entry);
    const JobRecord j = job_from_json(entry);
    if (is_final(j.state) && j.start_ms) {
      o["report"] = top_cause(j);
      const std::string key = fmt::format("{}.{}", j.id, j.attempts);
      if (auto it = report_causes_.find(key); it != report_causes_.end()) keep.insert(*it);
    }
    jobs.push_back(std::move(o));
  }
  report_causes_ = std::move(keep);
  return {{"ok", true}, {"policy", list["policy"]}, {"now_ms", clock_.now_ms()}, {"jobs", jobs}};
}

}  // namespace gw::queue
