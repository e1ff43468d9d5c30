// libsqlite3, opened with dlopen when the process first opens a database. Linked, it cost
// every command ~0.5 ms of start-up (Debian builds it with BIND_NOW: ~1,600 symbol lookups),
// doctor's and status's included, which never open one. <sqlite3.h> still gives the types and
// constants, and the project calls sqlite3_* as before: sqlite_library.cpp defines each of
// those functions, forwarding to the library's own. One copy of SQLite in the process: the HTTP
// plugin's store and queue forward to the same library (two copies would release each other's
// POSIX locks on one database file).
#pragma once

#include "core/result.h"

namespace gw::store {

// Loaded on the first call (thread-safe), never closed. The error (store.sqlite_not_found)
// says what could not be loaded; a database is opened only after this succeeds, and until then
// every forwarded function returns SQLITE_MISUSE, a null pointer or nothing.
Status sqlite_library();

}  // namespace gw::store
