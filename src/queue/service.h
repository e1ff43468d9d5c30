// QueueService: the live job queue inside the daemon. The Daemon owns one and feeds it each
// round's snapshot and findings (tick); the socket server hands it requests with the caller
// the kernel named (handle). The database is the truth. A pass keeps its sched::Scheduler
// while only new jobs arrive and rebuilds it from the database when anything else changed (and
// at least once a minute), so a restarted daemon schedules exactly as the old one would.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/finding.h"
#include "core/result.h"
#include "core/snapshot.h"
#include "jobreport/jobreport.h"
#include "queue/db.h"
#include "queue/peer.h"

namespace gw::sched {
class Scheduler;
struct PassResult;
}  // namespace gw::sched

namespace gw::queue {

struct ShareGpu;

struct QueueOptions {
  std::string state_dir;        // jobs/<id>.<attempt>/ and queue.db live here
  std::string db_path;          // default: state_dir/queue.db
  std::string history_path;     // the daemon's history database (job report)
  std::string policy = "fcfs";  // a sched policy name (fcfs, priority, fairshare, ...+backfill)
  int64_t fairshare_half_life_ms = 7LL * 24 * 3600 * 1000;
  std::optional<std::string> admin_group;
  int64_t grace_ms = 10'000;  // SIGTERM -> SIGKILL
  std::string self_exe;       // the gpuwarden binary (re-exec'd as the supervisor)
  std::vector<unsigned> include_gpus, exclude_gpus;  // empty include: every GPU
  std::string job_map_dir;         // dcgm-exporter style job mapping files; empty: none
  int64_t lost_after_ms = 30'000;  // a started job with no supervisor record by then is lost
  // --gpu-mem sharing: a GPU's jobs must have run this long before its memory use is
  // trusted and another job may join them (share.h).
  int64_t share_warmup_ms = 60'000;
};

struct GpuView {
  unsigned index = 0;
  std::string uuid, name;
  GpuAccess access = GpuAccess::kOk;
  std::vector<uint32_t> pids;  // NVML's process list (compute and graphics)
  std::optional<uint64_t> mem_total, mem_used;
  // Why the queue gives it no job although it is healthy (MIG mode, compute mode Prohibited);
  // empty when it may.
  std::string unschedulable;
  bool exclusive = false;  // compute mode Exclusive_Process: one process, so no --gpu-mem sharing
};

class QueueService {
 public:
  static Result<std::unique_ptr<QueueService>> create(QueueOptions options, const Clock& clock);
  ~QueueService();

  // One request, as the kernel identified its sender. Thread-safe.
  nlohmann::json handle(const Caller& caller, const nlohmann::json& request);
  // One daemon round: GPU list and health, then reap, schedule and start. Thread-safe.
  void tick(const Snapshot& snap, const std::vector<Finding>& findings);
  // Reap, schedule and start without new readings (after a submit; tests).
  void pass();

  const QueueOptions& options() const { return opts_; }

  // Read-only views for the daemon's HTTP API, which has no peer credentials (overview.cpp).
  // What `queue` shows any local user minus the command line, directory and output paths;
  // each finished job with its report's top cause. Thread-safe.
  nlohmann::json overview(size_t finished);
  // The queue job each process of the snapshot belongs to (its process group is a job's), by
  // pid; processes of no job are absent. As of the last pass. Thread-safe.
  std::map<uint32_t, int64_t> jobs_of(const Snapshot& snap);

 private:
  QueueService(QueueOptions o, const Clock& c);
  using Handler = nlohmann::json (QueueService::*)(const Caller&, const nlohmann::json&);
  struct Command {
    const char* name;
    Handler handler;
  };
  static const std::vector<Command>& commands();

  nlohmann::json submit(const Caller& c, const nlohmann::json& r);
  nlohmann::json list(const Caller& c, const nlohmann::json& r);
  nlohmann::json cancel(const Caller& c, const nlohmann::json& r);
  nlohmann::json hold(const Caller& c, const nlohmann::json& r);
  nlohmann::json release(const Caller& c, const nlohmann::json& r);
  nlohmann::json show(const Caller& c, const nlohmann::json& r);
  nlohmann::json report(const Caller& c, const nlohmann::json& r);
  nlohmann::json drain(const Caller& c, const nlohmann::json& r);
  nlohmann::json resume(const Caller& c, const nlohmann::json& r);
  nlohmann::json gpus(const Caller& c, const nlohmann::json& r);

