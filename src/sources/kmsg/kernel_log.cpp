#include "sources/kmsg/kernel_log.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <unordered_set>

#include "core/cpu_features.h"
#include "sources/kmsg/anchor_scan.h"
#include "sources/kmsg/ghes_record.h"
#include "sources/kmsg/kernel_fault.h"
#include "sources/kmsg/kernel_log_line.h"
#include "sources/kmsg/monitor_xid.h"
#include "sources/kmsg/teddy.h"
#include "sources/smi/phrase_set.h"
#include "sources/smi/text_util.h"

namespace gw {

namespace {

using kmsg::LineRole;
using kmsg::LogPrefix;
using kmsg::ParsedLine;

constexpr size_t kMaxLineErrors = 50;
// A multi-line driver message: continuation lines right after its first line, at most this
// many in all (the probe-routine message runs to 8 lines) and this much text.
constexpr size_t kMaxJoinedLines = 10;
constexpr size_t kMaxJoinedChars = 800;

Error line_error(std::string_view origin, size_t line_no, std::string msg) {
  return make_error("capture.kernel_log", std::move(msg),
                    std::string(origin) + ":" + std::to_string(line_no));
}

std::string origin_of(std::string_view origin, size_t line_no) {
  std::string o(origin);
  o += ':';
  o += std::to_string(line_no);
  return o;
}

bool blank(std::string_view s) {
  return text::trim(s).empty();
}

// The stream's state: the message being joined, the dmesg -H clock and the counters.
class Stream {
 public:
  Stream(std::string_view text, std::string_view origin, const EventSink& sink,
         std::vector<Error>* errors, const KernelLogParseOptions& opt)
      : text_(text), origin_(origin), sink_(sink), errors_(errors), opt_(opt) {}

  KernelLogStats run();

 private:
  size_t next_of(char c, size_t from) const {
    const void* p =
        from < text_.size() ? std::memchr(text_.data() + from, c, text_.size() - from) : nullptr;
    return p ? static_cast<size_t>(static_cast<const char*>(p) - text_.data()) : text_.size();
  }
  size_t line_end(size_t from) const { return next_of('\n', from); }
  size_t next_word(std::string_view w, size_t from) const {
    if (from >= text_.size()) return text_.size();
    const void* p = memmem(text_.data() + from, text_.size() - from, w.data(), w.size());
    return p ? static_cast<size_t>(static_cast<const char*>(p) - text_.data()) : text_.size();
  }
  bool anchor_at(size_t h) const;
  bool mention_at(size_t h) const;
  void mention_line(std::string_view line, size_t line_no);
  bool fault_line(std::string_view line, size_t line_no);
  bool monitor_line(std::string_view line, size_t line_no);
  void unread_fault_context();
  void unread_gpu(std::string_view line, size_t line_no);
  void advance_to(size_t ls);
  void other_line(std::string_view line, size_t line_no);
  void h_clock(const LogPrefix& p, Event* ev);
  void rebuild_h_clock(size_t upto);
  void gpu_line(std::string_view line, size_t line_no);
  size_t aer_follow(size_t pos);
  bool ghes_line(std::string_view line, size_t line_no);
  void end_ghes();
  void flush();
  void emit(Event&& ev);

