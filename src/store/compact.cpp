// Retention, rollups and the size bound; history queries over raw and rolled-up rows.
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "store/metrics.h"
#include "store/sql.h"
#include "store/store.h"

namespace gw::store {
namespace {

constexpr int64_t kMinute = 60'000;

uint64_t db_bytes(const std::string& p) {
  std::error_code ec;
  uint64_t n = 0;
  for (const char* suffix : {"", "-wal"}) {
    const auto s = std::filesystem::file_size(p + suffix, ec);
    if (!ec) n += s;
  }
  return n;
}

std::optional<int64_t> meta_i64(sqlite3* db, const char* key) {
  sql::Stmt s(db, "SELECT value FROM meta WHERE key=?");
  s.bind(1, std::string_view(key));
  if (s.step() != SQLITE_ROW) return std::nullopt;
  return std::stoll(s.text(0));
}

}  // namespace

Status Store::rollup(int64_t until_ms) {
  const int64_t end = until_ms / kMinute * kMinute;  // only complete minutes
  std::optional<int64_t> start = meta_i64(db_, "rolled_until_ms");
  if (!start) {
    sql::Stmt s(db_, "SELECT min(t_ms) FROM samples");
    if (s.step() != SQLITE_ROW || s.null(0)) return {};
    start = s.i64(0) / kMinute * kMinute;
  }
  if (*start >= end) return {};
  std::string q = "SELECT gpu_id, t_ms/60000";
  for (const MetricDef& m : metric_table()) {
    const std::string c(m.name);
    q += ",count(" + c + "),min(" + c + "),avg(" + c + "),max(" + c + ")";
  }
  q += " FROM samples WHERE t_ms>=? AND t_ms<? GROUP BY gpu_id, t_ms/60000";
  if (auto s = exec("BEGIN"); !s) return s;
  sql::Stmt sel(db_, q);
  sql::Stmt ins(db_,
                "INSERT OR REPLACE INTO rollup_1m(gpu_id,metric,t_min,n,vmin,vavg,vmax) "
                "VALUES(?,?,?,?,?,?,?)");
  sel.bind(1, *start).bind(2, end);
  int rc = 0;
  while ((rc = sel.step()) == SQLITE_ROW) {
    const auto metrics = metric_table();
    for (size_t k = 0; k < metrics.size(); ++k) {
      const int c = 2 + static_cast<int>(k) * 4;
      if (sel.i64(c) == 0) continue;
      ins.reset()
          .bind(1, sel.i64(0))
          .bind(2, static_cast<int64_t>(k))
          .bind(3, sel.i64(1))
          .bind(4, sel.i64(c))
          .bind(5, sel.dbl(c + 1))
          .bind(6, sel.dbl(c + 2))
          .bind(7, sel.dbl(c + 3));
      if (ins.step() != SQLITE_DONE) {
        Error e = sql::error(db_, "writing rollups", path_);
        (void)exec("ROLLBACK");
        return e;
      }
    }
  }
  if (rc != SQLITE_DONE) {
    Error e = sql::error(db_, "rolling samples up", path_);
    (void)exec("ROLLBACK");
    return e;
  }
  sql::Stmt meta(db_, "INSERT OR REPLACE INTO meta(key,value) VALUES('rolled_until_ms',?)");
  meta.bind(1, std::to_string(end));
  if (meta.step() != SQLITE_DONE) {
    Error e = sql::error(db_, "writing the rollup mark", path_);
    (void)exec("ROLLBACK");
    return e;
  }
  return exec("COMMIT");
}

Status Store::enforce_size() {
  // Oldest first: raw rows (already rolled up), then rollups, events and finished findings.
  for (int round = 0; round < 20 && db_bytes(path_) > opts_.max_bytes; ++round) {
    bool deleted = false;
    for (const char* q :
         {"DELETE FROM samples WHERE t_ms <= (SELECT t_ms FROM samples ORDER BY t_ms LIMIT 1 "
          "OFFSET (SELECT count(*)/8 FROM samples))",
          "DELETE FROM rollup_1m WHERE t_min <= (SELECT t_min FROM rollup_1m ORDER BY t_min "
          "LIMIT 1 OFFSET (SELECT count(*)/8 FROM rollup_1m))",
          "DELETE FROM events WHERE t_ms <= (SELECT t_ms FROM events ORDER BY t_ms LIMIT 1 "
          "OFFSET (SELECT count(*)/8 FROM events))"}) {
      if (auto s = exec(q); !s) return s;
      if (sqlite3_changes(db_) > 0) {
        deleted = true;
        break;
      }
    }
    (void)exec("PRAGMA incremental_vacuum");
    (void)exec("PRAGMA wal_checkpoint(TRUNCATE)");
    if (!deleted) break;
  }
  return {};
}

Status Store::compact(int64_t now_ms) {
  if (!st_) return make_error("store.read_only", "the database was opened read-only", path_);
  if (auto s = rollup(now_ms); !s) return s;
  const int64_t raw_cut = now_ms - opts_.raw_retention_ms;
  const int64_t long_cut = now_ms - opts_.rollup_retention_ms;
  sql::Stmt a(db_, "DELETE FROM samples WHERE t_ms < ?");
  a.bind(1, raw_cut);
  sql::Stmt b(db_, "DELETE FROM rollup_1m WHERE t_min < ?");
  b.bind(1, long_cut / kMinute);
  sql::Stmt c(db_, "DELETE FROM events WHERE t_ms < ?");
  c.bind(1, long_cut);
  sql::Stmt d(db_, "DELETE FROM findings WHERE cleared_ms IS NOT NULL AND cleared_ms < ?");
  d.bind(1, long_cut);
  sql::Stmt e(db_, "DELETE FROM alert_transitions WHERE t_ms < ?");
  e.bind(1, long_cut);
  for (sql::Stmt* s : {&a, &b, &c, &d, &e})
    if (s->step() != SQLITE_DONE) return sql::error(db_, "dropping old history", path_);
  (void)exec("PRAGMA incremental_vacuum");
  // Keep the WAL from growing between the automatic checkpoints.
  (void)exec("PRAGMA wal_checkpoint(PASSIVE)");
  return enforce_size();
}

Result<std::vector<HistoryPoint>> Store::query(const HistoryQuery& q) const {
  const auto mi = metric_index(q.metric);
  if (!mi)
    return make_error("history.unknown_metric",
                      "unknown metric '" + q.metric + "'; known: " + metric_names_text());
  std::string gpu_where;
  std::optional<int64_t> gpu_index;
  if (q.gpu) {
    const bool digits = !q.gpu->empty() && std::all_of(q.gpu->begin(), q.gpu->end(), [](char ch) {
      return ch >= '0' && ch <= '9';
    });
    if (digits && q.gpu->size() < 6) {
      gpu_index = std::stoll(*q.gpu);
      gpu_where = " AND g.gpu_index=?4";
    } else {
      gpu_where = " AND g.uuid=?4";
    }
  }
  const std::string col(metric_table()[*mi].name);
  sql::Stmt raw(db_, "SELECT g.gpu_index,g.uuid,s.t_ms,s." + col +
                         " FROM samples s JOIN gpus g ON g.id=s.gpu_id WHERE s.t_ms>=?1 AND "
                         "s.t_ms<=?2 AND s." +
                         col + " IS NOT NULL AND ?3=?3" + gpu_where);
  // A minute that still has raw samples comes from them only: its rollup would show the
  // same minute twice (the first minute of the raw range is usually partial).
  sql::Stmt roll(
      db_,
      "SELECT g.gpu_index,g.uuid,r.t_min*60000,r.vmin,r.vavg,r.vmax,r.n FROM rollup_1m r "
      "JOIN gpus g ON g.id=r.gpu_id WHERE r.metric=?3 AND r.t_min*60000>=?1 AND "
      "r.t_min*60000<=?2 AND (r.t_min+1)*60000 <= coalesce((SELECT min(t_ms) FROM samples "
      "WHERE gpu_id=r.gpu_id), 9223372036854775807)" +
          gpu_where);
  std::vector<HistoryPoint> out;
  for (sql::Stmt* s : {&roll, &raw}) {
    s->bind(1, q.from_ms).bind(2, q.to_ms).bind(3, static_cast<int64_t>(*mi));
    if (q.gpu) {
      if (gpu_index)
        s->bind(4, *gpu_index);
      else
        s->bind(4, *q.gpu);
    }
    int rc = 0;
    while ((rc = s->step()) == SQLITE_ROW) {
      HistoryPoint p;
      p.gpu = static_cast<unsigned>(s->i64(0));
      p.uuid = s->text(1);
      p.t_ms = s->i64(2);
      if (s == &raw) {
        p.min = p.avg = p.max = s->dbl(3);
      } else {
        p.min = s->dbl(3);
        p.avg = s->dbl(4);
        p.max = s->dbl(5);
        p.n = s->i64(6);
        p.rollup = true;
      }
      out.push_back(std::move(p));
    }
    if (rc != SQLITE_DONE) return sql::error(db_, "reading history", path_);
  }
  std::sort(out.begin(), out.end(), [](const HistoryPoint& a, const HistoryPoint& b) {
    return a.gpu != b.gpu ? a.gpu < b.gpu : a.t_ms < b.t_ms;
  });
  return out;
}

}  // namespace gw::store
