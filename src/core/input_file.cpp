#include "core/input_file.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include "core/read_ahead_mapping.h"

namespace gw {
namespace {

InputKind kind_of(mode_t m) {
  if (S_ISREG(m)) return InputKind::kRegular;
  if (S_ISDIR(m)) return InputKind::kDirectory;
  if (S_ISFIFO(m)) return InputKind::kFifo;
  if (S_ISCHR(m)) return InputKind::kCharDevice;
  if (S_ISBLK(m)) return InputKind::kBlockDevice;
  if (S_ISSOCK(m)) return InputKind::kSocket;
  return InputKind::kOther;
}

std::string shown(const std::string& path) {
  return path == "-" ? std::string("standard input") : path;
}

Error errno_error(const std::string& path, int err, const char* doing) {
  if (err == ENOENT || err == ENOTDIR)
    return make_error("input.not_found", "no such file", shown(path));
  if (err == EACCES || err == EPERM)
    return make_error("input.unreadable", std::string("permission denied (") + doing + ")",
                      shown(path));
  return make_error("input.unreadable", std::string(doing) + ": " + std::strerror(err),
                    shown(path));
}

Status refuse_kind(const std::string& path, InputKind k, bool allow_directory) {
  switch (k) {
    case InputKind::kRegular:
    case InputKind::kFifo:
      return {};
    case InputKind::kDirectory:
      if (allow_directory) return {};
      return make_error("input.is_directory", "is a directory, not a file", shown(path));
    case InputKind::kMissing:
      return make_error("input.not_found", "no such file", shown(path));
    default:
      // Devices are never opened: opening some has side effects (a watchdog starts, a tape
      // rewinds), and /dev/zero or /dev/urandom never end.
      return make_error("input.special_file",
                        std::string("is ") + std::string(input_kind_name(k)) +
                            ", not a file: give a regular file, a pipe or - (standard input)",
                        shown(path));
  }
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ > STDERR_FILENO) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

int poll_ms(std::chrono::milliseconds d) {
  return static_cast<int>(std::min<int64_t>(d.count(), 1 << 30));
}

// Pipes, FIFOs and stdin: copy to memory with a byte cap; each wait is bounded.
Result<InputText> read_stream(int fd, const std::string& path, const InputLimits& limits) {
  std::string buf;
  bool any = false;
  std::array<char, 1 << 16> chunk{};
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, poll_ms(any ? limits.stall : limits.first_data));
    if (r < 0) {
      if (errno == EINTR) continue;
      return errno_error(path, errno, "waiting for data");
    }
    if (r == 0) {
      const auto s = std::to_string((any ? limits.stall : limits.first_data).count() / 1000);
      if (any)
        return make_error("input.stalled",
                          "the writer stopped sending for " + s + " s; read " +
                              std::to_string(buf.size()) + " bytes, then gave up",
                          shown(path));
      return make_error(
          "input.no_writer",
          "nothing arrived within " + s + " s (a FIFO that no process writes to, or a silent pipe)",
          shown(path));
    }
    const ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return errno_error(path, errno, "reading");
    }
    if (n == 0) break;  // every writer has closed its end
    any = true;
    if (buf.size() + static_cast<size_t>(n) > limits.max_stream_bytes)
      return make_error("input.too_large",
                        "more than " + std::to_string(limits.max_stream_bytes >> 20) +
                            " MiB from a pipe; save it to a file (files are mapped, not copied)",
                        shown(path));
    buf.append(chunk.data(), static_cast<size_t>(n));
  }
  return InputText::from_buffer(std::move(buf));
}

Result<InputText> map_file(int fd, const std::string& path, uint64_t size,
                           const InputLimits& limits, InputAccess access) {
  if (size > limits.max_file_bytes)
    return make_error("input.too_large",
                      "larger than " + std::to_string(limits.max_file_bytes >> 30) + " GiB",
                      shown(path));
  if (size == 0) return InputText::from_buffer({});
  if (access == InputAccess::kOnePass && size >= kReadAheadFromBytes)
    if (auto m = ReadAheadMapping::open(fd, size, ReadAheadMapping::Choice::kCheaper))
      return InputText::from_read_ahead(std::move(m));
  void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (m == MAP_FAILED) return errno_error(path, errno, "mapping");
  // Parsers walk the text once from the start: let the kernel read ahead and drop behind.
  (void)::madvise(m, size, MADV_SEQUENTIAL);
  return InputText::from_mapping(m, size);
}

}  // namespace

InputKind input_kind(const std::string& path) {
  struct stat st {};
  const int r = path == "-" ? ::fstat(STDIN_FILENO, &st) : ::stat(path.c_str(), &st);
  if (r != 0) return InputKind::kMissing;
  return kind_of(st.st_mode);
}

