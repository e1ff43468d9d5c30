#include "cli/output_check.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <ostream>
#include <utility>

namespace gw::cli {
namespace {

Error io_error(const std::string& path, const char* doing, int err) {
  return make_error("output.write_failed", std::string(doing) + ": " + std::strerror(err), path);
}

}  // namespace

int finish_output(int code, std::ostream& out, std::ostream& err) {
  errno = 0;
  out.flush();
  if (out.good()) return code;
  const int e = errno;
  err << "gpuwarden: cannot write to standard output" << (e != 0 ? ": " : "")
      << (e != 0 ? std::strerror(e) : "") << "; the output is incomplete\n";
  return kWriteError;
}

namespace {

// The file a write to `path` lands in: a symbolic link is followed (its target, not the link,
// is what the user meant); a dangling one is refused rather than replaced by a file.
Result<std::string> resolve_target(const std::string& path) {
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) != 0 || !S_ISLNK(lst.st_mode)) return path;
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
  if (!real)
    return make_error("output.dangling_link",
                      "is a symbolic link to a missing file; give the target itself", path);
  return std::string(real.get());
}

// A Unix socket is written by connecting to it, as `socat - UNIX-CONNECT:` would.
int connect_unix(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  return fd;
}

// Opens a node that is written in place. A FIFO waits for its reader, as a shell's `>` does.
int open_in_place(const std::string& target, const struct stat& st) {
  if (S_ISSOCK(st.st_mode)) return connect_unix(target);
  return ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
}

}  // namespace

Result<AtomicFile> AtomicFile::create(const std::string& path, bool overwrite) {
  auto target = resolve_target(path);
  if (!target) return target.error();
  struct stat st {};
  const bool exists = ::stat(target->c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode))
    return make_error("output.is_directory", "is a directory; give a file name", path);
  if (exists && S_ISBLK(st.st_mode))
    return make_error("output.block_device", "is a block device; refusing to write a disk", path);
  if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
    const int fd = open_in_place(*target, st);
    if (fd < 0) return io_error(path, "cannot open for writing", errno);
    return AtomicFile(path, *target, "", fd, overwrite);
  }
  if (exists && !overwrite)
    return make_error("output.exists", "already exists; give --force to replace it", path);
  std::string tmpl = *target + ".tmp-XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return io_error(path, "cannot create a temporary file beside it", errno);
  // mkstemp makes 0600; a report or capture is meant to be shared, a replaced file keeps its mode.
  (void)::fchmod(fd, exists ? (st.st_mode & 07777) : 0644);
  return AtomicFile(path, *target, tmpl, fd, overwrite);
}

AtomicFile::AtomicFile(AtomicFile&& o) noexcept
    : path_(std::move(o.path_)),
      target_(std::move(o.target_)),
      temp_(std::move(o.temp_)),
      fd_(std::exchange(o.fd_, -1)),
      overwrite_(o.overwrite_),
      committed_(std::exchange(o.committed_, true)) {}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
}

Status AtomicFile::write(std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd_, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error(path_, "write failed", errno);
    }
    text.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

Status AtomicFile::commit() {
  if (in_place()) {
    committed_ = true;
    if (::close(std::exchange(fd_, -1)) != 0) return io_error(path_, "write failed (close)", errno);
    return {};
  }
  if (::fsync(fd_) != 0) return io_error(path_, "write failed (fsync)", errno);
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) return io_error(path_, "write failed (close)", errno);
  // Without --force, link() fails if the target appeared meanwhile; rename() would replace it.
  if (!overwrite_) {
    if (::link(temp_.c_str(), target_.c_str()) != 0) {
      if (errno == EEXIST)
        return make_error("output.exists", "already exists; give --force to replace it", path_);
      if (::rename(temp_.c_str(), target_.c_str()) != 0)
        return io_error(path_, "cannot rename the temporary file", errno);
    } else {
      ::unlink(temp_.c_str());
    }
  } else if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    return io_error(path_, "cannot rename the temporary file", errno);
  }
  committed_ = true;
  return {};
}

Status write_file_atomically(const std::string& path, std::string_view text, bool overwrite) {
  auto f = AtomicFile::create(path, overwrite);
  if (!f) return f.error();
  if (Status s = f->write(text); !s) return s;
  return f->commit();
}

}  // namespace gw::cli
