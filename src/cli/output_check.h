// Writes that can fail (a full disk, a closed pipe, /dev/full) must say so and exit non-zero:
// a report that silently lost its end is worse than none.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "core/result.h"

namespace gw::cli {

// EX_IOERR from sysexits.h: the command's result could not be written.
inline constexpr int kWriteError = 74;

// Flushes `out`; when it (or any earlier write to it) failed, reports on `err` and returns
// kWriteError, else `code`.
int finish_output(int code, std::ostream& out, std::ostream& err);

// Writes `text` to `path` through a temporary file in the same folder, renamed over `path`
// only once everything is on disk, so a failed write never leaves a damaged file behind.
// With `overwrite` false an existing `path` is refused (code output.exists).
Status write_file_atomically(const std::string& path, std::string_view text, bool overwrite);

// A temporary file beside `path` that becomes `path` on commit(); removed if never committed.
class AtomicFile {
 public:
  // Refuses an existing `path` unless `overwrite`; errors name the path.
  static Result<AtomicFile> create(const std::string& path, bool overwrite);
  AtomicFile(AtomicFile&& o) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  Status write(std::string_view text);  // all of it, or an error (ENOSPC, EIO, ...)
  Status commit();                      // fsync, close, rename over the target
  const std::string& temp_path() const { return temp_; }
  const std::string& path() const { return path_; }

 private:
  AtomicFile(std::string path, std::string temp, int fd, bool overwrite)
      : path_(std::move(path)), temp_(std::move(temp)), fd_(fd), overwrite_(overwrite) {}
  std::string path_, temp_;
  int fd_ = -1;
  bool overwrite_ = false;
  bool committed_ = false;
};

}  // namespace gw::cli
