// Store: the daemon's history in one SQLite file (WAL). Raw per-GPU samples for a while, then
// 1-minute min/avg/max; events, finding lifecycles and alert transitions. Disk stays bounded
// by compaction the daemon runs on its own. Knows nothing about HTTP or NVML.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/event.h"
#include "core/finding.h"
#include "core/result.h"
#include "core/snapshot.h"
#include "store/db_file.h"

struct sqlite3;

namespace gw::store {

struct StoreOptions {
  int64_t raw_retention_ms = 24LL * 3600 * 1000;          // raw samples
  int64_t rollup_retention_ms = 30LL * 24 * 3600 * 1000;  // 1-minute rollups, events, findings
  // Upper bound for the database file. Compaction drops the oldest data to stay below it; the
  // file can never grow past 1.25x of it (SQLite then answers "database or disk is full").
  uint64_t max_bytes = 1ULL << 30;
  bool read_only = false;  // `gpuwarden history` while the daemon writes
  // A new database file (and its -wal, -shm) and the folders created for it: private by
  // default, the history names the machine's faults (storage.file_mode, storage.dir_mode).
  unsigned file_mode = 0600;
  unsigned dir_mode = 0700;
};

// One finding's lifecycle, as the daemon tracks it (serve/findings.h).
struct FindingRecord {
  int64_t id = 0;  // 0 until stored
  Finding finding;
  int64_t raised_ms = 0;
  int64_t last_active_ms = 0;
  std::optional<int64_t> cleared_ms;
};

// One alert state change (firing or resolved), from the alert engine.
struct AlertTransitionRecord {
  int64_t t_ms = 0;
  std::string rule;
  std::string state;  // "firing" / "resolved"
  std::string severity;
  std::optional<unsigned> gpu;
  std::string labels_json;  // {"code":"xid.hardware",...}
  std::string summary;
};

struct HistoryQuery {
  std::optional<std::string> gpu;  // NVML index ("3") or UUID; nullopt = every GPU
  std::string metric;              // a metric_table() name
  int64_t from_ms = 0;
  int64_t to_ms = INT64_MAX;
};

// One point: raw samples have min == avg == max and n == 1.
struct HistoryPoint {
  unsigned gpu = 0;
  std::string uuid;
  int64_t t_ms = 0;
  double min = 0, avg = 0, max = 0;
  int64_t n = 1;
  bool rollup = false;
};

// Where the next page of a history query starts (the store's GPU row id, not the index: one
// index can name two GPUs over time; bucket time); its text form is "ID:T_MS", the `next` of
// one page passed back as `cursor`.
struct HistoryCursor {
  uint64_t gpu = 0;
  int64_t t_ms = 0;
};
Result<HistoryCursor> parse_history_cursor(std::string_view text);
std::string format_history_cursor(const HistoryCursor& c);

// One page: at most max_points points, each the min/avg/max/count of its step_ms bucket
// (aligned on from_ms), GPU by GPU; `next` when more follow.
struct HistoryPage {
  std::vector<HistoryPoint> points;
  int64_t step_ms = 0;
  std::optional<HistoryCursor> next;
};
// The bucket width (ms) that fits one GPU's whole range, both ends included, in max_points.
int64_t history_step_ms(int64_t from_ms, int64_t to_ms, size_t max_points);

struct StoreStats {
  uint64_t file_bytes = 0;  // database + WAL
  int64_t raw_rows = 0;
  int64_t rollup_rows = 0;
  int64_t events = 0;
  int64_t findings = 0;
  int64_t alert_transitions = 0;
  std::optional<int64_t> oldest_raw_ms, newest_raw_ms;
};

struct StoredEvent {
  int64_t t_ms = 0;
  Event event;
};

inline constexpr int kSchemaVersion = 2;

class Store {
 public:
  // Creates or opens the database and migrates it to kSchemaVersion. Errors: store.open
  // (cannot open or create), store.schema (a newer schema, or not a gpuwarden database).
  static Result<std::unique_ptr<Store>> open(const std::string& path, const StoreOptions& options);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // One sampling round in one transaction: samples of every GPU, new events, findings whose
  // state changed, alert transitions. Findings get their id filled in.
  Status record(const Snapshot* snap, std::span<const Event> events,
                std::span<FindingRecord> findings, std::span<const AlertTransitionRecord> alerts);

  // Rolls completed minutes up, drops what is past retention, keeps the file under
  // max_bytes. `now_ms` is the daemon clock.
  Status compact(int64_t now_ms);

  Result<std::vector<HistoryPoint>> query(const HistoryQuery& q) const;
  // The bounded form of query(): downsampled to fit, streamed from SQLite, paged by cursor.
  Result<HistoryPage> query_page(const HistoryQuery& q, size_t max_points,
                                 const std::optional<HistoryCursor>& after) const;
  Result<std::vector<StoredEvent>> events(int64_t from_ms, size_t limit) const;
  Result<std::vector<FindingRecord>> findings(int64_t from_ms, size_t limit) const;
  Result<std::vector<AlertTransitionRecord>> alert_transitions(int64_t from_ms, size_t limit) const;
  // Findings that were active when the daemon last stopped (to resume their lifecycle).
  Result<std::vector<FindingRecord>> open_findings() const;
  // What a restarted daemon takes up again: the alert instances whose newest transition is
  // "firing" (t_ms = when they started), and the Xid count per (GPU index, code) of every
  // stored Xid event (the daemon's xid counters).
  Result<std::vector<AlertTransitionRecord>> firing_alerts() const;
  struct XidCount {
    unsigned gpu = 0;
    unsigned code = 0;
    uint64_t count = 0;
  };
  Result<std::vector<XidCount>> xid_counts() const;
  Result<StoreStats> stats() const;  // counts rows: not for every round
  uint64_t file_bytes() const;       // database + WAL, cheap
  // New retention and size bound (config reload); takes effect at the next compaction.
  void set_retention(int64_t raw_ms, int64_t rollup_ms, uint64_t max_bytes) {
    opts_.raw_retention_ms = raw_ms;
    opts_.rollup_retention_ms = rollup_ms;
    opts_.max_bytes = max_bytes;
  }
  // The schema version the file is at (after migration).
  int schema_version() const;
  // Steps of open(), in order.
  Status check_version(int version) const;
  Status set_pragmas(int version) const;
  Status migrate(int version) const;
  Status prepare_statements();
  // Parts of record(), inside its transaction.
  Status write_samples(const Snapshot& snap);
  Status write_events(std::span<const Event> events, int64_t default_ms);
  Status write_findings(std::span<FindingRecord> findings);
  Status write_alerts(std::span<const AlertTransitionRecord> alerts);
  const std::string& path() const { return path_; }

 private:
  Store() = default;
  Status exec(const char* sql) const;
  Result<int64_t> gpu_id(const DeviceInfo& info);
  Status rollup(int64_t until_ms);
  Status enforce_size();

  std::optional<DbLock> lock_;  // the writer's; released after the connection closes
  sqlite3* db_ = nullptr;
  std::string path_;
  StoreOptions opts_;
  std::vector<std::pair<std::string, int64_t>> gpu_ids_;  // uuid -> row id cache
  struct Statements;
  std::unique_ptr<Statements> st_;
};

// The SQL schema steps: entry k migrates version k to k+1 (exposed for the migration test).
std::span<const char* const> schema_migrations();

}  // namespace gw::store
