#include "serve/event_sources.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "sources/kmsg/kernel_log.h"

namespace gw::serve {
namespace {

constexpr size_t kTailBytes = 128;

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

namespace {

// What may be followed: /dev/kmsg, a regular file, a FIFO somebody writes to. A directory, any
// other device and a FIFO with no writer would be "followed" while nothing ever arrives.
Status check_followable(const std::string& path, int fd, bool is_kmsg) {
  struct stat st {};
  if (::fstat(fd, &st) != 0)
    return make_error("kmsg.unreadable", std::string("cannot stat: ") + std::strerror(errno), path);
  const char* what = S_ISDIR(st.st_mode)               ? "a directory"
                     : S_ISBLK(st.st_mode)             ? "a block device"
                     : S_ISSOCK(st.st_mode)            ? "a socket"
                     : S_ISCHR(st.st_mode) && !is_kmsg ? "a character device other than /dev/kmsg"
                                                       : nullptr;
  if (what != nullptr)
    return make_error("kmsg.not_followable",
                      std::string("is ") + what +
                          ": nothing to follow (give /dev/kmsg or a log "
                          "file that grows)",
                      path);
  return {};
}

}  // namespace

Result<std::unique_ptr<KernelLogFollower>> KernelLogFollower::start(const std::string& path,
                                                                    EventCallback sink) {
  std::unique_ptr<KernelLogFollower> f(new KernelLogFollower());
  f->path_ = path;
  f->sink_ = std::move(sink);
  f->is_kmsg_ = path == "/dev/kmsg";
  f->fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (f->fd_ < 0)
    return make_error("kmsg.unreadable",
                      std::string("cannot follow the kernel log: ") + std::strerror(errno) +
                          (f->is_kmsg_ ? " (reading /dev/kmsg needs root, CAP_SYSLOG or "
                                         "kernel.dmesg_restrict=0; see docs/serve.md)"
                                       : ""),
                      path);
  if (Status st = check_followable(path, f->fd_, f->is_kmsg_); !st) return st.error();
  struct stat st {};
  (void)::fstat(f->fd_, &st);
  f->is_stream_ = S_ISFIFO(st.st_mode);
  if (f->is_stream_) {
    // Non-blocking read: 0 means no writer has the FIFO open; a byte read is kept.
    char c = 0;
    const ssize_t r = ::read(f->fd_, &c, 1);
    if (r == 0)
      return make_error("kmsg.not_followable",
                        "is a FIFO nobody writes to: nothing would ever arrive", path);
    if (r == 1) f->first_.assign(1, c);
  }
  f->dev_ = st.st_dev;
  f->ino_ = st.st_ino;
  // Only new lines: what happened before the daemon started is `doctor`'s to report.
  const off_t end = f->is_stream_ ? 0 : ::lseek(f->fd_, 0, SEEK_END);
  f->offset_ = end > 0 ? static_cast<uint64_t>(end) : 0;
  if (f->offset_ > 0) {
    const uint64_t from = f->offset_ - std::min<uint64_t>(f->offset_, kTailBytes);
    f->tail_.resize(f->offset_ - from);
    const ssize_t n = ::pread(f->fd_, f->tail_.data(), f->tail_.size(), static_cast<off_t>(from));
    f->tail_.resize(n > 0 ? static_cast<size_t>(n) : 0);
  }
  f->thread_ = std::thread([p = f.get()] { p->run(); });
  return f;
}

KernelLogFollower::~KernelLogFollower() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) ::close(fd_);
}

void KernelLogFollower::handle_text(std::string& pending, std::string_view chunk) {
  pending.append(chunk);
  size_t start = 0;
  for (size_t nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n', start)) {
    std::string_view line(pending.data() + start, nl - start);
    start = nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // /dev/kmsg continuation lines (" SUBSYSTEM=pci") carry no message.
    if (line.empty() || line.front() == ' ') continue;
    const uint64_t n = ++lines_;
    Error err;
    auto ev = parse_kernel_log_line(line, path_, static_cast<size_t>(n), &err);
    // A fault report's header came lines before its RIP line: the recent lines are kept.
    if (!ev) ev = parse_fault_line(line, recent_, path_, static_cast<size_t>(n));
    if (ev) {
      if (!ev->time_ms) ev->time_ms = wall_ms();
      sink_(std::move(*ev));
    }
    recent_.append(line).push_back('\n');
    if (recent_.size() > kRecentBytes) recent_.erase(0, recent_.size() - kRecentBytes / 2);
  }
  pending.erase(0, start);
  // A runaway line without a newline must not grow without bound.
  if (pending.size() > 64 * 1024) pending.clear();
}

