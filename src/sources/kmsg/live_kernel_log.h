// Reads the live kernel log: /dev/kmsg, else `journalctl -k`, else a log file.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "core/result.h"

namespace gw {

struct KernelLogOptions {
  std::filesystem::path root = "/";  // /dev/kmsg and /var/log are read below it
  std::chrono::hours since{24};      // how far back
  bool allow_journalctl = true;      // tests turn the subprocess off
};

// Returns the text (dmesg-like lines) and where it came from; an Error only when no source
// could be read at all.
struct KernelLogText {
  std::string text;
  std::string origin;  // "/dev/kmsg", "journalctl -k", "/var/log/kern.log"
};
Result<KernelLogText> read_live_kernel_log(const KernelLogOptions& options);

}  // namespace gw
