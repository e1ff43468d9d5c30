#include "cli/output_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
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

Result<AtomicFile> AtomicFile::create(const std::string& path, bool overwrite) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return make_error("output.is_directory", "is a directory; give a file name", path);
    if (!overwrite)
      return make_error("output.exists", "already exists; give --force to replace it", path);
  }
  std::string tmpl = path + ".tmp-XXXXXX";
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return io_error(path, "cannot create a temporary file beside it", errno);
  (void)::fchmod(fd, 0644);  // mkstemp makes 0600; a report or capture is meant to be shared
  return AtomicFile(path, tmpl, fd, overwrite);
}

AtomicFile::AtomicFile(AtomicFile&& o) noexcept
    : path_(std::move(o.path_)),
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
  if (::fsync(fd_) != 0) return io_error(path_, "write failed (fsync)", errno);
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) return io_error(path_, "write failed (close)", errno);
  // Without --force, link() fails if the target appeared meanwhile; rename() would replace it.
  if (!overwrite_) {
    if (::link(temp_.c_str(), path_.c_str()) != 0) {
      if (errno == EEXIST)
        return make_error("output.exists", "already exists; give --force to replace it", path_);
      if (::rename(temp_.c_str(), path_.c_str()) != 0)
        return io_error(path_, "cannot rename the temporary file", errno);
    } else {
      ::unlink(temp_.c_str());
    }
  } else if (::rename(temp_.c_str(), path_.c_str()) != 0) {
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