  std::string_view text_, origin_;
  const EventSink& sink_;
  std::vector<Error>* errors_;
  const KernelLogParseOptions& opt_;
  KernelLogStats st_;
  size_t cur_ = 0;         // start of the first line not yet accounted for
  size_t line_no_ = 1;     // its line number
  bool walk_ = false;      // every line is looked at (classify_lines or a dmesg -H log)
  bool mentions_ = false;  // on_unread_gpu_line is set: stop at GPU names too
  bool hmode_ = false;     // dmesg -H seen: delta lines need the running clock
  std::optional<int64_t> hclock_ms_;
  std::optional<Event> pending_;
  bool pending_announce_ = false;
  size_t pending_last_ = 0;
  size_t pending_lines_ = 0;
  // Kernel fault reports (fault_line): the last IP line's report runs to fault_until_; lines of
  // a report not yet seen to have one wait in fault_context_.
  static constexpr size_t kReportLines = 100;
  static constexpr size_t kMaxFaultContext = 64;
  size_t fault_until_ = 0;
  std::vector<std::pair<size_t, std::string>> fault_context_;
  // The driver's register and firmware-state dumps (kmsg::is_driver_dump_line) are read as part
  // of an event within kDumpLines before or after them; dump lines with no event near wait in
  // dump_context_ and are listed unread at the end (a dump alone is no diagnosis).
  static constexpr size_t kDumpLines = 40;
  static constexpr size_t kMaxDumpContext = 256;
  std::vector<std::pair<size_t, std::string>> dump_context_;
  size_t last_event_line_ = 0;
  // (GPU, Xid) of the kernel's Xid lines so far, hashed: a monitor's reading of one of them
  // (monitor_line) restates it and is no second event.
  std::unordered_set<uint64_t> own_xids_;
  std::unordered_set<uint64_t>& xids_seen_ = opt_.xids_seen ? *opt_.xids_seen : own_xids_;
  // Pairs remembered at most: a log naming more (GPU, Xid) pairs may count a monitor's
  // restatement of one past them as an event of its own.
  static constexpr size_t kMaxXidsSeen = 65536;
  static uint64_t xid_key(std::string_view bus, unsigned code) {
    return std::hash<std::string_view>{}(bus)*0x9E3779B97F4A7C15ULL + code;
  }
  bool xid_seen(std::string_view bus, unsigned code) const {
    return xids_seen_.count(xid_key(bus, code)) > 0;
  }
  void note_xid(std::string_view bus, unsigned code) {
    if (xids_seen_.size() < kMaxXidsSeen) xids_seen_.insert(xid_key(bus, code));
  }
  bool dump_line(std::string_view line, size_t line_no);
  using Waiting = std::vector<std::pair<size_t, std::string>>;  // (line, text)
  void expire(Waiting& waiting, size_t line_no, size_t reach);
  void wait(Waiting& waiting, size_t cap, size_t reach, std::string_view line, size_t line_no);
  void event_seen(size_t line_no);
  // The firmware-first error record being gathered (its lines share a "{N}" tag and may be
  // interleaved with other lines), the times of its first line, where it starts, its lines.
  std::optional<kmsg::GhesRecord> ghes_;
  Event ghes_first_;
  size_t ghes_line_no_ = 0, ghes_lines_ = 0;
};

bool Stream::anchor_at(size_t h) const {
  const char c = text_[h];
  if (h < 1) return false;
  switch (c) {
    case 'V':  // NVRM: / NVRM <function>
      return h + 3 < text_.size() && text_[h - 1] == 'N' && text_[h + 1] == 'R' &&
             text_[h + 2] == 'M' && (text_[h + 3] == ':' || text_[h + 3] == ' ');
    case 'X':  // SXid (
      return text_.substr(h - 1, 6) == "SXid (";
    case 'R':  // AER:
      return h >= 2 && text_.substr(h - 2, 5) == "AER: ";
    case 'F':  // INFO: task
      return h >= 2 && text_.substr(h - 2, 11) == "INFO: task ";
    case 'G':  // Gb/s available PCIe bandwidth, limited by
      return text_.substr(h, 30) == "Gb/s available PCIe bandwidth,";
    case 'I':  // PCIe Bus Error:
      return h >= 2 && text_.substr(h - 2, 16) == "PCIe Bus Error: ";
    case 'r':  // [Hardware Error]:
      return h >= 14 && text_.substr(h - 14, 17) == "[Hardware Error]:";
  }
  return false;
}

bool iequal_at(std::string_view s, size_t at, std::string_view w) {
  return at + w.size() <= s.size() && text::iequals(s.substr(at, w.size()), w);
}

// A name of the GPU stack that is no event anchor: "NVIDIA"/"NVidia" (the 'V'), "GPU",
// "CUDA", "NCCL", "DCGM" (the 'C'); lowercase "nvidia" is found by its own search.
bool Stream::mention_at(size_t h) const {
  const char c = text_[h];
  if (c == 'V')
    return h >= 1 && (text_[h - 1] == 'N' || text_[h - 1] == 'n') &&
           iequal_at(text_, h + 1, "idia");
  if (c == 'v') return h >= 1 && (text_[h - 1] == 'n' || text_[h - 1] == 'N');
  if (c == 'G') return text_.substr(h, 3) == "GPU";
  if (c == '_') return text_.substr(h, 3) == "_nv";  // "_nv011745rm": a fault report's IP
  if (c == 'C')
    return text_.substr(h, 4) == "CUDA" ||
           (h >= 1 && (text_.substr(h - 1, 4) == "NCCL" || text_.substr(h - 1, 4) == "DCGM"));
  return false;
}

void Stream::unread_gpu(std::string_view line, size_t line_no) {
  if (!opt_.on_unread_gpu_line) return;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (is_routine_driver_line(line) || !names_gpu_stack(line)) return;
  opt_.on_unread_gpu_line(line_no, line);
}

// A line found by a GPU name: an event line after all (the name came first), a routine driver
// line, another monitor's reading of an Xid, or unread.
void Stream::mention_line(std::string_view line, size_t line_no) {
  const kmsg::ParsedLine pl = kmsg::parse_line(line);
  if (pl.role != LineRole::kNone) return gpu_line(line, line_no);
  if (fault_line(line, line_no)) return;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (is_routine_driver_line(line) || monitor_line(line, line_no)) return;
  if (names_gpu_stack(line)) opt_.on_unread_gpu_line(line_no, line);
}

// Another monitor's reading of an Xid (gpud's "XID 149.38 ... detected on GPU PCI:..."): read;
// an event unless the kernel's own line of that Xid on that GPU came before it.
bool Stream::monitor_line(std::string_view line, size_t line_no) {
  auto ev = kmsg::parse_monitor_xid_line(line);
  if (!ev) return false;
  if (opt_.classify_lines) ++st_.kernel_lines;
  ++st_.gpu_lines;
  flush();  // the message before it ends here
  if (xid_seen(*ev->pci_bus_id, *ev->code)) return true;
  ev->origin = origin_of(origin_, line_no);
  event_seen(line_no);
  emit(std::move(*ev));
  return true;
}

// A line of a kernel fault report in an NVIDIA module (kernel_fault.h): the IP line (or a
// sanitizer's report) is an event; the trace frames, the module list and a WARNING header are
// read as part of it.
bool Stream::fault_line(std::string_view line, size_t line_no) {
  using F = kmsg::FaultLine;
  const F kind = kmsg::classify_fault_line(line);
  if (kind == F::kNone) return false;
  if (opt_.classify_lines) ++st_.kernel_lines;
  if (kind != F::kIp && kind != F::kSanitizer) {
    // Frames, the module list, a WARNING header: read when they belong to a report whose IP
    // line is read (before it or within kReportLines after); else listed unread at the end,
    // so that a trace without its report is never taken as understood.
    if (line_no <= fault_until_) {
      ++st_.gpu_lines;
      return true;
    }
    wait(fault_context_, kMaxFaultContext, kReportLines, line, line_no);
    return true;
  }
  ++st_.gpu_lines;
  for (const auto& [no, text] : fault_context_) {
    if (no + kReportLines >= line_no)
      ++st_.gpu_lines;  // this report's, before its IP line
    else
      unread_gpu(text, no);
  }
  fault_context_.clear();
  fault_until_ = line_no + kReportLines;
  flush();
  const size_t at = static_cast<size_t>(line.data() - text_.data());
  constexpr size_t kLookBack = 16 << 10;  // 60 lines of a report, generously
  const size_t from = at - std::min(at, kLookBack);
  std::string before;  // rare: only for an IP line; the caller's text before the run first
  if (at < kLookBack && !opt_.preceding.empty()) {
    const std::string_view pre = opt_.preceding;
    before.assign(pre.substr(pre.size() - std::min(pre.size(), kLookBack - at)));
    if (before.back() != '\n') before.push_back('\n');
  }
  before.append(text_.substr(from, at - from));
  if (auto ev = parse_fault_line(line, before, origin_, line_no)) emit(std::move(*ev));
  return true;
}

// Report lines whose report never showed its IP line (a trace pasted alone, a cut report).
void Stream::unread_fault_context() {
  for (const auto& [no, line] : fault_context_) unread_gpu(line, no);
  fault_context_.clear();
  for (const auto& [no, line] : dump_context_) unread_gpu(line, no);
  dump_context_.clear();
}

bool Stream::dump_line(std::string_view line, size_t line_no) {
  if (!kmsg::is_driver_dump_line(line)) return false;
  if (last_event_line_ != 0 && line_no <= last_event_line_ + kDumpLines) {
    ++st_.gpu_lines;
    return true;
  }
  wait(dump_context_, kMaxDumpContext, kDumpLines, line, line_no);
  return true;
}

// A line read only with an event within `reach` of it waits for one; a full list first drops
// those past their reach, and a line it still has no room for is listed unread.
void Stream::wait(Waiting& waiting, size_t cap, size_t reach, std::string_view line,
                  size_t line_no) {
  if (waiting.size() == cap) expire(waiting, line_no, reach);
  if (waiting.size() < cap)
    waiting.emplace_back(line_no, std::string(line));
  else
    unread_gpu(line, line_no);
}

// Lines waiting for an event that can no longer come within `reach` of them: unread now, so
// that a full list takes new lines again (the reading never depends on what lies further back
// than the reach, and a log cut into pieces reads as one).
void Stream::expire(Waiting& waiting, size_t line_no, size_t reach) {
  auto keep = waiting.begin();
  for (auto& w : waiting) {
    if (w.first + reach < line_no)
      unread_gpu(w.second, w.first);
    else
      *keep++ = std::move(w);
  }
  waiting.erase(keep, waiting.end());
}

// An event line: the dump lines waiting within kDumpLines before it are part of its report.
void Stream::event_seen(size_t line_no) {
  last_event_line_ = line_no;
  if (dump_context_.empty()) return;
  for (auto& d : dump_context_) {
    if (d.first + kDumpLines >= line_no)
      ++st_.gpu_lines;
    else
      unread_gpu(d.second, d.first);
  }
  dump_context_.clear();
}

void Stream::h_clock(const LogPrefix& p, Event* ev) {
  if (p.minute_line) {
    hclock_ms_ = p.time_in_year_ms;
  } else if (p.delta_s && hclock_ms_) {
    // Each delta is at most a year (kMaxDeltaS); a sum that would overflow stops the clock.
    if (__builtin_add_overflow(*hclock_ms_, static_cast<int64_t>(*p.delta_s * 1000.0 + 0.5),
                               &*hclock_ms_))
      hclock_ms_.reset();
  } else {
    return;
  }
  if (ev && !ev->time_in_year_ms) ev->time_in_year_ms = hclock_ms_;
}

// The common "[  1234.567890] " dmesg prefix, checked without parsing the number (the walk over
// every line only needs to know that it is kernel log).
bool uptime_bracket(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  if (i >= line.size() || line[i] != '[') return false;
  bool digits = false;
  for (++i; i < line.size() && i < 40; ++i) {
    const char c = line[i];
    if (c == ']') return digits;
    if (c >= '0' && c <= '9') {
      digits = true;
    } else if (c != ' ' && c != '.') {
      return false;
    }
  }
  return false;
}

void Stream::other_line(std::string_view line, size_t line_no) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!hmode_ && uptime_bracket(line)) {
    if (opt_.classify_lines) ++st_.kernel_lines;
    return;
  }
  LogPrefix p;
  kmsg::strip_log_prefix(line, p);
  if (p.time_refused) ++st_.untimed_lines;
  if (p.delta_s || p.minute_line) hmode_ = true;
  if (hmode_) h_clock(p, nullptr);
  if (!opt_.classify_lines || blank(line)) return;
  if (p.recognised || looks_like_kernel_log_line(line)) {
    ++st_.kernel_lines;
    return;
  }
  ++st_.unread_lines;
  if (!st_.first_unread_line) st_.first_unread_line = line_no;
  if (opt_.on_unread) opt_.on_unread(line_no, line);
}