  Result<JobRecord> owned_job(const Caller& c, const nlohmann::json& r);
  Status validate_submit(const JobRecord& j) const;
  enum class Dependency { kMet, kWaits, kBroken };
  Dependency dependency(const JobRecord& j, std::string& why) const;
  // The pass (pass.cpp) and the scheduler it keeps across passes.
  struct Live;
  static constexpr int64_t kRebuildEveryMs = 60'000;
  void pass_locked();
  std::vector<JobRecord> running_jobs() const;  // copies
  bool needs_rebuild(const std::vector<unsigned>& usable, const std::set<unsigned>& closed,
                     int64_t now_ms) const;
  bool rebuild(const std::vector<JobRecord>& running, const std::vector<unsigned>& usable,
               const std::set<unsigned>& closed, int64_t now_ms);
  void submit_waiting();
  bool scheduler_knows(int64_t id) const;  // waiting, running or ended in the kept scheduler
  void start_chosen(const sched::PassResult& r, std::vector<JobRecord>& running);
  void reap(JobRecord& j);
  // end_ms: when it ended (default: now). A run that ends is charged to its user's usage.
  void finish(JobRecord& j, State to, std::string reason,
              std::optional<int64_t> end_ms = std::nullopt);
  void charge_run(const JobRecord& j, int64_t end_ms);
  // Every account's fair-share usage now (stored runs decayed plus running jobs), GPU-ms.
  std::map<std::string, double> usage_now(const std::vector<JobRecord>& active) const;
  // GPUs the queue may place work on now: usable, not drained, not busy outside the queue.
  std::set<unsigned> open_gpus(const std::vector<unsigned>& usable,
                               const std::vector<Drain>& drains,
                               const std::set<unsigned>& foreign) const;
  // The share step after the scheduler's pass: waiting jobs with --gpu-mem onto GPUs whose
  // jobs share (share.h), in the policy's spirit (share_order); why each could not, kept in
  // share_notes_ for `queue`. `running` includes the jobs this pass started.
  void share_waiting(std::vector<JobRecord>& running, const std::set<unsigned>& open);
  void note_sharers(JobRecord& j, const std::vector<ShareGpu>& gpus,
                    std::vector<JobRecord>& running);
  void start(JobRecord& j, const std::vector<unsigned>& gpus);
  void fail_on_gpu(JobRecord& j, unsigned gpu, const std::string& why);
  void apply_health(const Snapshot& snap, const std::vector<Finding>& findings);
  std::string job_dir(const JobRecord& j) const;
  std::string wait_reason(const JobRecord& j, const std::vector<JobRecord>& active,
                          const std::vector<Drain>& drains) const;
  std::vector<unsigned> usable_gpus() const;  // included, not excluded
  std::set<unsigned> outside_busy() const;    // processes the queue did not start
  void write_job_map(const JobRecord& j, bool running);
  jobreport::JobWindow report_window(const JobRecord& j) const;
  void remember_limits(const Snapshot& snap);  // limits_ from this round
  nlohmann::json top_cause(const JobRecord& j);

  QueueOptions opts_;
  const Clock& clock_;
  std::unique_ptr<QueueDb> db_;
  std::mutex m_;
  std::condition_variable ticked_cv_;  // the first tick: the GPU list is known
  bool ticked_ = false;
  std::vector<GpuView> gpus_;
  // Process group of each running job -> its id (outside_busy, jobs_of); rebuilt each pass.
  std::map<uint32_t, int64_t> job_groups_;
  // Why each waiting --gpu-mem job could not share a GPU at the last pass (`queue`).
  std::map<int64_t, std::string> share_notes_;
  std::unique_ptr<Live> live_;
  // Something other than a new waiting job changed since the scheduler was built.
  bool sched_dirty_ = true;
  // Each GPU's limits by UUID, for job reports (clocks and link under load, power). Own mutex:
  // the HTTP overview builds reports without m_.
  mutable std::mutex limits_m_;
  std::map<std::string, jobreport::JobGpu> limits_;
  std::mutex reports_m_;  // after m_ when both are held; guards report_causes_
  std::map<std::string, nlohmann::json> report_causes_;  // "id.attempt" of finished jobs
};

}  // namespace gw::queue
