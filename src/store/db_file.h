// The history database as a file: what may be opened as one, who owns it, who writes it.
// Kept apart from the SQL so the rules read in one place.
#pragma once

#include <sys/types.h>

#include <string>

#include "core/result.h"

namespace gw::store {

// Refuses a path that names something other than a regular file (a directory, a device, a
// FIFO, a socket): SQLite would hang on a FIFO and write through a device. A missing path is
// fine (the writer creates it). Code store.not_a_file.
Status check_db_path(const std::string& path);

// The writer's hold on the database: the parent folders created with `dir_mode`, the file
// created with `file_mode` (SQLite gives its -wal and -shm the same mode), and an exclusive
// flock(2) held as long as this object lives, so a second daemon is refused (store.locked)
// while readers (`gpuwarden history`) still open the file read-only alongside.
class DbLock {
 public:
  static Result<DbLock> acquire(const std::string& path, mode_t file_mode, mode_t dir_mode);
  DbLock(DbLock&& o) noexcept;
  DbLock& operator=(DbLock&& o) noexcept;
  DbLock(const DbLock&) = delete;
  DbLock& operator=(const DbLock&) = delete;
  ~DbLock();

 private:
  explicit DbLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace gw::store