// Accounts for the lines in [cur_, ls): counted only, or looked at one by one.
void Stream::advance_to(size_t ls) {
  if (!walk_) {
    line_no_ += text::count_newlines(text_.data() + cur_, ls - cur_);
    cur_ = ls;
    return;
  }
  while (cur_ < ls) {
    const size_t e = std::min(line_end(cur_), ls);
    other_line(text_.substr(cur_, e - cur_), line_no_);
    cur_ = e + 1;
    ++line_no_;
  }
  cur_ = ls;
}

// The first dmesg -H delta line: replay the minute/delta lines before it for the clock.
void Stream::rebuild_h_clock(size_t upto) {
  size_t p = 0;
  while (p < upto) {
    const size_t e = std::min(line_end(p), upto);
    LogPrefix lp;
    kmsg::strip_log_prefix(text_.substr(p, e - p), lp);
    h_clock(lp, nullptr);
    p = e + 1;
  }
}

void Stream::emit(Event&& ev) {
  ++st_.events;
  if (ev.kind == EventKind::kXid && ev.pci_bus_id && ev.code) note_xid(*ev.pci_bus_id, *ev.code);
  sink_(std::move(ev));
}

void Stream::flush() {
  if (!pending_) return;
  // An announcement nothing completed ("The NVIDIA GPU ..." then other text) is no event.
  if (!pending_announce_) emit(std::move(*pending_));
  pending_.reset();
  pending_announce_ = false;
  pending_lines_ = 0;
}

