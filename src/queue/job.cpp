#include "queue/job.h"

#include <array>
#include <utility>

namespace gw::queue {
namespace {

constexpr std::array<std::pair<State, std::string_view>, 7> kStates = {{
    {State::kPending, "pending"},
    {State::kHeld, "held"},
    {State::kRunning, "running"},
    {State::kDone, "done"},
    {State::kFailed, "failed"},
    {State::kCancelled, "cancelled"},
    {State::kLost, "lost"},
}};

template <class T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

template <class T>
void get_opt(const nlohmann::json& j, const char* k, std::optional<T>& out) {
  if (j.contains(k) && !j[k].is_null()) out = j[k].get<T>();
}

}  // namespace

std::string_view state_name(State s) {
  for (const auto& [st, name] : kStates)
    if (st == s) return name;
  return "unknown";
}

std::optional<State> parse_state(std::string_view s) {
  for (const auto& [st, name] : kStates)
    if (name == s) return st;
  return std::nullopt;
}

nlohmann::json to_json(const JobRecord& j, bool with_env) {
  nlohmann::json o = {
      {"id", j.id},
      {"name", j.name},
      {"uid", j.uid},
      {"gid", j.gid},
      {"user", j.user},
      {"argv", j.argv},
      {"cwd", j.cwd},
      {"gpus", j.gpus},
      {"gpu_mem_bytes", opt(j.gpu_mem_bytes)},
      {"priority", j.priority},
      {"time_limit_ms", opt(j.time_limit_ms)},
      {"after", opt(j.after)},
      {"array_index", opt(j.array_index)},
      {"requeue", j.requeue},
      {"gpu_type", opt(j.gpu_type)},
      {"cancel_requested", j.cancel_requested},
      {"state", state_name(j.state)},
      {"reason", j.reason},
      {"submit_ms", j.submit_ms},
      {"start_ms", opt(j.start_ms)},
      {"end_ms", opt(j.end_ms)},
      {"gpu_indices", j.gpu_indices},
      {"gpu_uuids", j.gpu_uuids},
      {"exit_code", opt(j.exit_code)},
      {"signal", opt(j.signal)},
      {"supervisor_pid", opt(j.supervisor_pid)},
      {"supervisor_start", opt(j.supervisor_start)},
      {"attempts", j.attempts},
      {"stdout", j.out_path},
      {"stderr", j.err_path},
      {"cpu_s", opt(j.cpu_s)},
      {"mem_peak_bytes", opt(j.mem_peak_bytes)},
      {"cgroup", j.cgroup},
  };
  if (!j.shared_with.empty()) {
    nlohmann::json sh = nlohmann::json::array();
    for (const SharedRun& r : j.shared_with) sh.push_back({{"gpu", r.gpu}, {"job", r.job}});
    o["shared_with"] = sh;
  }
  if (with_env) o["env"] = j.env;
  return o;
}

JobRecord job_from_json(const nlohmann::json& o) {
  JobRecord j;
  j.id = o.at("id").get<int64_t>();
  j.name = o.at("name").get<std::string>();
  j.uid = o.at("uid").get<uid_t>();
  j.gid = o.at("gid").get<gid_t>();
  j.user = o.at("user").get<std::string>();
  j.argv = o.at("argv").get<std::vector<std::string>>();
  if (o.contains("env")) j.env = o["env"].get<std::vector<std::string>>();
  j.cwd = o.at("cwd").get<std::string>();
  j.gpus = o.at("gpus").get<unsigned>();
  get_opt(o, "gpu_mem_bytes", j.gpu_mem_bytes);
  j.priority = o.at("priority").get<int>();
  get_opt(o, "time_limit_ms", j.time_limit_ms);
  get_opt(o, "after", j.after);
  get_opt(o, "array_index", j.array_index);
  j.requeue = o.at("requeue").get<bool>();
  j.cancel_requested = o.value("cancel_requested", false);
  get_opt(o, "gpu_type", j.gpu_type);
  j.state = parse_state(o.at("state").get<std::string>()).value_or(State::kLost);
  j.reason = o.at("reason").get<std::string>();
  j.submit_ms = o.at("submit_ms").get<int64_t>();
  get_opt(o, "start_ms", j.start_ms);
  get_opt(o, "end_ms", j.end_ms);
  j.gpu_indices = o.at("gpu_indices").get<std::vector<unsigned>>();
  j.gpu_uuids = o.at("gpu_uuids").get<std::vector<std::string>>();
  get_opt(o, "exit_code", j.exit_code);
  get_opt(o, "signal", j.signal);
  get_opt(o, "supervisor_pid", j.supervisor_pid);
  get_opt(o, "supervisor_start", j.supervisor_start);
  j.attempts = o.at("attempts").get<unsigned>();
  j.out_path = o.at("stdout").get<std::string>();
  j.err_path = o.at("stderr").get<std::string>();
  get_opt(o, "cpu_s", j.cpu_s);
  get_opt(o, "mem_peak_bytes", j.mem_peak_bytes);
  j.cgroup = o.value("cgroup", std::string());
  if (o.contains("shared_with"))
    for (const nlohmann::json& r : o["shared_with"])
      j.shared_with.push_back({r.at("gpu").get<unsigned>(), r.at("job").get<int64_t>()});
  return j;
}

}  // namespace gw::queue
