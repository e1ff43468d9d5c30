// Captured outputs -> one Observation: detect each file's format by content, parse it with
// the matching pure parser, and merge with bounded memory (see capture_merge.h).
#include "sources/captures.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <string>

#include "sources/capture_merge.h"
#include "sources/kmsg/kernel_log.h"
#include "sources/smi/csv_fields.h"
#include "sources/smi/smi_parsers.h"
#include "sources/smi/text_util.h"

namespace gw {

namespace {

constexpr size_t kDetectLines = 32;

bool looks_like_csv_header(std::string_view line) {
  if (line.find(',') == std::string_view::npos) return false;
  size_t known = 0, fields = 0;
  size_t b = 0;
  while (b <= line.size()) {
    size_t e = line.find(',', b);
    if (e == std::string_view::npos) e = line.size();
    const auto f = text::trim(line.substr(b, e - b));
    ++fields;
    for (char c : f)  // field names: identifiers with dots, optional " [unit]"
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == ' ' ||
            c == '[' || c == ']' || c == '%' || c == '/'))
        return false;
    if (smi::csv_column_for(f).field != smi::CsvField::kIgnore) ++known;
    b = e + 1;
  }
  return known > 0 && fields >= 2;
}

bool is_query_text_gpu_line(std::string_view line) {
  // "GPU 00000000:07:00.0" at column 0.
  return text::starts_with(line, "GPU ") && normalize_pci_bus_id(text::trim(line.substr(4)));
}

CaptureFormat detect_from_first(std::string_view first, std::string_view all_head) {
  if (text::starts_with(first, "<?xml") || text::starts_with(first, "<nvidia_smi_log") ||
      text::starts_with(first, "<!DOCTYPE nvidia_smi_log"))
    return CaptureFormat::kSmiQueryXml;
  if (first.find("NVSMI LOG") != std::string_view::npos) return CaptureFormat::kSmiQueryText;
  if (first.front() == '#' &&
      (first.find("gpu") != std::string_view::npos || first.find("Date") != std::string_view::npos))
    return CaptureFormat::kSmiDmon;
  if (text::starts_with(first, "GPU0") && all_head.find("Affinity") != std::string_view::npos)
    return CaptureFormat::kSmiTopo;
  if (looks_like_csv_header(first)) return CaptureFormat::kSmiCsv;
  return CaptureFormat::kUnknown;
}

}  // namespace

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
  }
  return "unknown";
}

CaptureFormat detect_capture_format(std::string_view text) {
  text::LineReader rd(text::strip_bom(text));
  std::string_view raw;
  std::string first, head;
  size_t lines = 0, kernel_lines = 0;
  bool query_text = false, table = false;
  while (lines < kDetectLines && rd.next(raw)) {
    std::string clean = text::has_escape(raw) ? text::strip_ansi(raw) : std::string(raw);
    const std::string_view t = text::trim(clean);
    if (t.empty()) continue;
    ++lines;
    if (first.empty()) first = std::string(t);
    head += clean;
    head += '\n';
    if (is_query_text_gpu_line(clean) || text::starts_with(t, "Attached GPUs")) query_text = true;
    if (t.find("NVIDIA-SMI") != std::string_view::npos) table = true;
    if (looks_like_kernel_log_line(t)) ++kernel_lines;
  }
  if (lines == 0) return CaptureFormat::kUnknown;
  if (auto f = detect_from_first(first, head); f != CaptureFormat::kUnknown) return f;
  if (table) return CaptureFormat::kSmiTable;
  if (query_text) return CaptureFormat::kSmiQueryText;
  if (kernel_lines * 2 >= lines) return CaptureFormat::kKernelLog;
  return CaptureFormat::kUnknown;
}

std::vector<Event> parse_kernel_log(std::string_view text, std::string_view origin,
                                    std::vector<Error>* errors) {
  std::vector<Event> out;
  parse_kernel_log_stream(
      text, origin, [&](Event&& e) { out.push_back(std::move(e)); }, errors);
  return out;
}

namespace {

void add_one_shot(Result<Snapshot> r, Observation& obs) {
  if (r)
    obs.samples.push_back(std::move(r.value()));
  else
    obs.input_errors.push_back(r.error());
}

void add_series(CaptureFormat f, std::string_view text, std::string_view origin, Observation& obs) {
  SampleReducer reducer;
  auto sink = [&](const Snapshot& s) { reducer.add(s); };
  auto r = f == CaptureFormat::kSmiCsv ? parse_smi_csv(text, origin, sink, &obs.input_errors)
                                       : parse_smi_dmon(text, origin, sink, &obs.input_errors);
  if (!r) obs.input_errors.push_back(r.error());
  merge_samples(reducer, origin, obs);
}

void add_kernel_log(std::string_view text, std::string_view origin, Observation& obs) {
  EventReducer reducer(obs);
  parse_kernel_log_stream(
      text, origin, [&](Event&& e) { reducer.add(std::move(e)); }, &obs.input_errors);
  reducer.finish(origin);
}

}  // namespace

void add_capture(std::string_view text, std::string_view origin, Observation& obs) {
  text = text::strip_bom(text);
  switch (detect_capture_format(text)) {
    case CaptureFormat::kSmiQueryText:
      return add_one_shot(parse_smi_query_text(text, origin), obs);
    case CaptureFormat::kSmiQueryXml:
      return add_one_shot(parse_smi_query_xml(text, origin), obs);
    case CaptureFormat::kSmiTable:
      return add_one_shot(parse_smi_table(text, origin), obs);
    case CaptureFormat::kSmiCsv:
      return add_series(CaptureFormat::kSmiCsv, text, origin, obs);
    case CaptureFormat::kSmiDmon:
      return add_series(CaptureFormat::kSmiDmon, text, origin, obs);
    case CaptureFormat::kKernelLog:
      return add_kernel_log(text, origin, obs);
    case CaptureFormat::kSmiTopo: {
      auto t = parse_smi_topo(text, origin);
      if (t)
        obs.topology = std::move(t.value());
      else
        obs.input_errors.push_back(t.error());
      return;
    }
    case CaptureFormat::kUnknown:
      break;
  }
  obs.input_errors.push_back(make_error(
      "capture.unknown_format",
      text::trim(text).empty()
          ? "the file is empty"
          : "unrecognised format: expected nvidia-smi -q, -q -x (XML), --query-gpu CSV with a "
            "header, dmon, topo -m, the nvidia-smi table, or a kernel log (dmesg, journalctl, "
            "syslog)",
      std::string(origin) + ":1"));
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