// A line of a firmware-first error record: gathered into the record its tag names; a record
// ends at its next header, at another record's line, or at the end of the text.
bool Stream::ghes_line(std::string_view line, size_t line_no) {
  // Every GHES line's body begins "[Hardware Error]:" (parse_ghes_line): a line without it is
  // none, without stripping its prefix (which parse_line does again for every GPU line).
  if (line.find("Hardware Error]:") == std::string_view::npos) return false;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  LogPrefix p;
  const auto g = kmsg::parse_ghes_line(kmsg::strip_log_prefix(line, p));
  if (!g) return false;
  if (opt_.classify_lines) ++st_.kernel_lines;
  if (!hmode_ && (p.delta_s || p.minute_line)) {
    hmode_ = true;
    rebuild_h_clock(static_cast<size_t>(line.data() - text_.data()));
    walk_ = true;
  }
  const bool header = kmsg::starts_record(*g);
  if (!ghes_ || header || ghes_->record() != g->record || ghes_->starts_another(*g)) {
    end_ghes();
    ghes_.emplace(g->record);
    ghes_first_ = Event{};
    ghes_first_.time_ms = p.time_ms;
    ghes_first_.uptime_s = p.uptime_s;
    ghes_first_.time_in_year_ms = p.time_in_year_ms;
    if (hmode_) h_clock(p, &ghes_first_);
    ghes_line_no_ = line_no;
    ghes_lines_ = 0;
  } else if (hmode_) {
    h_clock(p, nullptr);
  }
  ++ghes_lines_;
  ghes_->add(*g);
  return true;
}

void Stream::end_ghes() {
  if (!ghes_) return;
  std::vector<Event> evs = ghes_->events();
  ghes_.reset();
  if (evs.empty()) return;
  flush();
  st_.gpu_lines += ghes_lines_;
  for (Event& ev : evs) {
    ev.time_ms = ghes_first_.time_ms;
    ev.uptime_s = ghes_first_.uptime_s;
    ev.time_in_year_ms = ghes_first_.time_in_year_ms;
    ev.origin = origin_of(origin_, ghes_line_no_);
    emit(std::move(ev));
  }
}

void Stream::gpu_line(std::string_view line, size_t line_no) {
  if (ghes_line(line, line_no)) return;
  ParsedLine pl = kmsg::parse_line(line);
  if (pl.prefix.time_refused) ++st_.untimed_lines;
  if (!hmode_ && (pl.prefix.delta_s || pl.prefix.minute_line)) {
    hmode_ = true;
    rebuild_h_clock(static_cast<size_t>(line.data() - text_.data()));
    walk_ = true;
  }
  if (hmode_) h_clock(pl.prefix, &pl.ev);
  if (opt_.classify_lines) ++st_.kernel_lines;
  // Does this line continue the message being joined?
  // An AER report is joined by aer_follow alone: an NVRM line after it is a message of its own.
  const bool adjacent = pending_ && line_no == pending_last_ + 1 &&
                        pending_lines_ < kMaxJoinedLines &&
                        pending_->driver_kind != DriverMessageKind::kPcieAer;
  const bool continues =
      adjacent && (pl.role == LineRole::kDriverText ||
                   (pending_announce_ && pl.role == LineRole::kEvent && !pl.ev.pci_bus_id &&
                    (pl.ev.kind == EventKind::kFallenOffBus || pl.ev.driver_kind)));
  if (continues) {
    Event& ev = *pending_;
    if (ev.message.size() < kMaxJoinedChars) {
      ev.message += ' ';
      ev.message.append(pl.body.empty() ? std::string_view(pl.ev.message) : pl.body);
    }
    if (pending_announce_) {
      kmsg::classify_driver_text(ev.message, ev);
      if (ev.kind == EventKind::kFallenOffBus || ev.driver_kind) pending_announce_ = false;
    }
    pending_last_ = line_no;
    ++pending_lines_;
    ++st_.gpu_lines;
    return;
  }
  if (pl.role == LineRole::kBad) {
    flush();
    if (errors_ && st_.bad_lines < kMaxLineErrors)
      errors_->push_back(line_error(origin_, line_no, pl.error));
    ++st_.bad_lines;
    return;
  }
  if (pl.role == LineRole::kNone || pl.role == LineRole::kDriverText) {
    if (!dump_line(line, line_no)) unread_gpu(line, line_no);
    return;
  }
  flush();
  ++st_.gpu_lines;
  if (pl.role == LineRole::kEvent) event_seen(line_no);
  pl.ev.origin = origin_of(origin_, line_no);
  if (pl.role == LineRole::kEvent &&
      (pl.ev.kind == EventKind::kXid || pl.ev.kind == EventKind::kSXid)) {
    emit(std::move(pl.ev));
    return;
  }
  // Driver messages and announcements may go on over the next lines.
  pending_ = std::move(pl.ev);
  pending_announce_ = pl.role == LineRole::kAnnounce;
  pending_last_ = line_no;
  pending_lines_ = 1;
}