std::string_view input_kind_name(InputKind k) {
  switch (k) {
    case InputKind::kMissing:
      return "missing";
    case InputKind::kRegular:
      return "a regular file";
    case InputKind::kDirectory:
      return "a directory";
    case InputKind::kFifo:
      return "a FIFO";
    case InputKind::kCharDevice:
      return "a character device";
    case InputKind::kBlockDevice:
      return "a block device";
    case InputKind::kSocket:
      return "a socket";
    case InputKind::kOther:
      break;
  }
  return "not a regular file";
}

Status check_input_path(const std::string& path, bool allow_directory, bool allow_fifo) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno_error(path, errno, "stat");
  const InputKind k = kind_of(st.st_mode);
  if (k == InputKind::kFifo && !allow_fifo)
    return make_error("input.special_file",
                      "is a FIFO; this input is read by path: save it to a regular file",
                      shown(path));
  if (Status s = refuse_kind(path, k, allow_directory); !s) return s;
  const int mode = k == InputKind::kDirectory ? (R_OK | X_OK) : R_OK;
  // access() checks with the real uid, which is what opening will use here (no setuid).
  if (k != InputKind::kFifo && ::access(path.c_str(), mode) != 0)
    return errno_error(path, errno, "open");
  return {};
}

Result<InputText> read_input(const std::string& path, const InputLimits& limits,
                             InputAccess access) {
  struct stat st {};
  if (path == "-") {
    if (::isatty(STDIN_FILENO) == 1)
      return make_error("input.stdin_is_terminal",
                        "standard input is a terminal: pipe or redirect a file into it", "-");
    if (::fstat(STDIN_FILENO, &st) != 0) return errno_error(path, errno, "stat");
    const InputKind k = kind_of(st.st_mode);
    if (Status s = refuse_kind(path, k, false); !s) return s.error();
    if (k == InputKind::kRegular)
      return map_file(STDIN_FILENO, path, static_cast<uint64_t>(st.st_size), limits, access);
    return read_stream(STDIN_FILENO, path, limits);
  }
  if (path.empty()) return make_error("input.not_found", "empty file name", "(empty)");
  if (::stat(path.c_str(), &st) != 0) return errno_error(path, errno, "stat");
  if (Status s = refuse_kind(path, kind_of(st.st_mode), false); !s) return s.error();
  // O_NONBLOCK: opening a FIFO that has no writer returns at once instead of blocking.
  const Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) return errno_error(path, errno, "open");
  if (::fstat(fd.get(), &st) != 0) return errno_error(path, errno, "stat");
  const InputKind k = kind_of(st.st_mode);  // the path may have changed since stat
  if (Status s = refuse_kind(path, k, false); !s) return s.error();
  if (k == InputKind::kRegular)
    return map_file(fd.get(), path, static_cast<uint64_t>(st.st_size), limits, access);
  return read_stream(fd.get(), path, limits);
}

InputText::~InputText() {
  release();
}

InputText::InputText(InputText&& o) noexcept
    : ahead_(std::move(o.ahead_)),
      map_(std::exchange(o.map_, nullptr)),
      map_size_(std::exchange(o.map_size_, 0)),
      released_(std::exchange(o.released_, 0)),
      buffer_(std::move(o.buffer_)) {}

InputText& InputText::operator=(InputText&& o) noexcept {
  if (this != &o) {
    release();
    ahead_ = std::move(o.ahead_);
    map_ = std::exchange(o.map_, nullptr);
    map_size_ = std::exchange(o.map_size_, 0);
    released_ = std::exchange(o.released_, 0);
    buffer_ = std::move(o.buffer_);
  }
  return *this;
}

void InputText::release() {
  ahead_.reset();
  if (map_ != nullptr) ::munmap(map_, map_size_);
  map_ = nullptr;
  map_size_ = 0;
  released_ = 0;
}

void InputText::release_before(uint64_t offset) {
  if (ahead_ != nullptr) {
    ahead_->advance(offset);
    return;
  }
  if (map_ == nullptr) return;
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t end = std::min(offset, map_size_) / page * page;
  // Batches of at least 1 MiB: one madvise per MiB read costs nothing next to the parse.
  if (end < released_ + (uint64_t{1} << 20)) return;
  (void)::madvise(static_cast<char*>(map_) + released_, end - released_, MADV_DONTNEED);
  released_ = end;
}

std::string_view InputText::text() const {
  if (ahead_ != nullptr) return {ahead_->data(), map_size_};
  if (map_ != nullptr) return {static_cast<const char*>(map_), map_size_};
  return buffer_;
}

InputText InputText::from_buffer(std::string buffer) {
  InputText t;
  t.buffer_ = std::move(buffer);
  return t;
}

InputText InputText::from_mapping(void* map, uint64_t size) {
  InputText t;
  t.map_ = map;
  t.map_size_ = size;
  return t;
}

InputText InputText::from_read_ahead(std::unique_ptr<ReadAheadMapping> m) {
  InputText t;
  t.map_size_ = m->size();
  t.ahead_ = std::move(m);
  return t;
}

}  // namespace gw
