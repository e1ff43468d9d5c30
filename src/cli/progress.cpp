#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>
#include <ostream>
#include <string>

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

namespace {

std::string bytes_text(size_t n) {
  char buf[32];
  const double mib = static_cast<double>(n) / (1024.0 * 1024.0);
  if (mib >= 1024.0)
    std::snprintf(buf, sizeof buf, "%.1f GiB", mib / 1024.0);
  else if (mib >= 1.0)
    std::snprintf(buf, sizeof buf, "%.0f MiB", mib);
  else
    std::snprintf(buf, sizeof buf, "%zu KiB", n / 1024);
  return buf;
}

}  // namespace

std::string read_progress_line(size_t file, size_t files, const std::string& path, size_t done,
                               size_t total) {
  // The file's last path component: the line must fit a terminal.
  const size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.size() > 40) name = name.substr(0, 37) + "...";
  std::string line = "doctor: reading " + name;
  if (files > 1) line += " (" + std::to_string(file + 1) + " of " + std::to_string(files) + ")";
  const size_t pct =
      total == 0
          ? 100
          : static_cast<size_t>(100.0 * static_cast<double>(done) / static_cast<double>(total));
  return line + ": " + bytes_text(done) + " of " + bytes_text(total) + " (" + std::to_string(pct) +
         "%)";
}

bool progress_wanted(bool quiet) {
  return !quiet && isatty(STDERR_FILENO) == 1;
}

}  // namespace gw::cli
