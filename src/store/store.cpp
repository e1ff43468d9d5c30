#include "store/store.h"

#include <sqlite3.h>

#include <filesystem>
#include <system_error>

#include "store/metrics.h"
#include "store/sql.h"
#include "store/sqlite_library.h"

namespace gw::store {

struct Store::Statements {
  sql::Stmt insert_sample, insert_event, insert_finding, update_finding, insert_alert;
};

namespace {

std::string insert_sample_sql() {
  std::string cols = "gpu_id,t_ms,access", qs = "?,?,?";
  for (const MetricDef& m : metric_table()) {
    cols += ",";
    cols += m.name;
    qs += ",?";
  }
  return "INSERT OR REPLACE INTO samples(" + cols + ") VALUES(" + qs + ")";
}

std::string evidence_text(const std::vector<std::string>& ev) {
  std::string out;
  for (const std::string& e : ev) {
    if (!out.empty()) out += '\n';
    out += e;
  }
  return out;
}

std::vector<std::string> evidence_lines(const std::string& text) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p < text.size()) {
    const size_t e = text.find('\n', p);
    out.push_back(text.substr(p, e == std::string::npos ? std::string::npos : e - p));
    if (e == std::string::npos) break;
    p = e + 1;
  }
  return out;
}

Severity severity_from(const std::string& s) {
  return s == "critical"  ? Severity::kCritical
         : s == "warning" ? Severity::kWarning
                          : Severity::kInfo;
}

uint64_t file_size(const std::string& p) {
  std::error_code ec;
  uint64_t n = 0;
  for (const char* suffix : {"", "-wal"}) {
    const auto s = std::filesystem::file_size(p + suffix, ec);
    if (!ec) n += s;
  }
  return n;
}

}  // namespace

Store::~Store() {
  st_.reset();  // statements before the connection
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

Status Store::exec(const char* text) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, text, nullptr, nullptr, &err) == SQLITE_OK) return {};
  sqlite3_free(err);
  return sql::error(db_, "SQL failed", path_);
}

int Store::schema_version() const {
  sql::Stmt s(db_, "PRAGMA user_version");
  return s.ok() && s.step() == SQLITE_ROW ? static_cast<int>(s.i64(0)) : -1;
}

// A database newer than this binary, or (read-only, where nothing may migrate) older.
Status Store::check_version(int version) const {
  if (version < 0)
    return make_error("store.schema", std::string("not a SQLite database: ") + sqlite3_errmsg(db_),
                      path_);
  if (version > kSchemaVersion)
    return make_error("store.schema",
                      "the database has schema version " + std::to_string(version) +
                          ", newer than this gpuwarden understands (" +
                          std::to_string(kSchemaVersion) + "); use a newer gpuwarden",
                      path_);
  if (opts_.read_only && version < kSchemaVersion)
    return make_error("store.schema",
                      "the database has schema version " + std::to_string(version) +
                          "; run the daemon once to migrate it",
                      path_);
  return {};
}

Status Store::set_pragmas(int version) const {
  // auto_vacuum only takes effect before the first table exists.
  if (version == 0)
    if (auto s = exec("PRAGMA auto_vacuum=INCREMENTAL"); !s) return s.error();
  if (auto s = exec("PRAGMA journal_mode=WAL"); !s)
    return make_error("store.open", s.error().message, path_);
  // NORMAL in WAL: a crashed process loses nothing committed; power loss may lose the last
  // transactions, never consistency.
  (void)exec("PRAGMA synchronous=NORMAL");
  sqlite3_stmt* ps = nullptr;
  int64_t page_size = 4096;
  if (sqlite3_prepare_v2(db_, "PRAGMA page_size", -1, &ps, nullptr) == SQLITE_OK &&
      sqlite3_step(ps) == SQLITE_ROW)
    page_size = sqlite3_column_int64(ps, 0);
  sqlite3_finalize(ps);
  const uint64_t hard_cap = opts_.max_bytes + opts_.max_bytes / 4;
  const std::string cap =
      "PRAGMA max_page_count=" +
      std::to_string(std::max<uint64_t>(hard_cap / static_cast<uint64_t>(page_size), 16));
  (void)exec(cap.c_str());
  return {};
}