// After an AER report's line, the lines that carry no anchor but belong to it: its untagged
// details (joined into it: severity, type, status, the error bits) and other devices' lines
// of the same error (the GPU's own "PCIe Bus Error", its driver's "no AER-aware driver"),
// each a report of its own. Returns where the scan goes on.
size_t Stream::aer_follow(size_t pos) {
  constexpr size_t kMaxAerChars = 1200;
  const size_t n = text_.size();
  for (int guard = 0; guard < 64 && pos < n; ++guard) {
    if (!pending_ || pending_->driver_kind != DriverMessageKind::kPcieAer) break;
    const size_t e = line_end(pos);
    const std::string device(kmsg::aer_device_of(pending_->message));
    kmsg::ParsedLine pl = kmsg::aer_follow_line(text_.substr(pos, e - pos), device);
    if (pl.role == LineRole::kNone) break;
    if (opt_.classify_lines) ++st_.kernel_lines;
    ++st_.gpu_lines;
    if (pl.role == LineRole::kDriverText) {
      if (pending_->message.size() < kMaxAerChars) {
        pending_->message += ' ';
        pending_->message.append(pl.body);
      }
    } else {
      flush();
      if (hmode_) h_clock(pl.prefix, &pl.ev);
      pl.ev.origin = origin_of(origin_, line_no_);
      pending_ = std::move(pl.ev);
      pending_lines_ = 1;
    }
    pending_last_ = line_no_;
    pos = e + 1;
    cur_ = std::min(pos, n);
    ++line_no_;
  }
  return pos;
}

KernelLogStats Stream::run() {
  const size_t n = text_.size();
  walk_ = opt_.classify_lines;
  mentions_ = static_cast<bool>(opt_.on_unread_gpu_line);
  size_t pos = 0;
  constexpr size_t kProgressStep = size_t{1} << 20;
  size_t next_report = opt_.on_progress ? kProgressStep : n + 1;
  while (pos < n) {
    if (pos >= next_report) {
      opt_.on_progress(pos);
      next_report = pos + kProgressStep;
    }
    // The scan stops at the next report so that progress is told about every MiB.
    const size_t stop = std::min(n, next_report);
    const size_t h = kmsg::next_anchor(text_, pos, stop, mentions_);
    if (h >= stop) {
      pos = stop;
      continue;
    }
    const bool event = anchor_at(h);
    if (!event && !(mentions_ && mention_at(h))) {
      pos = h + 1;
      continue;
    }
    const void* nl = h > 0 ? memrchr(text_.data(), '\n', h) : nullptr;
    const size_t ls = nl ? static_cast<size_t>(static_cast<const char*>(nl) - text_.data()) + 1 : 0;
    const size_t le = line_end(h);
    advance_to(ls);
    if (event)
      gpu_line(text_.substr(ls, le - ls), line_no_);
    else
      mention_line(text_.substr(ls, le - ls), line_no_);
    pos = le + 1;
    cur_ = std::min(pos, n);
    ++line_no_;
    if (event) pos = aer_follow(pos);
  }
  end_ghes();
  flush();
  unread_fault_context();
  if (walk_) {
    advance_to(n);  // a last line without '\n' counts as a line there
    st_.lines = line_no_ - 1;
  } else {
    const bool partial = cur_ < n && text_.back() != '\n';
    line_no_ += text::count_newlines(text_.data() + cur_, n - cur_);
    st_.lines = line_no_ - 1 + (partial ? 1 : 0);
  }
  return st_;
}

}  // namespace

std::optional<Event> parse_kernel_log_line(std::string_view line, std::string_view origin,
                                           size_t line_no, Error* error) {
  ParsedLine pl = kmsg::parse_line(line);
  if (pl.role == LineRole::kBad) {
    if (error) *error = line_error(origin, line_no, pl.error);
    return std::nullopt;
  }
  if (pl.role != LineRole::kEvent) return std::nullopt;
  pl.ev.origin = origin_of(origin, line_no);
  return std::move(pl.ev);
}

std::optional<Event> parse_fault_line(std::string_view line, std::string_view before,
                                      std::string_view origin, size_t line_no) {
  using F = kmsg::FaultLine;
  const F kind = kmsg::classify_fault_line(line);
  if (kind != F::kIp && kind != F::kSanitizer) return std::nullopt;
  LogPrefix p;
  const std::string_view body = kmsg::strip_log_prefix(line, p);
  Event ev;
  ev.kind = EventKind::kDriverMessage;
  ev.time_ms = p.time_ms;
  ev.uptime_s = p.uptime_s;
  ev.time_in_year_ms = p.time_in_year_ms;
  ev.origin = origin_of(origin, line_no);
  const kmsg::FaultHeader h = kmsg::fault_header_before(before);
  const bool crash = kind == F::kIp && h.kind != kmsg::FaultKind::kWarning;
  ev.driver_kind = crash ? DriverMessageKind::kKernelFault : DriverMessageKind::kKernelWarning;
  ev.code = static_cast<unsigned>(*ev.driver_kind);
  ev.pid = h.pid;
  if (!h.comm.empty()) ev.process_name = h.comm;
  // "header | site | line" (diagnose/kernel_fault.cpp); no header: the report was cut. A
  // sanitizer's line is its own header.
  const std::string text(body.substr(0, 200));
  std::string site;
  if (const auto fs = kmsg::fault_site(line); fs && kind == F::kIp)
    site = fs->symbol + (fs->module.empty() ? "" : " [" + fs->module + "]");
  ev.message = (kind == F::kIp ? h.text : text.substr(0, 160)) + " | " + site + " | " + text;
  return ev;
}

KernelLogStats parse_kernel_log_stream(std::string_view text, std::string_view origin,
                                       const EventSink& sink, std::vector<Error>* errors,
                                       const KernelLogParseOptions& options) {
  return Stream(text, origin, sink, errors, options).run();
}

KernelLogStats parse_kernel_log_stream(std::string_view text, std::string_view origin,
                                       const EventSink& sink, std::vector<Error>* errors) {
  static const KernelLogParseOptions kDefaults;
  return parse_kernel_log_stream(text, origin, sink, errors, kDefaults);
}

