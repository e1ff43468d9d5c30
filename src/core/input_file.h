// Reading one input named on the command line (a capture, a scenario, a trace) without ever
// hanging or growing without bound: regular files are memory-mapped (the pages are the page
// cache's, not our heap), `-` and pipes are read up to a size limit with a timeout, and
// directories, sockets, character and block devices (/dev/zero) are refused with an error that
// says what the path is. A FIFO is opened without blocking, so one that nobody writes to is an
// error after a bounded wait instead of a hang. In core so that every reader of a named input
// shares it: captures and scenarios (src/sources, src/cli) and traces (src/sim/trace_io.cpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"

namespace gw {

struct InputLimits {
  uint64_t max_stream_bytes = 4ull << 30;      // pipes and stdin are copied to memory: cap them
  uint64_t max_file_bytes = 1ull << 40;        // mapped files: far above any real capture
  std::chrono::milliseconds first_data{5000};  // a FIFO or pipe with no writer / no first byte
  std::chrono::milliseconds stall{60000};      // a pipe that stops sending for this long
};

// What a path names, as far as reading it is concerned.
enum class InputKind {
  kMissing,
  kRegular,
  kDirectory,
  kFifo,
  kCharDevice,
  kBlockDevice,
  kSocket,
  kOther
};
InputKind input_kind(const std::string& path);  // follows symlinks; "-" is standard input
std::string_view input_kind_name(InputKind k);  // "a directory", "a character device", ...

// Refuses what cannot be read as one file: missing paths, unreadable ones, devices, sockets,
// directories unless `allow_directory`, FIFOs unless `allow_fifo` (for readers that re-open
// the path or read it more than once). Used by readers that open paths themselves.
// Error codes: input.not_found, input.unreadable, input.is_directory, input.special_file.
Status check_input_path(const std::string& path, bool allow_directory, bool allow_fifo = false);

// How the caller reads a regular file's text.
enum class InputAccess {
  kAnyOrder,  // a plain mapping
  // Once from the start, saying how far with release_before: files of 16 MiB and more are
  // copied in ahead of the reader instead of being mapped (read_ahead_mapping.h). Reading
  // anywhere else still gives the file's bytes, only slower.
  kOnePass,
};

// The size from which a kOnePass read copies the file in: below it the few faults cost less
// than setting the copies up.
inline constexpr uint64_t kReadAheadFromBytes = uint64_t{16} << 20;

class ReadAheadMapping;

// The text of one input: a read-only mapping of a regular file, or a buffer with what a
// stream gave. Move-only; the text lives as long as the object.
class InputText {
 public:
  InputText() = default;
  ~InputText();
  InputText(InputText&& o) noexcept;
  InputText& operator=(InputText&& o) noexcept;
  InputText(const InputText&) = delete;
  InputText& operator=(const InputText&) = delete;

  std::string_view text() const;
  bool mapped() const { return map_ != nullptr || ahead_ != nullptr; }
  uint64_t size() const { return mapped() ? map_size_ : buffer_.size(); }

  // Says the reader is done with text()[0, offset): for a mapping the whole pages below it are
  // dropped from this process (MADV_DONTNEED), so a single pass over a file of any size keeps
  // only what it is reading resident. Reading below `offset` later still works (the kernel
  // reads the pages from the file again), it only costs time. Buffers are left as they are.
  // With InputAccess::kOnePass it also copies in the chunks after `offset`.
  void release_before(uint64_t offset);

  static InputText from_buffer(std::string buffer);
  static InputText from_mapping(void* map, uint64_t size);
  static InputText from_read_ahead(std::unique_ptr<ReadAheadMapping> m);

 private:
  void release();
  std::unique_ptr<ReadAheadMapping> ahead_;  // a one-pass read of a big file (map_ unused)
  void* map_ = nullptr;
  uint64_t map_size_ = 0;
  uint64_t released_ = 0;  // [0, released_) of the mapping was handed back
  std::string buffer_;
};

// Reads `path` ("-" = standard input). Errors name the path and what was wrong; codes as for
// check_input_path plus input.too_large, input.no_writer (FIFO/pipe: nothing arrived within
// limits.first_data), input.stalled and input.stdin_is_terminal.
Result<InputText> read_input(const std::string& path, const InputLimits& limits = {},
                             InputAccess access = InputAccess::kAnyOrder);

}  // namespace gw
