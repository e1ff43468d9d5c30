#include "store/sqlite_library.h"

#include <dlfcn.h>
#include <sqlite3.h>

#include <type_traits>

#include "core/dl_symbols.h"

namespace gw::store {
namespace {

struct Loaded {
  void* handle = nullptr;
  Status status;
};

Loaded open_sqlite() {
  Loaded out;
  auto h = open_library("libsqlite3.so.0", RTLD_NOW | RTLD_LOCAL, "store.sqlite_not_found",
                        "SQLite", ": the history and the job queue need it; install libsqlite3-0");
  if (h)
    out.handle = *h;
  else
    out.status = h.error();
  return out;
}

const Loaded& loaded() {
  static const Loaded l = open_sqlite();  // thread-safe: the first caller opens it
  return l;
}

}  // namespace

Status sqlite_library() {
  return loaded().status;
}

// The library's own `Self` (the function of that name defined below), looked up once; with no
// library, `fallback`: what is safe for the null handles the callers then hold.
template <auto Self, class Fallback, class... A>
auto call_real(const char* name, Fallback fallback, A... a) {
  using Fn = decltype(Self);
  // dlsym returns void*; POSIX guarantees it converts to a function pointer.
  static const Fn f =
      loaded().handle != nullptr ? reinterpret_cast<Fn>(dlsym(loaded().handle, name)) : nullptr;
  using R = decltype(f(a...));
  if constexpr (std::is_void_v<R>) {
    (void)fallback;
    if (f != nullptr) f(a...);
  } else {
    return f != nullptr ? f(a...) : static_cast<R>(fallback);
  }
}

}  // namespace gw::store

using gw::store::call_real;

// Each function the project calls, with <sqlite3.h>'s signature.
extern "C" {

int sqlite3_open_v2(const char* file, sqlite3** db, int flags, const char* vfs) {
  if (db != nullptr) *db = nullptr;  // as SQLite leaves it when it cannot open
  return call_real<&sqlite3_open_v2>("sqlite3_open_v2", SQLITE_CANTOPEN, file, db, flags, vfs);
}
int sqlite3_close(sqlite3* db) {
  return call_real<&sqlite3_close>("sqlite3_close", SQLITE_OK, db);
}
int sqlite3_close_v2(sqlite3* db) {
  return call_real<&sqlite3_close_v2>("sqlite3_close_v2", SQLITE_OK, db);
}
int sqlite3_busy_timeout(sqlite3* db, int ms) {
  return call_real<&sqlite3_busy_timeout>("sqlite3_busy_timeout", SQLITE_MISUSE, db, ms);
}
int sqlite3_exec(sqlite3* db, const char* sql, int (*cb)(void*, int, char**, char**), void* arg,
                 char** err) {
  if (err != nullptr) *err = nullptr;  // as SQLite leaves it when nothing failed
  return call_real<&sqlite3_exec>("sqlite3_exec", SQLITE_MISUSE, db, sql, cb, arg, err);
}
void sqlite3_free(void* p) {
  call_real<&sqlite3_free>("sqlite3_free", 0, p);
}
const char* sqlite3_errmsg(sqlite3* db) {
  return call_real<&sqlite3_errmsg>("sqlite3_errmsg", "SQLite is not loaded", db);
}
int sqlite3_extended_errcode(sqlite3* db) {
  return call_real<&sqlite3_extended_errcode>("sqlite3_extended_errcode", SQLITE_MISUSE, db);
}
int sqlite3_changes(sqlite3* db) {
  return call_real<&sqlite3_changes>("sqlite3_changes", 0, db);
}
sqlite3_int64 sqlite3_last_insert_rowid(sqlite3* db) {
  return call_real<&sqlite3_last_insert_rowid>("sqlite3_last_insert_rowid", 0, db);
}
int sqlite3_prepare_v2(sqlite3* db, const char* sql, int n, sqlite3_stmt** stmt,
                       const char** tail) {
  if (stmt != nullptr) *stmt = nullptr;  // as SQLite leaves it when it cannot prepare
  return call_real<&sqlite3_prepare_v2>("sqlite3_prepare_v2", SQLITE_MISUSE, db, sql, n, stmt,
                                        tail);
}
int sqlite3_prepare_v3(sqlite3* db, const char* sql, int n, unsigned int flags, sqlite3_stmt** stmt,
                       const char** tail) {
  if (stmt != nullptr) *stmt = nullptr;  // as SQLite leaves it when it cannot prepare
  return call_real<&sqlite3_prepare_v3>("sqlite3_prepare_v3", SQLITE_MISUSE, db, sql, n, flags,
                                        stmt, tail);
}
int sqlite3_step(sqlite3_stmt* s) {
  return call_real<&sqlite3_step>("sqlite3_step", SQLITE_MISUSE, s);
}
int sqlite3_reset(sqlite3_stmt* s) {
  return call_real<&sqlite3_reset>("sqlite3_reset", SQLITE_OK, s);
}
int sqlite3_finalize(sqlite3_stmt* s) {
  return call_real<&sqlite3_finalize>("sqlite3_finalize", SQLITE_OK, s);
}
int sqlite3_clear_bindings(sqlite3_stmt* s) {
  return call_real<&sqlite3_clear_bindings>("sqlite3_clear_bindings", SQLITE_OK, s);
}
int sqlite3_bind_null(sqlite3_stmt* s, int i) {
  return call_real<&sqlite3_bind_null>("sqlite3_bind_null", SQLITE_MISUSE, s, i);
}
int sqlite3_bind_int64(sqlite3_stmt* s, int i, sqlite3_int64 v) {
  return call_real<&sqlite3_bind_int64>("sqlite3_bind_int64", SQLITE_MISUSE, s, i, v);
}
int sqlite3_bind_double(sqlite3_stmt* s, int i, double v) {
  return call_real<&sqlite3_bind_double>("sqlite3_bind_double", SQLITE_MISUSE, s, i, v);
}
int sqlite3_bind_text(sqlite3_stmt* s, int i, const char* v, int n, void (*free)(void*)) {
  return call_real<&sqlite3_bind_text>("sqlite3_bind_text", SQLITE_MISUSE, s, i, v, n, free);
}
int sqlite3_column_type(sqlite3_stmt* s, int i) {
  return call_real<&sqlite3_column_type>("sqlite3_column_type", SQLITE_NULL, s, i);
}
sqlite3_int64 sqlite3_column_int64(sqlite3_stmt* s, int i) {
  return call_real<&sqlite3_column_int64>("sqlite3_column_int64", 0, s, i);
}
double sqlite3_column_double(sqlite3_stmt* s, int i) {
  return call_real<&sqlite3_column_double>("sqlite3_column_double", 0.0, s, i);
}
const unsigned char* sqlite3_column_text(sqlite3_stmt* s, int i) {
  return call_real<&sqlite3_column_text>("sqlite3_column_text", nullptr, s, i);
}

}  // extern "C"
