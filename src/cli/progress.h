// Progress for long work, on stderr, only when stderr is a terminal and --quiet was not
// given: one line rewritten in place, cleared when the work ends. Never on stdout, so
// `--json > file` and pipes are unchanged.
#pragma once

#include <chrono>
#include <iosfwd>
#include <string>

namespace gw::cli {

class Progress {
 public:
  // `enabled`: progress_wanted() in the binary; false in tests that capture stderr.
  Progress(std::ostream& err, bool enabled) : err_(err), enabled_(enabled) {}
  ~Progress() { clear(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Shows `line` (at most ten times a second, unless `force`).
  void update(const std::string& line, bool force = false);
  void clear();
  bool enabled() const { return enabled_; }

 private:
  std::ostream& err_;
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

// stderr is a terminal and not --quiet.
bool progress_wanted(bool quiet);

// "doctor: reading big.log (2 of 3): 412 MiB of 1.0 GiB (40%)"; the file index counts from 0.
std::string read_progress_line(size_t file, size_t files, const std::string& path, size_t done,
                               size_t total);

}  // namespace gw::cli
