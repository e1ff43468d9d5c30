// What `queue` and `gpu list` show: jobs with the reason each pending one waits, in words, and
// each GPU's state, reason and who drained it.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "queue/service.h"

namespace gw::queue {

std::string QueueService::wait_reason(const JobRecord& j, const std::vector<JobRecord>& active,
                                      const std::vector<Drain>& drains) const {
  if (j.state == State::kHeld) return j.reason;
  if (j.after)
    for (const JobRecord& d : active)
      if (d.id == *j.after) return fmt::format("waits for job {} to finish", d.id);
  const std::vector<unsigned> usable = usable_gpus();
  std::map<unsigned, std::string> unavailable;
  for (const Drain& d : drains) unavailable[d.gpu] = "drained: " + d.reason;
  for (const GpuView& g : gpus_)
    if (!g.unschedulable.empty() && !unavailable.count(g.index))
      unavailable[g.index] = g.unschedulable;
  for (unsigned g : outside_busy())
    if (!unavailable.count(g)) unavailable[g] = "busy with processes outside the queue";
  std::erase_if(unavailable, [&](const auto& kv) {  // excluded GPUs are not the queue's
    return std::find(usable.begin(), usable.end(), kv.first) == usable.end();
  });
  std::set<unsigned> held;  // a set: GPUs shared by jobs count once
  for (const JobRecord& r : active)
    if (r.state == State::kRunning)
      for (unsigned g : r.gpu_indices)
        if (!unavailable.count(g)) held.insert(g);
  size_t free = usable.size() - std::min(usable.size(), unavailable.size() + held.size());
  std::string out = fmt::format("needs {} GPU{}, {} free", j.gpus, j.gpus == 1 ? "" : "s", free);
  std::string notes;
  for (const auto& [g, why] : unavailable)
    notes += fmt::format("{}GPU {} {}", notes.empty() ? "" : "; ", g, why);
  if (!notes.empty()) out += " (" + notes + ")";
  if (free >= j.gpus) out += fmt::format(": behind higher-ranked jobs ({} policy)", opts_.policy);
  if (const auto note = share_notes_.find(j.id); note != share_notes_.end())
    out += "; --gpu-mem " + note->second;
  if (!j.reason.empty()) out += "; " + j.reason;
  return out;
}

nlohmann::json QueueService::list(const Caller&, const nlohmann::json& r) {
  auto active = db_->active();
  auto drains = db_->drains();
  if (!active || !drains)
    return {{"ok", false}, {"error", {{"code", "queue.db"}, {"message", "cannot read the queue"}}}};
  nlohmann::json jobs = nlohmann::json::array();
  for (const JobRecord& j : *active) {
    nlohmann::json o = to_json(j, false);  // others' environments are never listed
    if (j.state != State::kRunning) o["wait_reason"] = wait_reason(j, *active, *drains);
    jobs.push_back(o);
  }
  const size_t finished = r.value("finished", size_t{0});
  if (finished > 0)
    if (auto f = db_->finished(finished))
      for (const JobRecord& j : *f) jobs.push_back(to_json(j, false));
  nlohmann::json usage = nlohmann::json::object();
  for (const auto& [account, gpu_ms] : usage_now(*active)) usage[account] = gpu_ms / 1000.0;
  const nlohmann::json fairshare = {{"half_life_ms", opts_.fairshare_half_life_ms},
                                    {"usage_gpu_s", usage}};
  return {{"ok", true}, {"policy", opts_.policy}, {"jobs", jobs}, {"fairshare", fairshare}};
}

nlohmann::json QueueService::gpus(const Caller&, const nlohmann::json&) {
  auto active = db_->active();
  auto drains = db_->drains();
  if (!active || !drains)
    return {{"ok", false}, {"error", {{"code", "queue.db"}, {"message", "cannot read the queue"}}}};
  const std::set<unsigned> foreign = outside_busy();
  const std::vector<unsigned> usable = usable_gpus();
  nlohmann::json out = nlohmann::json::array();
  for (const GpuView& g : gpus_) {
    nlohmann::json o = {{"index", g.index},
                        {"uuid", g.uuid},
                        {"name", g.name},
                        {"state", "idle"},
                        {"reason", ""},
                        {"by", ""},
                        {"jobs", nlohmann::json::array()}};
    for (const JobRecord& j : *active)
      if (j.state == State::kRunning &&
          std::find(j.gpu_indices.begin(), j.gpu_indices.end(), g.index) != j.gpu_indices.end()) {
        o["state"] = o["jobs"].empty() ? "busy" : "shared";
        o["jobs"].push_back(j.id);
      }
    if (foreign.count(g.index)) {
      o["state"] = "busy";
      o["reason"] = "processes outside the queue";
    }
    if (!g.unschedulable.empty()) {
      o["state"] = "unschedulable";
      o["reason"] = g.unschedulable;
    }
    if (std::find(usable.begin(), usable.end(), g.index) == usable.end()) {
      o["state"] = "excluded";
      o["reason"] = "excluded by the configuration";
    }
    for (const Drain& d : *drains)
      if (d.gpu == g.index) {
        o["state"] = "drained";
        o["reason"] = d.reason;
        o["by"] = d.by;
        o["automatic"] = d.automatic;
        if (!d.code.empty()) o["code"] = d.code;
      }
    out.push_back(o);
  }
  return {{"ok", true}, {"gpus", out}};
}

}  // namespace gw::queue