// One transaction per schema step, so a failed step leaves the previous version intact.
Status Store::migrate(int version) const {
  const auto steps = schema_migrations();
  for (int v = version; v < kSchemaVersion; ++v) {
    const std::string step = std::string("BEGIN;") + steps[static_cast<size_t>(v)] +
                             "PRAGMA user_version=" + std::to_string(v + 1) + ";COMMIT;";
    if (auto s = exec(step.c_str()); !s) {
      (void)exec("ROLLBACK");
      return make_error("store.schema",
                        "migrating the schema to version " + std::to_string(v + 1) +
                            " failed: " + s.error().message,
                        path_);
    }
  }
  return {};
}

Status Store::prepare_statements() {
  auto sts = std::make_unique<Statements>();
  sts->insert_sample = sql::Stmt(db_, insert_sample_sql());
  sts->insert_event = sql::Stmt(db_,
                                "INSERT INTO events(t_ms,kind,gpu_index,pci_bus_id,code,message,"
                                "origin) VALUES(?,?,?,?,?,?,?)");
  sts->insert_finding = sql::Stmt(
      db_,
      "INSERT INTO findings(code,severity,gpu_index,pci_bus_id,title,evidence,remedy,raised_ms,"
      "last_active_ms,cleared_ms) VALUES(?,?,?,?,?,?,?,?,?,?)");
  sts->update_finding = sql::Stmt(
      db_,
      "UPDATE findings SET severity=?,title=?,evidence=?,last_active_ms=?,cleared_ms=? WHERE id=?");
  sts->insert_alert = sql::Stmt(db_,
                                "INSERT INTO alert_transitions(t_ms,rule,state,severity,gpu_index,"
                                "labels,summary) VALUES(?,?,?,?,?,?,?)");
  for (sql::Stmt* s : {&sts->insert_sample, &sts->insert_event, &sts->insert_finding,
                       &sts->update_finding, &sts->insert_alert})
    if (!s->ok()) return sql::error(db_, "preparing statements", path_);
  st_ = std::move(sts);
  return {};
}