namespace {

// Driver messages of a normal start or of normal work (each one is known and benign).
constexpr std::array<std::string_view, 30> kRoutine = {
    "loading out-of-tree module taints kernel",
    "module license 'NVIDIA' taints kernel",
    "module verification failed",
    "module uses symbols from proprietary module",
    "NVRM: loading NVIDIA UNIX",
    "Nvlink Core is being initialized",
    "Loading NVIDIA Kernel Mode Setting Driver",
    "Loaded the UVM driver",
    "Initialized nvidia-drm",
    "[nvidia-drm] [GPU ID",
    "Unknown symbol in module",
    "enabling device (",
    "vgaarb:",
    "HDA NVidia",
    "snd_hda",
    "NVRM: GPU at PCI:",
    "NVRM: GPU Board Serial Number",
    "Persistence mode is deprecated",
    "nvidia-nvswitch: Probing device",
    "nvidia-fs",
    ": using MSI",
    ": open (major=",
    "nvlink driver open",
    "nvlink driver close",
    "Unregistered the Nvlink Core",
    "Enabling HDA controller",
    ".nvidia.com/",  // a URL (Mellanox OFED's backport banner)
    "apparmor=",     // a profile named after a tool (nvidia_modprobe) being loaded
    // The driver clears a stale FBHUB interrupt left from before its start (A100/H100 family,
    // at start-up and after a reset): a workaround at work, no fault.
    "FBHUB Interrupt detected. Clearing it",
    // Legacy interrupt routing ("PCI INT A -> GSI 16 (level, low) -> IRQ 16", and in VMs with
    // passed-through GPUs "can't derive routing for PCI INT A", "PCI INT A: no GSI"): the
    // driver uses MSI either way.
    "PCI INT ",
};
// is_routine_driver_line tests a pattern's first three bytes before comparing the rest.
static_assert([] {
  for (std::string_view r : kRoutine)
    if (r.size() < 3) return false;
  return true;
}());

}  // namespace

bool names_gpu_stack(std::string_view line) {
  // One pass for the eight words (each searched in turn was a fifth of the CPU of a log of
  // prose, where every line not understood is asked this).
  static constexpr std::array<std::string_view, 8> kWords = {
      "nvidia", "nvrm", "cuda", "nccl", "dcgm", "gpu", "nvlink", "nvswitch"};
  static const text::PhraseSet words(kWords, true);
  return words.any(line);
}

namespace {

// kRoutine's patterns by their first byte, so that a line is walked once instead of once per
// pattern (31 searches were 6-9 % of a kernel log's parse).
struct RoutineIndex {
  struct Bucket {
    uint8_t n = 0;
    std::array<uint8_t, 7> ids{};
  };
  std::array<Bucket, 256> by_first{};
  constexpr RoutineIndex() {
    for (size_t k = 0; k < kRoutine.size(); ++k) {
      Bucket& b = by_first[static_cast<unsigned char>(kRoutine[k][0])];
      b.ids.at(b.n++) = static_cast<uint8_t>(k);
    }
  }
};
constexpr RoutineIndex kRoutineIndex;

// The byte pairs that begin a pattern of kRoutine, as bits: a line's bytes mostly begin none, so
// a position is compared with the patterns of its first byte only where its pair is one of
// these (the prefix of a journal line alone has some 20 bytes that begin a pattern).
struct RoutinePairs {
  std::array<uint64_t, 1024> bits{};
  static constexpr unsigned key(unsigned char a, unsigned char b) { return a | unsigned{b} << 8; }
  constexpr RoutinePairs() {
    for (std::string_view r : kRoutine) {
      const unsigned k = key(static_cast<unsigned char>(r[0]), static_cast<unsigned char>(r[1]));
      bits[k >> 6] |= uint64_t{1} << (k & 63);
    }
  }
  bool begins(const char* at) const {
    const unsigned k = key(static_cast<unsigned char>(at[0]), static_cast<unsigned char>(at[1]));
    return (bits[k >> 6] >> (k & 63)) & 1u;
  }
};
constexpr RoutinePairs kRoutinePairs;

// Whether a pattern of kRoutine starts at d[i] (i + 1 < n).
inline bool routine_at(const char* d, size_t n, size_t i) {
  if (!kRoutinePairs.begins(d + i)) return false;
  const RoutineIndex::Bucket& b = kRoutineIndex.by_first[static_cast<unsigned char>(d[i])];
  for (uint8_t k = 0; k < b.n; ++k) {
    const std::string_view r = kRoutine[b.ids[k]];
    // Every pattern has 3 bytes or more: the third is tested before the call.
    if (d[i + 1] == r[1] && n - i >= r.size() && d[i + 2] == r[2] &&
        std::memcmp(d + i, r.data(), r.size()) == 0)
      return true;
  }
  return false;
}

bool routine_in(const char* d, size_t n) {
  for (size_t i = 0; i + 1 < n; ++i)
    if (routine_at(d, n, i)) return true;
  return false;
}

#if defined(__x86_64__)
// The pairs as Teddy tables (teddy.h), 32 positions a step: a position may begin a pattern where
// its byte and the next share a bucket bit. The pairs of one first byte share a bucket (8
// buckets, taken in turn); the extra pairs a bucket admits are turned away by routine_at. The
// walk above, a position at a time, was 10-13 % of the instructions of a kernel log's or
// journal's parse.
struct RoutineNibbles : kmsg::teddy::Tables<2> {
  constexpr RoutineNibbles() {
    std::array<uint8_t, 256> bucket_of{};  // a first byte's bucket + 1, 0 until it has one
    unsigned buckets = 0;
    for (std::string_view r : kRoutine) {
      const auto a = static_cast<unsigned char>(r[0]);
      if (bucket_of[a] == 0) bucket_of[a] = static_cast<uint8_t>(buckets++ % 8 + 1);
      add(0, bucket_of[a] - 1u, a);
      add(1, bucket_of[a] - 1u, static_cast<unsigned char>(r[1]));
    }
  }
};
constexpr RoutineNibbles kRoutineNibbles;

// Bit k: position p + k may begin a pattern (reads p[0..32]).
__attribute__((target("avx2"), always_inline)) inline uint32_t routine_candidates(
    const char* p, const __m256i (&lo)[2], const __m256i (&hi)[2]) {
  const __m256i c = _mm256_and_si256(kmsg::teddy::buckets32(p, lo[0], hi[0]),
                                     kmsg::teddy::buckets32(p + 1, lo[1], hi[1]));
  return ~static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(c, _mm256_setzero_si256())));
}

