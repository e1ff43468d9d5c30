// Captured outputs -> one Observation: each file read part by part (capture_reader.h), merged
// with bounded memory and matched across files by GPU identity (capture_merge.h).
#include "sources/captures.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "sources/capture_gzip.h"
#include "sources/capture_merge.h"
#include "sources/capture_reader.h"
#include "sources/kmsg/kernel_log.h"
#include "sources/smi/smi_parsers.h"
#include "sources/smi/text_util.h"

namespace gw {

std::string_view capture_format_name(CaptureFormat f) {
  switch (f) {
    case CaptureFormat::kUnknown:
      return "unknown";
    case CaptureFormat::kSmiQueryText:
      return "nvidia-smi -q";
    case CaptureFormat::kSmiQueryXml:
      return "nvidia-smi -q -x";
    case CaptureFormat::kSmiCsv:
      return "nvidia-smi --query-gpu csv";
    case CaptureFormat::kSmiDmon:
      return "nvidia-smi dmon";
    case CaptureFormat::kSmiTopo:
      return "nvidia-smi topo -m";
    case CaptureFormat::kSmiTable:
      return "nvidia-smi table";
    case CaptureFormat::kKernelLog:
      return "kernel log";
    case CaptureFormat::kLspci:
      return "lspci -vv";
    case CaptureFormat::kEnvReport:
      return "environment report";
    case CaptureFormat::kAppLog:
      return "application log";  // errors, training progress and timing, profilers
    case CaptureFormat::kDcgm:
      return "DCGM";
    case CaptureFormat::kBugReport:
      return "nvidia-bug-report";
    case CaptureFormat::kBenchTool:
      return "stress/benchmark tool";
    case CaptureFormat::kSmiNvlink:
      return "nvidia-smi nvlink";
    case CaptureFormat::kSmiMessages:
      return "nvidia-smi messages";
  }
  return "unknown";
}

CaptureFormat detect_capture_format(std::string_view text) {
  // Bounded: the first 64 KiB decide (a huge file's first part is what it starts with).
  Observation scratch;
  const auto segs = read_capture(text.substr(0, 64 * 1024), "detect", scratch);
  return segs.empty() ? CaptureFormat::kUnknown : segs.front().format;
}

std::vector<Event> parse_kernel_log(std::string_view text, std::string_view origin,
                                    std::vector<Error>* errors) {
  std::vector<Event> out;
  parse_kernel_log_stream(
      text, origin, [&](Event&& e) { out.push_back(std::move(e)); }, errors);
  return out;
}

void add_capture(std::string_view text, std::string_view origin, Observation& obs) {
  static const CaptureProgress kNone;
  add_capture(text, origin, obs, kNone);
}

namespace {

// A .gz capture (nvidia-bug-report.log.gz): read its text; progress is told in compressed
// bytes, so that a caller handing back the pages of its mapping hands back what zlib read.
void add_gzip_capture(std::string_view data, std::string_view origin, Observation& obs,
                      const CaptureProgress& progress) {
  auto text = gunzip_capture(data, origin);
  if (!text) {
    obs.input_errors.push_back(text.error());
    return;
  }
  const std::string& plain = text.value();
  CaptureProgress scaled;
  if (progress)
    scaled = [&](size_t done, size_t total) {
      progress(total ? static_cast<size_t>(static_cast<double>(done) / static_cast<double>(total) *
                                           static_cast<double>(data.size()))
                     : data.size(),
               data.size());
    };
  add_capture(plain, origin, obs, scaled);
  obs.notes.push_back(std::string(origin) + ": gzip, read as its " + std::to_string(plain.size()) +
                      " decompressed bytes (line numbers are theirs)");
}

}  // namespace

void add_capture(std::string_view text, std::string_view origin, Observation& obs,
                 const CaptureProgress& progress) {
  if (is_gzip(text)) {
    add_gzip_capture(text, origin, obs, progress);
    return;
  }
  text = text::strip_bom(text);
  const size_t first_new_sample = obs.samples.size();
  const auto segs = read_capture(text, origin, obs, progress);
  if (segs.empty()) {
    obs.input_errors.push_back(make_error(
        "capture.unknown_format",
        text::trim(text).empty()
            ? "the file is empty"
            : "nothing recognised: expected nvidia-smi -q, -q -x (XML), --query-gpu CSV with a "
              "header, dmon, topo -m, the nvidia-smi table, a kernel log (dmesg, journalctl, "
              "syslog), lspci -vv, an environment report (collect_env, nvcc -V) or an "
              "application's CUDA/NCCL error",
        std::string(origin) + ":" +
            std::to_string(obs.coverage.empty() || !obs.coverage.back().first_not_understood_line
                               ? 1
                               : *obs.coverage.back().first_not_understood_line)));
    return;
  }
  check_machines(obs, first_new_sample, origin);
}

Observation load_captures(const std::vector<std::string>& paths) {
  Observation obs;
  for (const auto& path : paths) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      const std::string why = fd < 0 ? std::strerror(errno) : "not a regular file";
      if (fd >= 0) ::close(fd);
      obs.input_errors.push_back(make_error("capture.unreadable", "cannot read: " + why, path));
      continue;
    }
    const auto size = static_cast<size_t>(st.st_size);
    // mmap: a 1 GB log is scanned in place, its pages are the page cache's, not our heap.
    void* map = size ? ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0) : nullptr;
    ::close(fd);
    if (size && map == MAP_FAILED) {
      obs.input_errors.push_back(make_error(
          "capture.unreadable", std::string("cannot map: ") + std::strerror(errno), path));
      continue;
    }
    if (size) ::madvise(map, size, MADV_SEQUENTIAL);
    add_capture(std::string_view(static_cast<const char*>(map), size), path, obs);
    if (size) ::munmap(map, size);
  }
  return obs;
}

}  // namespace gw
