// QueueService: creation, the request table, and the per-round tick.
#include "queue/service.h"

#include <sys/stat.h>

#include <filesystem>

namespace gw::queue {

nlohmann::json error_reply(const std::string& code, const std::string& message) {
  return {{"ok", false}, {"error", {{"code", code}, {"message", message}}}};
}

Result<std::unique_ptr<QueueService>> QueueService::create(QueueOptions options,
                                                           const Clock& clock) {
  std::error_code ec;
  std::filesystem::create_directories(options.state_dir + "/jobs", ec);
  if (ec) return make_error("queue.state_dir", "cannot create: " + ec.message(), options.state_dir);
  // Job directories hold specs with environments: root (the daemon) only.
  ::chmod((options.state_dir + "/jobs").c_str(), 0700);
  if (options.db_path.empty()) options.db_path = options.state_dir + "/queue.db";
  auto db = QueueDb::open(options.db_path);
  if (!db) return db.error();
  std::unique_ptr<QueueService> s(new QueueService(std::move(options), clock));
  s->db_ = std::move(*db);
  return s;
}

const std::vector<QueueService::Command>& QueueService::commands() {
  static const std::vector<Command> kCommands = {
      {"submit", &QueueService::submit},     {"queue", &QueueService::list},
      {"cancel", &QueueService::cancel},     {"hold", &QueueService::hold},
      {"release", &QueueService::release},   {"job.show", &QueueService::show},
      {"job.report", &QueueService::report}, {"gpu.drain", &QueueService::drain},
      {"gpu.resume", &QueueService::resume}, {"gpu.list", &QueueService::gpus},
  };
  return kCommands;
}

nlohmann::json QueueService::handle(const Caller& caller, const nlohmann::json& request) {
  if (!request.is_object() || !request.contains("cmd") || !request["cmd"].is_string())
    return error_reply("queue.bad_request", "a request is a JSON object with a \"cmd\" string");
  const std::string cmd = request["cmd"].get<std::string>();
  std::unique_lock lk(m_);
  // The daemon opens the socket before its first round: a request judged against GPUs that
  // comes earlier waits for the GPU list (briefly) instead of being refused for "0 GPUs".
  if (cmd == "submit" || cmd == "gpu.drain" || cmd == "gpu.resume")
    ticked_cv_.wait_for(lk, std::chrono::seconds(10), [this] { return ticked_; });
  for (const Command& c : commands()) {
    if (cmd != c.name) continue;
    try {
      nlohmann::json reply = (this->*c.handler)(caller, request);
      if (cmd == "submit" || cmd == "release" || cmd == "gpu.resume") pass_locked();
      return reply;
    } catch (const nlohmann::json::exception& e) {
      return error_reply("queue.bad_request", std::string("malformed request: ") + e.what());
    }
  }
  return error_reply("queue.unknown_command", "unknown command '" + cmd + "'");
}

void QueueService::tick(const Snapshot& snap, const std::vector<Finding>& findings) {
  std::lock_guard lk(m_);
  gpus_.clear();
  for (const GpuState& g : snap.gpus) {
    GpuView v;
    v.index = g.info.index;
    v.uuid = g.info.uuid;
    v.name = g.info.name;
    v.access = g.access;
    v.mem_total = g.sample.mem_total_bytes;
    v.mem_used = g.sample.mem_used_bytes;
    if (g.sample.processes)
      for (const ProcessInfo& p : *g.sample.processes) v.pids.push_back(p.pid);
    // CUDA_VISIBLE_DEVICES=<GPU UUID> shows a job no device on a GPU in MIG mode (its
    // instances have UUIDs of their own), and none at all in compute mode Prohibited.
    if (g.sample.mig_enabled.value_or(false))
      v.unschedulable = "MIG mode is enabled (the queue does not schedule MIG instances yet)";
    else if (g.sample.compute_mode == ComputeMode::kProhibited)
      v.unschedulable = "compute mode is Prohibited";
    v.exclusive = g.sample.compute_mode == ComputeMode::kExclusiveProcess;
    gpus_.push_back(std::move(v));
  }
  remember_limits(snap);
  apply_health(snap, findings);
  pass_locked();
  ticked_ = true;
  ticked_cv_.notify_all();
}

void QueueService::remember_limits(const Snapshot& snap) {
  std::lock_guard lk(limits_m_);
  for (const GpuState& g : snap.gpus) {
    jobreport::JobGpu& l = limits_[g.info.uuid];
    l.max_sm_clock_mhz = g.info.max_sm_clock_mhz;
    l.max_pcie_gen = g.info.pcie_max_gen;
    l.max_pcie_width = g.info.pcie_max_width;
    if (g.sample.power_limit_mw) l.power_limit_w = *g.sample.power_limit_mw / 1000.0;
  }
}

void QueueService::pass() {
  std::lock_guard lk(m_);
  pass_locked();
}

std::vector<unsigned> QueueService::usable_gpus() const {
  std::vector<unsigned> out;
  for (const GpuView& g : gpus_) {
    const auto in = [&](const std::vector<unsigned>& l) {
      return std::find(l.begin(), l.end(), g.index) != l.end();
    };
    if ((opts_.include_gpus.empty() || in(opts_.include_gpus)) && !in(opts_.exclude_gpus))
      out.push_back(g.index);
  }
  return out;
}

std::string QueueService::job_dir(const JobRecord& j) const {
  return opts_.state_dir + "/jobs/" + std::to_string(j.id) + "." + std::to_string(j.attempts);
}

}  // namespace gw::queue
