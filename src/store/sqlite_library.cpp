#include "store/sqlite_library.h"

#include <dlfcn.h>
#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace gw::store {
namespace {

struct Loaded {
  void* handle = nullptr;
  Status status;
};

Loaded open_sqlite() {
  static constexpr const char* kName = "libsqlite3.so.0";
  Loaded out;
  out.handle = dlopen(kName, RTLD_NOW | RTLD_LOCAL);
  if (out.handle == nullptr) {
    const char* why = dlerror();
    out.status = make_error("store.sqlite_not_found",
                            "cannot load SQLite (" + std::string(why ? why : "") +
                                "): the history and the job queue need it; install libsqlite3-0",
                            kName);
  }
  return out;
}

const Loaded& loaded() {
  static const Loaded l = open_sqlite();  // thread-safe: the first caller opens it
  return l;
}

// The library's own `name`, or nullptr when it is not loaded.
template <class Fn>
Fn real(const char* name) {
  void* h = loaded().handle;
  // dlsym returns void*; POSIX guarantees it converts to a function pointer.
  return h != nullptr ? reinterpret_cast<Fn>(dlsym(h, name)) : nullptr;
}

}  // namespace

Status sqlite_library() {
  return loaded().status;
}

}  // namespace gw::store

using gw::store::real;

