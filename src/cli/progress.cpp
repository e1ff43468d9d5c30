#include "cli/progress.h"

#include <unistd.h>

#include <ostream>

namespace gw::cli {

void Progress::update(const std::string& line, bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && shown_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  // Carriage return and "erase to end of line": the line is rewritten in place.
  err_ << "\r\x1b[K" << line << std::flush;
  shown_ = true;
}

void Progress::clear() {
  if (!enabled_ || !shown_) return;
  err_ << "\r\x1b[K" << std::flush;
  shown_ = false;
}

bool progress_wanted(bool quiet) {
  return !quiet && isatty(STDERR_FILENO) == 1;
}

}  // namespace gw::cli