Result<std::unique_ptr<Store>> Store::open(const std::string& path, const StoreOptions& options) {
  std::unique_ptr<Store> st(new Store());
  st->path_ = path;
  st->opts_ = options;
  if (options.read_only) {
    if (Status s = check_db_path(path); !s) return s.error();
  } else {
    auto lock = DbLock::acquire(path, static_cast<mode_t>(options.file_mode),
                                static_cast<mode_t>(options.dir_mode));
    if (!lock) return lock.error();
    st->lock_.emplace(std::move(*lock));
  }
  if (Status s = sqlite_library(); !s) return s.error();
  const int flags =
      options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  if (sqlite3_open_v2(path.c_str(), &st->db_, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK)
    return make_error("store.open",
                      std::string("cannot open the history database: ") +
                          (st->db_ ? sqlite3_errmsg(st->db_) : "out of memory"),
                      path);
  sqlite3_busy_timeout(st->db_, 2000);
  const int version = st->schema_version();
  if (Status s = st->check_version(version); !s) return s.error();
  if (options.read_only) return st;
  for (auto step : {&Store::set_pragmas, &Store::migrate})
    if (Status s = (st.get()->*step)(version); !s) return s.error();
  if (Status s = st->prepare_statements(); !s) return s.error();
  return st;
}

Result<int64_t> Store::gpu_id(const DeviceInfo& info) {
  // A GPU without a UUID (it hung or was lost before its identity was read) is keyed by index.
  const std::string key = info.uuid.empty() ? "index:" + std::to_string(info.index) : info.uuid;
  for (const auto& [u, id] : gpu_ids_)
    if (u == key) return id;
  sql::Stmt up(db_,
               "INSERT INTO gpus(uuid,gpu_index,name,pci_bus_id) VALUES(?,?,?,?) "
               "ON CONFLICT(uuid) DO UPDATE SET gpu_index=excluded.gpu_index, "
               "name=excluded.name, pci_bus_id=excluded.pci_bus_id");
  up.bind(1, key).bind(2, int64_t{info.index}).bind(3, info.name).bind(4, info.pci_bus_id);
  if (up.step() != SQLITE_DONE) return sql::error(db_, "writing the GPU list", path_);
  sql::Stmt q(db_, "SELECT id FROM gpus WHERE uuid=?");
  q.bind(1, key);
  if (q.step() != SQLITE_ROW) return sql::error(db_, "reading the GPU list", path_);
  gpu_ids_.emplace_back(key, q.i64(0));
  return q.i64(0);
}

Status Store::write_samples(const Snapshot& snap) {
  for (const GpuState& g : snap.gpus) {
    auto id = gpu_id(g.info);
    if (!id) return id.error();
    sql::Stmt& s = st_->insert_sample.reset();
    s.bind(1, *id).bind(2, snap.time_ms).bind(3, static_cast<int64_t>(g.access));
    int col = 4;
    for (const MetricDef& m : metric_table()) {
      const auto v = g.access == GpuAccess::kOk ? m.get(g.sample) : std::nullopt;
      s.bind(col++, v);
    }
    if (s.step() != SQLITE_DONE) return sql::error(db_, "writing samples", path_);
  }
  return {};
}

Status Store::write_events(std::span<const Event> events, int64_t default_ms) {
  for (const Event& e : events) {
    sql::Stmt& s = st_->insert_event.reset();
    s.bind(1, e.time_ms.value_or(default_ms))
        .bind(2, event_kind_name(e.kind))
        .bind(3, e.gpu_index ? std::optional<int64_t>(*e.gpu_index) : std::nullopt)
        .bind(4, e.pci_bus_id)
        .bind(5, e.code ? std::optional<int64_t>(*e.code) : std::nullopt)
        .bind(6, e.message)
        .bind(7, e.origin);
    if (s.step() != SQLITE_DONE) return sql::error(db_, "writing events", path_);
  }
  return {};
}

// New findings are inserted (and get their id); known ones are updated in place.
Status Store::write_findings(std::span<FindingRecord> findings) {
  for (FindingRecord& f : findings) {
    const Finding& x = f.finding;
    const std::optional<int64_t> gpu = x.gpu ? std::optional<int64_t>(*x.gpu) : std::nullopt;
    if (f.id == 0) {
      sql::Stmt& s = st_->insert_finding.reset();
      s.bind(1, x.code)
          .bind(2, severity_name(x.severity))
          .bind(3, gpu)
          .bind(4, x.pci_bus_id)
          .bind(5, x.title)
          .bind(6, evidence_text(x.evidence))
          .bind(7, x.remedy)
          .bind(8, f.raised_ms)
          .bind(9, f.last_active_ms)
          .bind(10, f.cleared_ms);
      if (s.step() != SQLITE_DONE) return sql::error(db_, "writing findings", path_);
      f.id = sqlite3_last_insert_rowid(db_);
    } else {
      sql::Stmt& s = st_->update_finding.reset();
      s.bind(1, severity_name(x.severity))
          .bind(2, x.title)
          .bind(3, evidence_text(x.evidence))
          .bind(4, f.last_active_ms)
          .bind(5, f.cleared_ms)
          .bind(6, f.id);
      if (s.step() != SQLITE_DONE) return sql::error(db_, "updating findings", path_);
    }
  }
  return {};
}

Status Store::write_alerts(std::span<const AlertTransitionRecord> alerts) {
  for (const AlertTransitionRecord& a : alerts) {
    sql::Stmt& s = st_->insert_alert.reset();
    s.bind(1, a.t_ms)
        .bind(2, a.rule)
        .bind(3, a.state)
        .bind(4, a.severity)
        .bind(5, a.gpu ? std::optional<int64_t>(*a.gpu) : std::nullopt)
        .bind(6, a.labels_json)
        .bind(7, a.summary);
    if (s.step() != SQLITE_DONE) return sql::error(db_, "writing alert transitions", path_);
  }
  return {};
}

// One transaction per round: all of it or, on any fault, none of it.
Status Store::record(const Snapshot* snap, std::span<const Event> events,
                     std::span<FindingRecord> findings,
                     std::span<const AlertTransitionRecord> alerts) {
  if (!st_) return make_error("store.read_only", "the database was opened read-only", path_);
  if (auto s = exec("BEGIN"); !s) return s;
  Status st = snap != nullptr ? write_samples(*snap) : Status{};
  if (st) st = write_events(events, snap != nullptr ? snap->time_ms : 0);
  if (st) st = write_findings(findings);
  if (st) st = write_alerts(alerts);
  if (st) st = exec("COMMIT");
  if (!st) {
    (void)exec("ROLLBACK");
    gpu_ids_.clear();  // ids from the rolled-back transaction are gone
  }
  return st;
}

Result<std::vector<StoredEvent>> Store::events(int64_t from_ms, size_t limit) const {
  sql::Stmt s(db_,
              "SELECT t_ms,kind,gpu_index,pci_bus_id,code,message,origin FROM events "
              "WHERE t_ms>=? ORDER BY t_ms DESC, id DESC LIMIT ?");
  s.bind(1, from_ms).bind(2, static_cast<int64_t>(limit));
  std::vector<StoredEvent> out;
  int rc = 0;
  while ((rc = s.step()) == SQLITE_ROW) {
    StoredEvent e;
    e.t_ms = s.i64(0);
    e.event.time_ms = e.t_ms;
    const std::string kind = s.text(1);
    for (EventKind k : {EventKind::kXid, EventKind::kSXid, EventKind::kFallenOffBus,
                        EventKind::kGpuLost, EventKind::kDriverMessage})
      if (event_kind_name(k) == kind) e.event.kind = k;
    if (!s.null(2)) e.event.gpu_index = static_cast<unsigned>(s.i64(2));
    if (!s.null(3)) e.event.pci_bus_id = s.text(3);
    if (!s.null(4)) e.event.code = static_cast<unsigned>(s.i64(4));
    e.event.message = s.text(5);
    e.event.origin = s.text(6);
    out.push_back(std::move(e));
  }
  if (rc != SQLITE_DONE) return sql::error(db_, "reading events", path_);
  return out;
}

namespace {

Result<std::vector<FindingRecord>> read_findings(sqlite3* db, const std::string& path,
                                                 const std::string& where, int64_t from_ms,
                                                 size_t limit) {
  sql::Stmt s(db,
              "SELECT id,code,severity,gpu_index,pci_bus_id,title,evidence,remedy,raised_ms,"
              "last_active_ms,cleared_ms FROM findings WHERE " +
                  where + " ORDER BY raised_ms DESC, id DESC LIMIT ?");
  s.bind(1, from_ms).bind(2, static_cast<int64_t>(limit));
  std::vector<FindingRecord> out;
  int rc = 0;
  while ((rc = s.step()) == SQLITE_ROW) {
    FindingRecord f;
    f.id = s.i64(0);
    f.finding.code = s.text(1);
    f.finding.severity = severity_from(s.text(2));
    if (!s.null(3)) f.finding.gpu = static_cast<unsigned>(s.i64(3));
    if (!s.null(4)) f.finding.pci_bus_id = s.text(4);
    f.finding.title = s.text(5);
    f.finding.evidence = evidence_lines(s.text(6));
    f.finding.remedy = s.text(7);
    f.raised_ms = s.i64(8);
    f.last_active_ms = s.i64(9);
    f.cleared_ms = s.opt_i64(10);
    out.push_back(std::move(f));
  }
  if (rc != SQLITE_DONE) return sql::error(db, "reading findings", path);
  return out;
}

}  // namespace

Result<std::vector<FindingRecord>> Store::findings(int64_t from_ms, size_t limit) const {
  return read_findings(db_, path_, "raised_ms>=?1 OR cleared_ms IS NULL", from_ms, limit);
}

Result<std::vector<FindingRecord>> Store::open_findings() const {
  return read_findings(db_, path_, "cleared_ms IS NULL AND ?1=?1", 0, 100000);
}

namespace {

// Rows of "SELECT t_ms,rule,state,severity,gpu_index,labels,summary FROM alert_transitions";
// returns the last sqlite3_step code (SQLITE_DONE when every row was read).
int read_transitions(sql::Stmt& s, std::vector<AlertTransitionRecord>& out) {
  int rc = 0;
  while ((rc = s.step()) == SQLITE_ROW) {
    AlertTransitionRecord a;
    a.t_ms = s.i64(0);
    a.rule = s.text(1);
    a.state = s.text(2);
    a.severity = s.text(3);
    if (!s.null(4)) a.gpu = static_cast<unsigned>(s.i64(4));
    a.labels_json = s.text(5);
    a.summary = s.text(6);
    out.push_back(std::move(a));
  }
  return rc;
}

}  // namespace

Result<std::vector<AlertTransitionRecord>> Store::alert_transitions(int64_t from_ms,
                                                                    size_t limit) const {
  sql::Stmt s(db_,
              "SELECT t_ms,rule,state,severity,gpu_index,labels,summary FROM alert_transitions "
              "WHERE t_ms>=? ORDER BY t_ms DESC, id DESC LIMIT ?");
  s.bind(1, from_ms).bind(2, static_cast<int64_t>(limit));
  std::vector<AlertTransitionRecord> out;
  const int rc = read_transitions(s, out);
  if (rc != SQLITE_DONE) return sql::error(db_, "reading alert transitions", path_);
  return out;
}

Result<std::vector<AlertTransitionRecord>> Store::firing_alerts() const {
  // One instance is one (rule, labels): its firing and resolved records carry the same labels.
  sql::Stmt s(db_,
              "SELECT t_ms,rule,state,severity,gpu_index,labels,summary FROM alert_transitions "
              "WHERE id IN (SELECT MAX(id) FROM alert_transitions GROUP BY rule, labels) "
              "AND state='firing' ORDER BY id");
  std::vector<AlertTransitionRecord> out;
  const int rc = read_transitions(s, out);
  if (rc != SQLITE_DONE) return sql::error(db_, "reading firing alerts", path_);
  return out;
}

Result<std::vector<Store::XidCount>> Store::xid_counts() const {
  sql::Stmt s(db_,
              "SELECT gpu_index,code,COUNT(*) FROM events WHERE kind=? AND gpu_index IS NOT NULL "
              "AND code IS NOT NULL GROUP BY gpu_index,code ORDER BY gpu_index,code");
  s.bind(1, event_kind_name(EventKind::kXid));
  std::vector<XidCount> out;
  int rc = 0;
  while ((rc = s.step()) == SQLITE_ROW)
    out.push_back({static_cast<unsigned>(s.i64(0)), static_cast<unsigned>(s.i64(1)),
                   static_cast<uint64_t>(s.i64(2))});
  if (rc != SQLITE_DONE) return sql::error(db_, "counting Xid events", path_);
  return out;
}

uint64_t Store::file_bytes() const {
  return file_size(path_);
}

Result<StoreStats> Store::stats() const {
  StoreStats st;
  st.file_bytes = file_size(path_);
  auto count = [&](const char* q, int64_t& out) {
    sql::Stmt s(db_, q);
    if (s.step() == SQLITE_ROW) out = s.i64(0);
  };
  count("SELECT count(*) FROM samples", st.raw_rows);
  count("SELECT count(*) FROM rollup_1m", st.rollup_rows);
  count("SELECT count(*) FROM events", st.events);
  count("SELECT count(*) FROM findings", st.findings);
  count("SELECT count(*) FROM alert_transitions", st.alert_transitions);
  sql::Stmt s(db_, "SELECT min(t_ms), max(t_ms) FROM samples");
  if (s.step() == SQLITE_ROW) {
    st.oldest_raw_ms = s.opt_i64(0);
    st.newest_raw_ms = s.opt_i64(1);
  }
  return st;
}

}  // namespace gw::store
