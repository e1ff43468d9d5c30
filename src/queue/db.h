// QueueDb: the queue's SQLite file (WAL; a sibling of the history database). Jobs, GPU drains
// and fair-share usage, nothing else: every acknowledged submit is committed before the client
// hears "ok".
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "queue/job.h"
#include "queue/usage.h"

struct sqlite3;

namespace gw::queue {

struct Drain {
  unsigned gpu = 0;
  std::string reason;
  std::string by;          // user name, or "gpuwarden" for the daemon's own health drains
  bool automatic = false;  // the daemon drained it for a finding; it resumes it itself
  std::string code;        // the finding code behind an automatic drain
  int64_t since_ms = 0;
};

class QueueDb {
 public:
  static Result<std::unique_ptr<QueueDb>> open(const std::string& path);
  ~QueueDb();
  QueueDb(const QueueDb&) = delete;
  QueueDb& operator=(const QueueDb&) = delete;

  // Inserts jobs in one transaction and fills in their ids.
  Status insert(std::vector<JobRecord>& jobs);
  Status update(const JobRecord& j);
  Result<std::optional<JobRecord>> get(int64_t id) const;
  // Jobs not final (pending, held, running), by id.
  Result<std::vector<JobRecord>> active() const;
  // The same, without a copy or a read: the daemon is the database's only writer, so the
  // active jobs are kept in memory, loaded at open and updated by every successful write.
  const std::map<int64_t, JobRecord>& active_jobs() const { return active_; }
  // The newest final jobs, newest first.
  Result<std::vector<JobRecord>> finished(size_t limit) const;
  Result<std::vector<Drain>> drains() const;
  Status set_drain(const Drain& d);
  Status clear_drain(unsigned gpu);
  // Fair-share usage of finished runs, one row per account (usage.h).
  Result<std::vector<Usage>> usage() const;
  Status set_usage(const Usage& u);
  Status begin();
  Status commit();

 private:
  QueueDb() = default;
  Status exec(const char* sql) const;
  Status load();
  Status write_doc(const JobRecord& j);
  void remember(const JobRecord& j);  // the in-memory copy after a committed write
  Result<std::vector<JobRecord>> select(const std::string& where, int64_t arg) const;
  sqlite3* db_ = nullptr;
  std::string path_;
  std::map<int64_t, JobRecord> active_;
  std::vector<Drain> drains_;  // the same for drains and usage rows
  std::vector<Usage> usage_;
};

}  // namespace gw::queue
