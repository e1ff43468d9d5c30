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
// With `overwrite` false an existing regular `path` is refused (code output.exists).
// Only regular files are ever replaced: a character device, FIFO or Unix socket is written in
// place (`-o /dev/null` discards, it never turns /dev/null into a file), a symbolic link is
// followed to its target, a block device, a directory and a dangling link are refused.
Status write_file_atomically(const std::string& path, std::string_view text, bool overwrite);

// A temporary file beside `path` that becomes `path` on commit(); removed if never committed.
// For a character device, FIFO or socket it is the node itself, opened for writing.
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
  const std::string& temp_path() const { return temp_; }  // empty when written in place
  const std::string& path() const { return path_; }
  bool in_place() const { return temp_.empty(); }

 private:
  AtomicFile(std::string path, std::string target, std::string temp, int fd, bool overwrite)
      : path_(std::move(path)),
        target_(std::move(target)),
        temp_(std::move(temp)),
        fd_(fd),
        overwrite_(overwrite) {}
  std::string path_;    // as the user gave it, for messages
  std::string target_;  // what is replaced: `path_` with its symbolic links resolved
  std::string temp_;
  int fd_ = -1;
  bool overwrite_ = false;
  bool committed_ = false;
};

}  // namespace gw::cli