// Each function the project calls, with <sqlite3.h>'s signature; the pointer is looked up once.
extern "C" {

int sqlite3_open_v2(const char* file, sqlite3** db, int flags, const char* vfs) {
  static const auto f = real<decltype(&sqlite3_open_v2)>("sqlite3_open_v2");
  if (f != nullptr) return f(file, db, flags, vfs);
  if (db != nullptr) *db = nullptr;
  return SQLITE_CANTOPEN;
}
int sqlite3_close(sqlite3* db) {
  static const auto f = real<decltype(&sqlite3_close)>("sqlite3_close");
  return f != nullptr ? f(db) : SQLITE_OK;  // nothing can be open
}
int sqlite3_close_v2(sqlite3* db) {
  static const auto f = real<decltype(&sqlite3_close_v2)>("sqlite3_close_v2");
  return f != nullptr ? f(db) : SQLITE_OK;
}
int sqlite3_busy_timeout(sqlite3* db, int ms) {
  static const auto f = real<decltype(&sqlite3_busy_timeout)>("sqlite3_busy_timeout");
  return f != nullptr ? f(db, ms) : SQLITE_MISUSE;
}
int sqlite3_exec(sqlite3* db, const char* sql, int (*cb)(void*, int, char**, char**), void* arg,
                 char** err) {
  static const auto f = real<decltype(&sqlite3_exec)>("sqlite3_exec");
  if (f != nullptr) return f(db, sql, cb, arg, err);
  if (err != nullptr) *err = nullptr;
  return SQLITE_MISUSE;
}
void sqlite3_free(void* p) {
  static const auto f = real<decltype(&sqlite3_free)>("sqlite3_free");
  if (f != nullptr) f(p);
}
const char* sqlite3_errmsg(sqlite3* db) {
  static const auto f = real<decltype(&sqlite3_errmsg)>("sqlite3_errmsg");
  return f != nullptr ? f(db) : "SQLite is not loaded";
}
int sqlite3_extended_errcode(sqlite3* db) {
  static const auto f = real<decltype(&sqlite3_extended_errcode)>("sqlite3_extended_errcode");
  return f != nullptr ? f(db) : SQLITE_MISUSE;
}
int sqlite3_changes(sqlite3* db) {
  static const auto f = real<decltype(&sqlite3_changes)>("sqlite3_changes");
  return f != nullptr ? f(db) : 0;
}
sqlite3_int64 sqlite3_last_insert_rowid(sqlite3* db) {
  static const auto f = real<decltype(&sqlite3_last_insert_rowid)>("sqlite3_last_insert_rowid");
  return f != nullptr ? f(db) : 0;
}
int sqlite3_prepare_v2(sqlite3* db, const char* sql, int n, sqlite3_stmt** stmt,
                       const char** tail) {
  static const auto f = real<decltype(&sqlite3_prepare_v2)>("sqlite3_prepare_v2");
  if (f != nullptr) return f(db, sql, n, stmt, tail);
  if (stmt != nullptr) *stmt = nullptr;
  return SQLITE_MISUSE;
}
int sqlite3_prepare_v3(sqlite3* db, const char* sql, int n, unsigned int flags, sqlite3_stmt** stmt,
                       const char** tail) {
  static const auto f = real<decltype(&sqlite3_prepare_v3)>("sqlite3_prepare_v3");
  if (f != nullptr) return f(db, sql, n, flags, stmt, tail);
  if (stmt != nullptr) *stmt = nullptr;
  return SQLITE_MISUSE;
}
int sqlite3_step(sqlite3_stmt* s) {
  static const auto f = real<decltype(&sqlite3_step)>("sqlite3_step");
  return f != nullptr ? f(s) : SQLITE_MISUSE;
}
int sqlite3_reset(sqlite3_stmt* s) {
  static const auto f = real<decltype(&sqlite3_reset)>("sqlite3_reset");
  return f != nullptr ? f(s) : SQLITE_OK;
}
int sqlite3_finalize(sqlite3_stmt* s) {
  static const auto f = real<decltype(&sqlite3_finalize)>("sqlite3_finalize");
  return f != nullptr ? f(s) : SQLITE_OK;
}
int sqlite3_clear_bindings(sqlite3_stmt* s) {
  static const auto f = real<decltype(&sqlite3_clear_bindings)>("sqlite3_clear_bindings");
  return f != nullptr ? f(s) : SQLITE_OK;
}
int sqlite3_bind_null(sqlite3_stmt* s, int i) {
  static const auto f = real<decltype(&sqlite3_bind_null)>("sqlite3_bind_null");
  return f != nullptr ? f(s, i) : SQLITE_MISUSE;
}
int sqlite3_bind_int64(sqlite3_stmt* s, int i, sqlite3_int64 v) {
  static const auto f = real<decltype(&sqlite3_bind_int64)>("sqlite3_bind_int64");
  return f != nullptr ? f(s, i, v) : SQLITE_MISUSE;
}
int sqlite3_bind_double(sqlite3_stmt* s, int i, double v) {
  static const auto f = real<decltype(&sqlite3_bind_double)>("sqlite3_bind_double");
  return f != nullptr ? f(s, i, v) : SQLITE_MISUSE;
}
int sqlite3_bind_text(sqlite3_stmt* s, int i, const char* v, int n, void (*free)(void*)) {
  static const auto f = real<decltype(&sqlite3_bind_text)>("sqlite3_bind_text");
  return f != nullptr ? f(s, i, v, n, free) : SQLITE_MISUSE;
}
int sqlite3_column_type(sqlite3_stmt* s, int i) {
  static const auto f = real<decltype(&sqlite3_column_type)>("sqlite3_column_type");
  return f != nullptr ? f(s, i) : SQLITE_NULL;
}
sqlite3_int64 sqlite3_column_int64(sqlite3_stmt* s, int i) {
  static const auto f = real<decltype(&sqlite3_column_int64)>("sqlite3_column_int64");
  return f != nullptr ? f(s, i) : 0;
}
double sqlite3_column_double(sqlite3_stmt* s, int i) {
  static const auto f = real<decltype(&sqlite3_column_double)>("sqlite3_column_double");
  return f != nullptr ? f(s, i) : 0.0;
}
const unsigned char* sqlite3_column_text(sqlite3_stmt* s, int i) {
  static const auto f = real<decltype(&sqlite3_column_text)>("sqlite3_column_text");
  return f != nullptr ? f(s, i) : nullptr;
}

}  // extern "C"