// Hands a chunk read at offset_ on, and remembers where reading stands.
void KernelLogFollower::consume(std::string& pending, std::string_view chunk) {
  offset_ += chunk.size();
  tail_.append(chunk);
  if (tail_.size() > kTailBytes) tail_.erase(0, tail_.size() - kTailBytes);
  handle_text(pending, chunk);
}

// copytruncate cut the file: it is now shorter than what was read, or (when the writer has
// already written past the old size between two polls) the bytes before offset_ changed.
bool KernelLogFollower::truncated_since_last_read() {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) return false;
  if (static_cast<uint64_t>(st.st_size) < offset_) return true;
  if (tail_.empty()) return false;
  std::string now(tail_.size(), '\0');
  const ssize_t n =
      ::pread(fd_, now.data(), now.size(), static_cast<off_t>(offset_ - tail_.size()));
  return n != static_cast<ssize_t>(now.size()) || now != tail_;
}

// Lines the writer appended after the last read but before the cut went into the copy
// (kern.log.1, kern.log-20261202, ...): the sibling whose bytes before offset_ match what was
// read last holds them. Without such a copy they are gone, as they are for `tail -F`.
void KernelLogFollower::recover_from_copy(std::string& pending) {
  namespace fs = std::filesystem;
  const fs::path self(path_);
  const std::string stem = self.filename().string();
  std::error_code ec;
  for (const auto& entry :
       fs::directory_iterator(self.parent_path().empty() ? "." : self.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name == stem || name.rfind(stem, 0) != 0 || !entry.is_regular_file(ec)) continue;
    if (entry.file_size(ec) < offset_ || ec) continue;
    const int fd = ::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    std::string buf(tail_.size(), '\0');
    const ssize_t n =
        ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(offset_ - tail_.size()));
    if (n == static_cast<ssize_t>(buf.size()) && buf == tail_) {
      buf.assign(16 * 1024, '\0');
      for (ssize_t r; (r = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(offset_))) > 0;)
        consume(pending, std::string_view(buf.data(), static_cast<size_t>(r)));
      ::close(fd);
      if (!pending.empty()) handle_text(pending, "\n");
      return;
    }
    ::close(fd);
  }
}

// Like `tail -F`: once the open file is read to its end, a path that now names another
// file (logrotate's rename + create) is reopened from its top; the old one was read to its
// end first, so no line is lost or read twice. (copytruncate: see truncated_since_last_read.)
bool KernelLogFollower::reopen_if_rotated(std::string& pending) {
  struct stat now {};
  if (::stat(path_.c_str(), &now) != 0) return false;  // between rename and create: keep going
  if (now.st_dev == dev_ && now.st_ino == ino_) return false;
  const int fd = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  // What the writer appended to the old file since our last read still belongs to the log.
  std::string buf(16 * 1024, '\0');
  for (ssize_t n; (n = ::pread(fd_, buf.data(), buf.size(), static_cast<off_t>(offset_))) > 0;)
    consume(pending, std::string_view(buf.data(), static_cast<size_t>(n)));
  ::close(fd_);
  fd_ = fd;
  dev_ = now.st_dev;
  ino_ = now.st_ino;
  offset_ = 0;
  tail_.clear();
  if (!pending.empty()) handle_text(pending, "\n");  // the old file's last, unterminated line
  return true;
}

void KernelLogFollower::run_stream(std::string& pending, std::string& buf) {
  pollfd p{fd_, POLLIN, 0};
  if (::poll(&p, 1, 200) <= 0) return;
  const ssize_t n = ::read(fd_, buf.data(), buf.size());
  if (n > 0) {
    std::string rec(buf.data(), static_cast<size_t>(n));
    // /dev/kmsg gives one record per read; a FIFO gives bytes, lines are joined as they come.
    if (is_kmsg_ && rec.back() != '\n') rec.push_back('\n');
    handle_text(pending, rec);
  } else if (n == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // FIFO writer gone: wait
  }
}

void KernelLogFollower::run() {
  std::string pending = std::move(first_);
  std::string buf(16 * 1024, '\0');
  while (!stop_.load()) {
    if (is_kmsg_ || is_stream_) {
      run_stream(pending, buf);
      continue;
    }
    if (truncated_since_last_read()) {
      recover_from_copy(pending);
      offset_ = 0;  // the file starts again at its top
      tail_.clear();
      pending.clear();
    }
    const ssize_t n = ::pread(fd_, buf.data(), buf.size(), static_cast<off_t>(offset_));
    if (n > 0) {
      consume(pending, std::string_view(buf.data(), static_cast<size_t>(n)));
      continue;  // more may be waiting
    }
    if (reopen_if_rotated(pending)) continue;
    // A regular file never polls "not ready": check for growth every 20 ms.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace gw::serve
