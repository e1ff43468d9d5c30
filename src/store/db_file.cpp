#include "store/db_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

namespace gw::store {
namespace {

const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

// Creates the missing folders above `path` with `mode` (existing ones are left as they are).
Status make_parents(const std::string& path, mode_t mode) {
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) return {};
  std::filesystem::path at;
  for (const auto& part : dir) {
    at /= part;
    if (::mkdir(at.c_str(), mode) == 0) {
      ::chmod(at.c_str(), mode);  // exactly the configured mode, whatever the umask
      continue;
    }
    if (errno != EEXIST)
      return make_error(
          "store.open",
          std::string("cannot create the folder ") + at.string() + ": " + std::strerror(errno),
          path);
  }
  return {};
}

}  // namespace

Status check_db_path(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return {};
  return make_error("store.not_a_file",
                    std::string("is ") + kind_of(st.st_mode) +
                        ", not a database file; give a file path such as /var/lib/gpuwarden/"
                        "history.db",
                    path);
}

Result<DbLock> DbLock::acquire(const std::string& path, mode_t file_mode, mode_t dir_mode) {
  if (Status s = check_db_path(path); !s) return s.error();
  if (Status s = make_parents(path, dir_mode); !s) return s.error();
  // O_NOFOLLOW is not used: an operator may keep the database behind a symlink.
  const int flags = O_RDWR | O_CLOEXEC | O_NONBLOCK;
  int fd = ::open(path.c_str(), flags | O_CREAT | O_EXCL, file_mode);
  if (fd >= 0)
    ::fchmod(fd, file_mode);  // a new file gets the configured mode whatever the umask
  else if (errno == EEXIST)
    fd = ::open(path.c_str(), flags);  // an existing file keeps its mode
  if (fd < 0)
    return make_error("store.open", std::string("cannot open: ") + std::strerror(errno), path);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {  // replaced since check_db_path
    ::close(fd);
    return make_error("store.not_a_file", "is not a regular file", path);
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    ::close(fd);
    if (e == EWOULDBLOCK)
      return make_error("store.locked",
                        "another gpuwarden serve holds this database (one daemon per database; "
                        "stop it first, or give this one its own --db)",
                        path);
    return make_error("store.open", std::string("cannot lock: ") + std::strerror(e), path);
  }
  return DbLock(fd);
}

DbLock::DbLock(DbLock&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}

DbLock& DbLock::operator=(DbLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

DbLock::~DbLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace gw::store
