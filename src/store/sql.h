// A thin RAII layer over sqlite3 prepared statements, internal to the store.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace gw::store::sql {

class Stmt {
 public:
  Stmt() = default;
  Stmt(sqlite3* db, std::string_view text) : db_(db) {
    rc_ = sqlite3_prepare_v3(db, text.data(), static_cast<int>(text.size()),
                             SQLITE_PREPARE_PERSISTENT, &s_, nullptr);
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  Stmt(Stmt&& o) noexcept : db_(o.db_), s_(o.s_), rc_(o.rc_) { o.s_ = nullptr; }
  Stmt& operator=(Stmt&& o) noexcept {
    std::swap(db_, o.db_);
    std::swap(s_, o.s_);
    std::swap(rc_, o.rc_);
    return *this;
  }

  bool ok() const { return s_ != nullptr && rc_ == SQLITE_OK; }
  Stmt& reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
    return *this;
  }
  Stmt& bind(int i, int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Stmt& bind(int i, double v) {
    sqlite3_bind_double(s_, i, v);
    return *this;
  }
  Stmt& bind(int i, std::string_view v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  template <class T>
  Stmt& bind(int i, const std::optional<T>& v) {
    if (v) return bind(i, *v);
    sqlite3_bind_null(s_, i);
    return *this;
  }
  Stmt& bind_null(int i) {
    sqlite3_bind_null(s_, i);
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(s_); }
  int64_t i64(int c) const { return sqlite3_column_int64(s_, c); }
  double dbl(int c) const { return sqlite3_column_double(s_, c); }
  bool null(int c) const { return sqlite3_column_type(s_, c) == SQLITE_NULL; }
  std::optional<int64_t> opt_i64(int c) const {
    return null(c) ? std::nullopt : std::optional<int64_t>(i64(c));
  }
  std::string text(int c) const {
    const auto* p = sqlite3_column_text(s_, c);
    return p != nullptr ? std::string(reinterpret_cast<const char*>(p)) : std::string();
  }
  sqlite3_stmt* raw() { return s_; }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* s_ = nullptr;
  int rc_ = SQLITE_ERROR;
};

inline Error error(sqlite3* db, const std::string& what, const std::string& path) {
  std::string msg = what + ": " + (db != nullptr ? sqlite3_errmsg(db) : "no database");
  const int code = db != nullptr ? sqlite3_extended_errcode(db) : SQLITE_ERROR;
  const int primary = code & 0xff;
  std::string c = primary == SQLITE_FULL       ? "store.full"
                  : primary == SQLITE_READONLY ? "store.read_only"
                  : primary == SQLITE_IOERR    ? "store.io"
                  : primary == SQLITE_CORRUPT  ? "store.corrupt"
                                               : "store.error";
  return make_error(std::move(c), std::move(msg), path);
}

}  // namespace gw::store::sql
