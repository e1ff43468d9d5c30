// The queue database: one row per job (indexed columns plus the record as JSON, so adding a
// field needs no migration) and one row per drained GPU.
#include "queue/db.h"

#include <sqlite3.h>

#include <algorithm>

#include "store/sql.h"
#include "store/sqlite_library.h"

namespace gw::queue {
namespace sql = gw::store::sql;

namespace {

constexpr const char* kSchema = R"sql(
PRAGMA journal_mode=WAL;
PRAGMA synchronous=FULL;
CREATE TABLE IF NOT EXISTS jobs(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  state TEXT NOT NULL,
  uid INTEGER NOT NULL,
  doc TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);
CREATE TABLE IF NOT EXISTS drains(
  gpu INTEGER PRIMARY KEY,
  reason TEXT NOT NULL,
  by TEXT NOT NULL,
  automatic INTEGER NOT NULL,
  code TEXT NOT NULL,
  since_ms INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS usage(
  account TEXT PRIMARY KEY,
  gpu_ms REAL NOT NULL,
  as_of_ms INTEGER NOT NULL);
)sql";

}  // namespace

QueueDb::~QueueDb() {
  sqlite3_close(db_);
}

Status QueueDb::exec(const char* text) const {
  char* msg = nullptr;
  if (sqlite3_exec(db_, text, nullptr, nullptr, &msg) != SQLITE_OK) {
    std::string m = msg != nullptr ? msg : "unknown";
    sqlite3_free(msg);
    return make_error("queue.db", m, path_);
  }
  return {};
}

Result<std::unique_ptr<QueueDb>> QueueDb::open(const std::string& path) {
  std::unique_ptr<QueueDb> q(new QueueDb());
  q->path_ = path;
  if (Status s = store::sqlite_library(); !s) return s.error();
  if (sqlite3_open_v2(path.c_str(), &q->db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK)
    return sql::error(q->db_, "opening the queue database", path);
  sqlite3_busy_timeout(q->db_, 5000);
  if (Status s = q->exec(kSchema); !s) return s.error();
  if (Status s = q->load(); !s) return s.error();
  return q;
}

Status QueueDb::begin() {
  return exec("BEGIN IMMEDIATE");
}
Status QueueDb::commit() {
  return exec("COMMIT");
}

// The caches are filled once; from then on every write updates them after it succeeded.
Status QueueDb::load() {
  auto active = select("state IN ('pending','held','running') AND ?1=?1 ORDER BY id", 0);
  if (!active) return active.error();
  for (JobRecord& j : *active) active_.emplace(j.id, std::move(j));
  sql::Stmt d(db_, "SELECT gpu,reason,by,automatic,code,since_ms FROM drains ORDER BY gpu");
  int rc = 0;
  while ((rc = d.step()) == SQLITE_ROW)
    drains_.push_back({static_cast<unsigned>(d.i64(0)), d.text(1), d.text(2), d.i64(3) != 0,
                       d.text(4), d.i64(5)});
  if (rc != SQLITE_DONE) return sql::error(db_, "reading drains", path_);
  sql::Stmt u(db_, "SELECT account,gpu_ms,as_of_ms FROM usage ORDER BY account");
  while ((rc = u.step()) == SQLITE_ROW) usage_.push_back({u.text(0), u.dbl(1), u.i64(2)});
  if (rc != SQLITE_DONE) return sql::error(db_, "reading fair-share usage", path_);
  return {};
}

void QueueDb::remember(const JobRecord& j) {
  if (is_final(j.state))
    active_.erase(j.id);
  else
    active_[j.id] = j;
}

Status QueueDb::insert(std::vector<JobRecord>& jobs) {
  if (Status s = begin(); !s) return s;
  sql::Stmt ins(db_, "INSERT INTO jobs(state,uid,doc) VALUES(?,?,'{}')");
  for (JobRecord& j : jobs) {
    ins.reset().bind(1, state_name(j.state)).bind(2, static_cast<int64_t>(j.uid));
    if (ins.step() != SQLITE_DONE) {
      (void)exec("ROLLBACK");
      return sql::error(db_, "adding a job", path_);
    }
    j.id = sqlite3_last_insert_rowid(db_);
    if (Status s = write_doc(j); !s) {
      (void)exec("ROLLBACK");
      return s;
    }
  }
  if (Status s = commit(); !s) return s;
  for (const JobRecord& j : jobs) remember(j);
  return {};
}

Status QueueDb::write_doc(const JobRecord& j) {
  sql::Stmt up(db_, "UPDATE jobs SET state=?, doc=? WHERE id=?");
  up.bind(1, state_name(j.state)).bind(2, to_json(j, true).dump()).bind(3, j.id);
  if (up.step() != SQLITE_DONE) return sql::error(db_, "updating a job", path_);
  return {};
}

Status QueueDb::update(const JobRecord& j) {
  if (Status s = write_doc(j); !s) return s;
  remember(j);
  return {};
}

Result<std::vector<JobRecord>> QueueDb::select(const std::string& where, int64_t arg) const {
  sql::Stmt s(db_, "SELECT doc FROM jobs WHERE " + where);
  s.bind(1, arg);
  std::vector<JobRecord> out;
  int rc = 0;
  while ((rc = s.step()) == SQLITE_ROW) {
    try {
      out.push_back(job_from_json(nlohmann::json::parse(s.text(0))));
    } catch (const nlohmann::json::exception& e) {
      return make_error("queue.db", std::string("unreadable job record: ") + e.what(), path_);
    }
  }
  if (rc != SQLITE_DONE) return sql::error(db_, "reading jobs", path_);
  return out;
}

Result<std::optional<JobRecord>> QueueDb::get(int64_t id) const {
  if (const auto it = active_.find(id); it != active_.end()) return std::optional(it->second);
  auto v = select("id=?1", id);
  if (!v) return v.error();
  if (v->empty()) return std::optional<JobRecord>();
  return std::optional<JobRecord>(std::move(v->front()));
}

Result<std::vector<JobRecord>> QueueDb::active() const {
  std::vector<JobRecord> out;
  out.reserve(active_.size());
  for (const auto& [id, j] : active_) out.push_back(j);
  return out;
}

Result<std::vector<JobRecord>> QueueDb::finished(size_t limit) const {
  return select("state NOT IN ('pending','held','running') ORDER BY id DESC LIMIT ?1",
                static_cast<int64_t>(limit));
}

Result<std::vector<Drain>> QueueDb::drains() const {
  return drains_;
}

Status QueueDb::set_drain(const Drain& d) {
  sql::Stmt s(db_, "INSERT OR REPLACE INTO drains VALUES(?,?,?,?,?,?)");
  s.bind(1, static_cast<int64_t>(d.gpu))
      .bind(2, d.reason)
      .bind(3, d.by)
      .bind(4, static_cast<int64_t>(d.automatic))
      .bind(5, d.code)
      .bind(6, d.since_ms);
  if (s.step() != SQLITE_DONE) return sql::error(db_, "drain", path_);
  std::erase_if(drains_, [&](const Drain& x) { return x.gpu == d.gpu; });
  drains_.insert(
      std::find_if(drains_.begin(), drains_.end(), [&](const Drain& x) { return x.gpu > d.gpu; }),
      d);
  return {};
}

Status QueueDb::clear_drain(unsigned gpu) {
  sql::Stmt s(db_, "DELETE FROM drains WHERE gpu=?");
  s.bind(1, static_cast<int64_t>(gpu));
  if (s.step() != SQLITE_DONE) return sql::error(db_, "resume", path_);
  std::erase_if(drains_, [&](const Drain& x) { return x.gpu == gpu; });
  return {};
}

Result<std::vector<Usage>> QueueDb::usage() const {
  return usage_;
}

Status QueueDb::set_usage(const Usage& u) {
  sql::Stmt s(db_, "INSERT OR REPLACE INTO usage VALUES(?,?,?)");
  s.bind(1, u.account).bind(2, u.gpu_ms).bind(3, u.as_of_ms);
  if (s.step() != SQLITE_DONE) return sql::error(db_, "recording fair-share usage", path_);
  const auto at = std::find_if(usage_.begin(), usage_.end(),
                               [&](const Usage& x) { return x.account >= u.account; });
  if (at != usage_.end() && at->account == u.account)
    *at = u;
  else
    usage_.insert(at, u);
  return {};
}

}  // namespace gw::queue