// routine_in for n >= 33: whole steps, then the last 33 bytes as one more (the positions the
// steps did not reach).
__attribute__((target("avx2"))) bool routine_in_avx2(const char* d, size_t n) {
  const __m256i lo[2] = {kmsg::teddy::wide_table(kRoutineNibbles.lo[0]),
                         kmsg::teddy::wide_table(kRoutineNibbles.lo[1])};
  const __m256i hi[2] = {kmsg::teddy::wide_table(kRoutineNibbles.hi[0]),
                         kmsg::teddy::wide_table(kRoutineNibbles.hi[1])};
  size_t i = 0;
  for (; i + 33 <= n; i += 32)
    for (uint32_t m = routine_candidates(d + i, lo, hi); m != 0; m &= m - 1)
      if (routine_at(d, n, i + static_cast<size_t>(__builtin_ctz(m)))) return true;
  if (i + 1 >= n) return false;
  const size_t last = n - 33;  // i - last is 1..31 here
  for (uint32_t m = routine_candidates(d + last, lo, hi) & (~0u << (i - last)); m != 0; m &= m - 1)
    if (routine_at(d, n, last + static_cast<size_t>(__builtin_ctz(m)))) return true;
  return false;
}
#endif

// The persistence daemon's lines are routine ("Started (1405)", "PID file unlocked.", a GPU's
// persistence mode enabled), its failures are not: "nvidia-persistenced failed to initialize",
// "NUMA: Failed to open ...: Permission denied", systemd's "status=1/FAILURE". Looked for
// only when no other routine pattern matched, so the scan above stays as it was.
bool persistence_daemon_routine(std::string_view line) {
  if (line.find("nvidia-persistenced") == std::string_view::npos &&
      line.find("NVIDIA Persistence Daemon") == std::string_view::npos)
    return false;
  for (std::string_view w : {"fail", "Fail", "FAIL", "denied", "rror"})
    if (line.find(w) != std::string_view::npos) return false;
  return true;
}

}  // namespace

bool is_routine_driver_line(std::string_view line) {
  const char* d = line.data();
  const size_t n = line.size();
#if defined(__x86_64__)
  if (n >= 33 && cpu::has_avx2()) return routine_in_avx2(d, n) || persistence_daemon_routine(line);
#endif
  return routine_in(d, n) || persistence_daemon_routine(line);
}

bool kernel_log_piece_may_start(std::string_view line) {
  LogPrefix p;
  const std::string_view body = kmsg::strip_log_prefix(line, p);
  if (!p.recognised || p.delta_s || p.minute_line) return false;
  // Stricter than the scan's anchors (Stream::anchor_at): any of these words keeps the line.
  for (std::string_view a : {"NVRM", "SXid", "AER:", "INFO: task", "Gb/s available",
                             "PCIe Bus Error", "[Hardware Error]:"})
    if (line.find(a) != std::string_view::npos) return false;
  // Nor a line of an AER report (its details are joined to the line before).
  return !kmsg::is_aer_line(body);
}

