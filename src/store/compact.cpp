// Retention, rollups and the size bound; history queries over raw and rolled-up rows.
#include <sqlite3.h>

#include <algorithm>
#include <charconv>

#include "store/metrics.h"
#include "store/sql.h"
#include "store/store.h"

namespace gw::store {
namespace {

constexpr int64_t kMinute = 60'000;

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
  for (int round = 0; round < 20 && file_bytes() > opts_.max_bytes; ++round) {
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

// One bounded page of history: rows stream out of SQLite in (GPU, time) order and are folded
// into buckets of `step_ms` as they come, so a request costs memory in proportion to the page
// it returns, never to the history it covers.
namespace {

// Folds one stored row (raw: n = 1) into the bucket point.
void fold(HistoryPoint& b, double mn, double avg, double mx, int64_t n) {
  if (b.n == 0) {
    b.min = mn;
    b.max = mx;
    b.avg = avg;
    b.n = n;
    return;
  }
  b.min = std::min(b.min, mn);
  b.max = std::max(b.max, mx);
  b.avg = (b.avg * static_cast<double>(b.n) + avg * static_cast<double>(n)) /
          static_cast<double>(b.n + n);
  b.n += n;
}

}  // namespace

Result<HistoryCursor> parse_history_cursor(std::string_view text) {
  const size_t colon = text.find(':');
  HistoryCursor c;
  auto num = [](std::string_view s, auto& out) {
    return !s.empty() &&
           std::from_chars(s.data(), s.data() + s.size(), out).ptr == s.data() + s.size();
  };
  if (colon == std::string_view::npos || !num(text.substr(0, colon), c.gpu) ||
      !num(text.substr(colon + 1), c.t_ms))
    return make_error("history.bad_cursor",
                      "bad cursor \"" + std::string(text) + "\" (pass back the `next` of a page)");
  return c;
}

std::string format_history_cursor(const HistoryCursor& c) {
  return std::to_string(c.gpu) + ":" + std::to_string(c.t_ms);
}

int64_t history_step_ms(int64_t from_ms, int64_t to_ms, size_t max_points) {
  const int64_t range = std::max<int64_t>(to_ms - from_ms, 1);
  const int64_t per = static_cast<int64_t>(std::max<size_t>(max_points, 1));
  // floor + 1: even the bucket of t == to_ms stays inside max_points.
  return range / per + 1;
}

namespace {

// Folds the rows of one statement (gpu_index, uuid, t, min, avg, max, n; ordered by time)
// into `page`; false when the page is full (page.next set).
// `id` is the store's row id of the GPU every row of `s` belongs to (one index can name two
// GPUs over time, after a swap), `cur_id` the one `cur` belongs to.
bool fold_rows(sql::Stmt& s, bool rollups, int64_t id, int64_t from_ms, size_t max_points,
               HistoryPoint& cur, int64_t& cur_id, HistoryPage& page) {
  while (s.step() == SQLITE_ROW) {
    const int64_t bucket = from_ms + (s.i64(2) - from_ms) / page.step_ms * page.step_ms;
    if (cur.n > 0 && (id != cur_id || bucket != cur.t_ms)) {
      page.points.push_back(std::move(cur));
      cur = HistoryPoint{};
      cur.n = 0;
      if (page.points.size() >= max_points) {
        page.next = HistoryCursor{static_cast<uint64_t>(id), bucket};
        return false;
      }
    }
    if (cur.n == 0) {
      cur_id = id;
      cur.gpu = static_cast<unsigned>(s.i64(0));
      cur.uuid = s.text(1);
      cur.t_ms = bucket;
    }
    fold(cur, s.dbl(3), s.dbl(4), s.dbl(5), s.i64(6));
    cur.rollup = cur.rollup || rollups;  // "1m" resolution: made from minute rollups
  }
  return true;
}

}  // namespace

Result<HistoryPage> Store::query_page(const HistoryQuery& q, size_t max_points,
                                      const std::optional<HistoryCursor>& after) const {
  const auto mi = metric_index(q.metric);
  if (!mi)
    return make_error("history.unknown_metric",
                      "unknown metric '" + q.metric + "'; known: " + metric_names_text());
  max_points = std::max<size_t>(max_points, 1);
  HistoryPage page;
  page.step_ms = history_step_ms(q.from_ms, q.to_ms, max_points);
  const std::string col(metric_table()[*mi].name);
  // GPU by GPU, each statement a range scan of its primary key in time order: no sort, no
  // result set in memory. Rollup minutes all lie before the GPU's first raw sample.
  sql::Stmt gpus(db_, "SELECT id,gpu_index,uuid FROM gpus ORDER BY gpu_index,id");
  sql::Stmt roll(db_,
                 "SELECT g.gpu_index,g.uuid,r.t_min*60000,r.vmin,r.vavg,r.vmax,r.n FROM rollup_1m "
                 "r JOIN gpus g ON g.id=r.gpu_id WHERE r.gpu_id=?1 AND r.metric=?2 AND "
                 "r.t_min>=?3 AND r.t_min*60000<=?4 AND (r.t_min+1)*60000 <= coalesce((SELECT "
                 "min(t_ms) FROM samples WHERE gpu_id=?1), 9223372036854775807) ORDER BY r.t_min");
  sql::Stmt raw(db_, "SELECT g.gpu_index,g.uuid,s.t_ms,s." + col + ",s." + col + ",s." + col +
                         ",1 FROM samples s JOIN gpus g ON g.id=s.gpu_id WHERE s.gpu_id=?1 AND "
                         "s.t_ms>=?2 AND s.t_ms<=?3 AND s." +
                         col + " IS NOT NULL ORDER BY s.t_ms");
  HistoryPoint cur;
  cur.n = 0;
  int64_t cur_id = 0;
  bool reached = !after;  // GPUs before the cursor's were served by earlier pages
  int rc = 0;
  while ((rc = gpus.step()) == SQLITE_ROW) {
    const int64_t id = gpus.i64(0);
    reached = reached || static_cast<uint64_t>(id) == after->gpu;
    if (!reached) continue;
    const auto index = static_cast<unsigned>(gpus.i64(1));
    if (q.gpu && *q.gpu != std::to_string(index) && *q.gpu != gpus.text(2)) continue;
    int64_t from = q.from_ms;
    if (after && after->gpu == static_cast<uint64_t>(id)) from = std::max(from, after->t_ms);
    // A rollup minute that starts before `from` but ends after it is not cut: take it whole
    // only when it starts inside the range (as Store::query does).
    roll.reset().bind(1, id).bind(2, static_cast<int64_t>(*mi));
    roll.bind(3, (from + 59'999) / 60'000).bind(4, q.to_ms);
    if (!fold_rows(roll, true, id, q.from_ms, max_points, cur, cur_id, page)) return page;
    raw.reset().bind(1, id).bind(2, from).bind(3, q.to_ms);
    if (!fold_rows(raw, false, id, q.from_ms, max_points, cur, cur_id, page)) return page;
  }
  if (rc != SQLITE_DONE) return sql::error(db_, "reading history", path_);
  if (cur.n > 0) page.points.push_back(std::move(cur));
  return page;
}

}  // namespace gw::store
