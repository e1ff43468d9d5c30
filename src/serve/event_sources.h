// The two event-driven inputs of the daemon: the kernel log (followed line by line, parsed
// with the same parser as `doctor`) and NVML's event API (Xid as it happens). Each runs one
// thread that wakes at least every 200 ms, so it stops promptly.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/event.h"
#include "core/result.h"
#include "sources/nvml/nvml_library.h"
#include "sources/nvml/xid_events.h"

namespace gw::serve {

using EventCallback = std::function<void(Event&&)>;

// Follows /dev/kmsg (from now on: the ring buffer's history is `doctor`'s job) or a log file
// that grows (from its current end; a file that shrinks was rotated and is read from its start).
class KernelLogFollower {
 public:
  // Errors: kmsg.unreadable (missing file, no permission for /dev/kmsg: see docs/serve.md),
  // kmsg.not_followable (a directory, a device other than /dev/kmsg, a FIFO with no writer).
  static Result<std::unique_ptr<KernelLogFollower>> start(const std::string& path,
                                                          EventCallback sink);
  ~KernelLogFollower();
  KernelLogFollower(const KernelLogFollower&) = delete;
  KernelLogFollower& operator=(const KernelLogFollower&) = delete;
  const std::string& path() const { return path_; }
  uint64_t lines() const { return lines_.load(); }

 private:
  KernelLogFollower() = default;
  void run();
  void run_stream(std::string& pending, std::string& buf);
  bool reopen_if_rotated(std::string& pending);
  bool truncated_since_last_read();
  void recover_from_copy(std::string& pending);
  void consume(std::string& pending, std::string_view chunk);
  void handle_text(std::string& pending, std::string_view chunk);
  std::string path_;
  int fd_ = -1;
  bool is_kmsg_ = false;
  bool is_stream_ = false;  // a FIFO: read as it comes, no offsets
  std::string first_;       // a byte read while checking the FIFO has a writer
  dev_t dev_ = 0;           // the file now open, to notice a rotation by rename
  ino_t ino_ = 0;
  EventCallback sink_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> lines_{0};
  uint64_t offset_ = 0;
  // The last bytes read (ending at offset_): a copytruncate whose new content already grew past
  // offset_ between two polls shows as different bytes there, not as a smaller file.
  std::string tail_;
  // The last lines handed on (16 KiB at most): where a kernel fault report's header is found
  // when its RIP line comes (parse_fault_line).
  std::string recent_;
  static constexpr size_t kRecentBytes = 16 << 10;
  std::thread thread_;
};

// NVML's Xid events: the watcher lives in sources/nvml (the stress run uses it too).
using nvml::NvmlEventWatcher;

}  // namespace gw::serve