namespace {

bool own_time(const LogPrefix& p) {
  return p.recognised && !p.delta_s && !p.minute_line;
}

bool xid_event(const ParsedLine& pl) {
  return pl.role == LineRole::kEvent &&
         (pl.ev.kind == EventKind::kXid || pl.ev.kind == EventKind::kSXid);
}

// A line the stream reads on its own: it joins no message and none joins it.
bool lone_line(std::string_view line, const ParsedLine& pl) {
  return (pl.role == LineRole::kNone || pl.role == LineRole::kDriverText) &&
         !kmsg::is_driver_dump_line(line);
}

// Calls `f(k, line)` for up to `n` lines before the line at `at` (k = 0 the nearest), each
// trimmed, while it returns true; false when `f` did.
template <class F>
bool lines_before(std::string_view text, size_t at, size_t n, F f) {
  size_t end = at - 1;  // the '\n' that ends the line before
  for (size_t k = 0; k < n && end < text.size(); ++k) {
    const size_t nl = end == 0 ? std::string_view::npos : text.rfind('\n', end - 1);
    const size_t b = nl == std::string_view::npos ? 0 : nl + 1;
    if (!f(k, text::trim(text.substr(b, end - b)))) return false;
    if (b == 0) break;
    end = b - 1;
  }
  return true;
}

// The same for up to `n` lines from `at` on.
template <class F>
bool lines_from(std::string_view text, size_t at, size_t n, F f) {
  for (size_t k = 0; k < n && at < text.size(); ++k) {
    const size_t e = std::min(text.find('\n', at), text.size());
    if (!f(k, text::trim(text.substr(at, e - at)))) return false;
    at = e + 1;
  }
  return true;
}

bool fault_report_line(std::string_view line) {
  return kmsg::classify_fault_line(line) != kmsg::FaultLine::kNone;
}

bool ghes_line_text(std::string_view line) {
  return line.find("[Hardware Error]") != std::string_view::npos;
}

// A firmware error record's first line: the record before it ends there.
bool ghes_record_start(std::string_view line) {
  if (!ghes_line_text(line)) return false;
  LogPrefix p;
  const auto g = kmsg::parse_ghes_line(kmsg::strip_log_prefix(line, p));
  return g && kmsg::starts_record(*g);
}

// A PCIe AER report's lines (aer_follow joins a report's details and its siblings' lines to it;
// a report's own "AER: " line starts a new one).
bool aer_line(std::string_view line) {
  LogPrefix p;
  return kmsg::is_aer_line(kmsg::strip_log_prefix(line, p));
}
bool aer_report_start(std::string_view line) {
  return aer_line(line) && line.find(": AER: ") != std::string_view::npos;
}

constexpr size_t kCutLookBack = 100;  // Stream::kReportLines
constexpr size_t kDumpReach = 40;     // Stream::kDumpLines

// What may stand near a cut: a kernel fault report's lines are gathered over kCutLookBack lines
// (only where the cut line starts the next report); a firmware error record's over any span
// (only where the cut line starts one);
// a driver dump line waits for an event within kDumpReach lines on either side (only where
// the cut line is an Xid line with another within reach before it: each dump line near is
// read already, or is the cut line's).
struct Seam {
  bool ghes_ends = false;
  bool dumps_read = false;
  bool report_ended = false;
};

bool clean_seam(std::string_view text, size_t at, Seam seam) {
  return lines_before(
             text, at, kCutLookBack,
             [&](size_t k, std::string_view line) {
               return (seam.report_ended || !fault_report_line(line)) &&
                      (seam.ghes_ends || !ghes_line_text(line)) &&
                      (seam.dumps_read || k >= kDumpReach || !kmsg::is_driver_dump_line(line));
             }) &&
         (seam.dumps_read || lines_from(text, at, kDumpReach, [](size_t, std::string_view line) {
            return !kmsg::is_driver_dump_line(line);
          }));
}

// A kernel fault report's first line right after the end of the one before ("---[ end trace"):
// the reports of a fault storm, each whole on its side of the cut (the header a report's IP
// line looks back for is the one just after the cut).
bool next_report_starts(std::string_view text, size_t at, std::string_view line) {
  if (!kmsg::is_fault_header(line) && line.find("[ cut here ]") == std::string_view::npos)
    return false;
  bool ended = false;
  lines_before(text, at, 1, [&](size_t, std::string_view before) {
    ended = before.find("---[ end trace") != std::string_view::npos;
    return true;
  });
  return ended;
}

// An Xid line within kDumpReach lines before `at`: the cut line (an Xid line too) finds no
// dump line waiting, and the dump lines after it are its own either way.
bool xid_just_before(std::string_view text, size_t at) {
  bool found = false;
  lines_before(text, at, kDumpReach, [&](size_t, std::string_view line) {
    found = xid_event(kmsg::parse_line(line));
    return !found;
  });
  return found;
}

}  // namespace

bool kernel_log_may_cut(std::string_view text, size_t at) {
  if (at == 0 || at >= text.size() || text[at - 1] != '\n') return false;
  const size_t le = std::min(text.find('\n', at), text.size());
  const std::string_view line = text::trim(text.substr(at, le - at));
  if (kernel_log_piece_may_start(line))
    return clean_seam(text, at, {.report_ended = next_report_starts(text, at, line)});
  // A run of GPU lines alone (an Xid storm, an Xid 119 flood with the driver's dumps, a PCIe
  // AER or firmware-error flood, the driver repeating a line) has no such line.
  // A firmware error record's first line ends the record before (its lines join no message).
  if (ghes_record_start(line)) {
    LogPrefix p;
    kmsg::strip_log_prefix(line, p);
    return own_time(p) && clean_seam(text, at, {.ghes_ends = true});
  }
  const ParsedLine first = kmsg::parse_line(line);
  if (!own_time(first.prefix)) return false;
  // An Xid line is emitted at once and joins nothing; with another within reach before it, no
  // dump line waits across it.
  if (xid_event(first) && xid_just_before(text, at))
    return clean_seam(text, at, {.dumps_read = true});
  // A line that starts an AER report after another report's line (that report ends there); or
  // a line after driver text that neither joins a message nor is joined (no message within
  // reach of this line), joining no AER report itself.
  const bool starts_report = aer_report_start(line);
  if (!starts_report && aer_line(line)) return false;
  bool lone = true;
  return lines_before(text, at, kMaxJoinedLines + 1,
                      [&](size_t k, std::string_view before) {
                        if (k == 0 && starts_report && aer_line(before)) lone = false;
                        return !lone || lone_line(before, kmsg::parse_line(before));
                      }) &&
         clean_seam(text, at, {});
}

bool looks_like_kernel_log_line(std::string_view line) {
  LogPrefix p;
  const auto body = kmsg::strip_log_prefix(line, p);
  if (p.recognised) return true;
  // A log quoted in a reply or an e-mail ("> Apr 28 10:17:39 host kernel: ...").
  std::string_view unquoted = body;
  while (!unquoted.empty() && unquoted.front() == '>') unquoted = text::trim(unquoted.substr(1));
  if (unquoted.size() < body.size()) {
    kmsg::strip_log_prefix(unquoted, p);
    if (p.recognised) return true;
  }
  return text::starts_with(body, "NVRM") || body.find("NVRM: ") != std::string_view::npos ||
         body.find("SXid (") != std::string_view::npos || kmsg::is_aer_line(body) ||
         kmsg::parse_ghes_line(body).has_value() ||
         kmsg::classify_fault_line(body) != kmsg::FaultLine::kNone ||
         kmsg::parse_monitor_xid_line(body).has_value() ||
         text::starts_with(body, "-- Logs begin") || text::starts_with(body, "-- Journal begins") ||
         text::starts_with(body, "-- No entries --") || text::starts_with(body, "-- Boot ");
}

}  // namespace gw
