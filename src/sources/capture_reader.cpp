// One captured text -> Observation, part by part (see capture_reader.h). Hot paths: a 1 GB CSV
// is one block read by the CSV parser itself (it finds the block's end in the same pass), and
// a 1 GB kernel log costs one newline search and a first-byte test per line.
#include "sources/capture_reader.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_set>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sources/app/app_messages.h"
#include "sources/app/bw_matrix.h"
#include "sources/app/gpu_burn.h"
#include "sources/app/lightning_profiler.h"
#include "sources/app/megatron_log.h"
#include "sources/app/nccl_tests.h"
#include "sources/app/nccl_topology.h"
#include "sources/app/step_timing.h"
#include "sources/app/torch_profiler.h"
#include "sources/app/trainer_progress.h"
#include "sources/bugreport/bug_report.h"
#include "sources/capture_merge.h"
#include "sources/capture_text.h"
#include "sources/dcgm/dcgm_text.h"
#include "sources/dcgm/diag_json.h"
#include "sources/env/env_reports.h"
#include "sources/kmsg/kernel_log.h"
#include "sources/record_fold.h"
#include "sources/smi/smi_csv.h"
#include "sources/smi/smi_nvlink.h"
#include "sources/smi/smi_parsers.h"
#include "sources/smi/smi_reset.h"
#include "sources/smi/text_util.h"

namespace gw {

namespace {

using capture_text::Line;

// The next '\n' at or after `i`, else `n`: inline, 16 bytes a step (a memchr call per dmesg line
// was a third of a kernel-log parse).
size_t find_newline(const char* d, size_t i, size_t n) {
#if defined(__SSE2__)
  const __m128i nl = _mm_set1_epi8('\n');
  for (; i + 16 <= n; i += 16) {
    const auto m = static_cast<unsigned>(_mm_movemask_epi8(
        _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(d + i)), nl)));
    if (m != 0) return i + static_cast<size_t>(__builtin_ctz(m));
  }
#endif
  for (; i < n; ++i)
    if (d[i] == '\n') return i;
  return n;
}

// The first '.' or ']' in [i, end), else end: 16 bytes at once where they are there.
size_t dot_or_bracket(const char* d, size_t i, size_t end) {
#if defined(__SSE2__)
  if (i + 16 <= end) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + i));
    const auto m = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(
        _mm_cmpeq_epi8(v, _mm_set1_epi8('.')), _mm_cmpeq_epi8(v, _mm_set1_epi8(']')))));
    if (m != 0) return i + static_cast<size_t>(__builtin_ctz(m));
    i += 16;
  }
#endif
  while (i < end && d[i] != '.' && d[i] != ']') ++i;
  return i;
}

// How far ahead of the walk the text is prefetched. The walk is the first to touch each byte
// of a mapped log, and the hardware prefetcher stops at every 4 KiB page: without this, the
// walk waited on memory for about a third of a kernel log's CPU time (docs/perf/parse.md).
constexpr size_t kPrefetchAhead = 4096;

// A "[ 1234.567890] ..." line from `pos` to its newline `nl`: starts "[<digit or space>", has
// its '.' before the ']' (an MPI rank tag "[0]" has none), is at least 4 bytes long.
bool plain_dmesg_line(const char* d, size_t pos, size_t nl) {
  if (nl < pos + 4 || d[pos] != '[' ||
      !(d[pos + 1] == ' ' || (d[pos + 1] >= '0' && d[pos + 1] <= '9')))
    return false;
  const size_t q = dot_or_bracket(d, pos + 1, std::min(nl, pos + 24));
  return q < nl && d[q] == '.';
}

// Lines from `pos` that the reader's per-line test would take for the kernel log anyway, with
// nothing to trim (a first and a last byte that are not blank): plain dmesg lines and syslog or
// journal kernel lines (capture_text::is_syslog_kernel). Takes those starting before `stop`;
// returns the position after the last one and counts them. Anything else is left to that test.
size_t skip_kernel_lines(std::string_view t, size_t pos, size_t stop, size_t& lines) {
  const char* d = t.data();
  const size_t n = t.size();
  size_t ahead = pos;
  capture_text::SyslogKernelPrefix known;  // the last syslog kernel line, as a pattern
  while (pos < stop && pos + 1 < n && static_cast<unsigned char>(d[pos]) > ' ') {
    for (const size_t want = std::min(pos + kPrefetchAhead, n); ahead < want; ahead += 64)
      __builtin_prefetch(d + ahead);
    const size_t nl = find_newline(d, pos + 1, n);
    if (nl >= n || static_cast<unsigned char>(d[nl - 1]) <= ' ') break;
    if (!plain_dmesg_line(d, pos, nl)) {
      if (d[pos] == '[') break;
      const std::string_view line(d + pos, nl - pos);
      if (!capture_text::like_syslog_kernel(line, known)) {
        known = capture_text::syslog_kernel_prefix(line);
        if (known.end == 0) break;
      }
    }
    pos = nl + 1;
    ++lines;
  }
  return pos;
}

class Reader {
 public:
  Reader(std::string_view text, std::string_view origin, Observation& obs,
         const CaptureProgress& progress)
      : text_(text),
        origin_(origin),
        obs_(obs),
        progress_(progress),
        events_(obs),
        app_merge_(obs.app_messages.size(), obs.app_messages_read),
        next_fold_(obs.app_messages.size() + kFoldEvery),
        dcgm_fold_(obs.dcgm.size(), kMaxDcgmResultsPerInput),
        errors_first_(obs.input_errors.size()),
        next_errors_check_(errors_first_ + kErrorsCheckEvery),
        env_(std::string(origin)) {
    cov_.origin = std::string(origin);
    if (!progress_) next_report_ = std::string_view::npos;  // the hot loop's test never passes
    // Context lines (a traceback, a runtime hook's line) no message came with: not read.
    app_.on_unbacked_context(
        [this](size_t line_no, std::string_view line) { not_understood(line_no, line); });
  }
  Reader(const Reader&) = delete;  // app_ calls back into this object
  Reader& operator=(const Reader&) = delete;

  std::vector<CaptureSegment> run();

 private:
  Line line_at(size_t pos) const { return capture_text::line_at(text_, pos); }
  bool try_block(const Line& l);
  bool take_csv(const Line& l);
  std::string headerless_csv(const Line& l, std::string& note);
  bool take_dcgm(const Line& l);
  size_t json_end(size_t begin) const;
  size_t block_end(const Line& first, bool (*fits)(const Line&),
                   CaptureFormat f = CaptureFormat::kUnknown);
  // No tool prints a block this long (`nvidia-smi -q` of 256 GPUs is ~3 MB): one that goes on
  // is read to here, and what follows as if nothing came before it (another block of its kind
  // where its next line starts one), so that no block is resident whole.
  static constexpr size_t kMaxBlock = size_t{16} << 20;
  size_t block_cut_ = 0;  // block_end stopped at kMaxBlock: the first line left out, else 0
  void report_cut_block(const Line& first);
  size_t past_interleaved(size_t end, std::vector<Line>& lines);
  size_t take_smi_dmon(const Line& l);
  void parse_block(CaptureFormat f, size_t begin, size_t end, size_t first_line);
  void parse_block_text(CaptureFormat f, std::string_view block, size_t first_line);
  void add_query_text(std::string_view block, size_t first_line);
  void add_table(std::string_view block, size_t first_line);
  void add_kernel_line(const Line& l);
  bool take_kernel_lines();
  void flush_kernel(bool more = false);
  void segment(CaptureFormat f, size_t first_line, size_t last_line);
  void not_understood(size_t line_no, std::string_view line);
  void gpu_unread(size_t line_no, std::string_view line);
  void rebase(size_t errors_before, size_t events_before, size_t first_line);
  bool take_bug_report_line(const Line& l);
  bool take_section_line(const Line& l);
  void note_bug_report();
  void note_left_out();
  void finish_host();
  // Snapshots of this input, every block's: one reducer for the input, so that a log of many
  // tables (`nvidia-smi -l`, a -q every minute) keeps as many as one long CSV does. The newest
  // waits in newest_ until the next one comes: the input's last is always kept.
  SampleReducer samples_;
  std::optional<Snapshot> newest_;
  void add_sample(Snapshot&& s);
  void hand_over(SampleReducer& block);  // a block's own reducer: its note, then its snapshots
  std::optional<SampleReducer> dmon_;    // the dmon pieces read so far, not yet handed over
  // dcgmi dmon's pieces: their readings so far, and where the last piece stopped.
  std::optional<dcgm::DmonReadings> dcgm_dmon_;
  size_t dcgm_dmon_end_ = std::string_view::npos;
  void finish_dcgm_dmon(std::vector<DcgmResult>* into = nullptr);
  void hand_over_dmon();
  void add_source(std::string what);
  void incomplete(std::string why);
  void finish_matrices();
  void take_by_evidence(const Line& l);
  std::optional<CaptureFormat> take_tool_line(const Line& l);
  bool take_nccl_topology(const Line& l);
  void finish();
  // Bytes fully read: a kernel-log run being collected counts once it is parsed.
  void report(size_t done) {
    if (!progress_ || done < next_report_) return;
    progress_(done, text_.size());
    reported_ = done;
    next_report_ = done + kProgressStep;
  }
  static constexpr size_t kProgressStep = size_t{1} << 20;

  std::string_view text_, origin_;
  Observation& obs_;
  const CaptureProgress& progress_;
  size_t next_report_ = kProgressStep;
  size_t reported_ = 0;
  EventReducer events_;
  AppScanner app_;
  // Repeated messages folded as they settle: every kFoldEvery new ones, all but the last
  // kFoldTail (those a scanner may still add to).
  AppMessageMerge app_merge_;
  static constexpr size_t kFoldEvery = 1024, kFoldTail = 64;
  size_t next_fold_;
  void fold_app_messages(size_t tail) {
    app_.moved(app_merge_.fold(obs_.app_messages, tail));
    next_fold_ = obs_.app_messages.size() + kFoldEvery;
  }
  // DCGM tables and lines that repeat, each table folded whole into its first copy.
  GroupFold<DcgmResult> dcgm_fold_;
  // What DCGM's lines gave, before the fold: the last one stays until the next DCGM record, for
  // the detail line that may follow it (a failure code's "GPU_UUID:GPU-... IMEX ...").
  std::vector<DcgmResult> dcgm_line_;
  void fold_dcgm_lines(size_t keep) {
    while (dcgm_line_.size() > keep) {
      dcgm_fold_.add(obs_.dcgm, std::move(dcgm_line_.front()));
      dcgm_line_.erase(dcgm_line_.begin());
    }
  }
  // Notes and reasons past kMaxListedNotes of each are counted, not kept: one input's share of
  // the report stays bounded (a log of a thousand cut tables).
  static constexpr size_t kMaxListedNotes = 32;
  size_t notes_listed_ = 0, notes_unlisted_ = 0, reasons_unlisted_ = 0;
  enum class NoteIn { kBoth, kCoverage, kReport };
  void note(std::string text, NoteIn where = NoteIn::kBoth);
  void put_note(std::string text, NoteIn where = NoteIn::kBoth);
  // This input's errors: the first kErrorsPerCode of each code are listed, the rest counted
  // (checked every kErrorsCheckEvery new ones and at the end).
  static constexpr size_t kErrorsPerCode = 20, kErrorsCheckEvery = 256;
  size_t errors_first_, next_errors_check_;
  std::map<std::string, size_t> errors_unlisted_;  // by code
  void bound_errors();
  StepTimingSum steps_;                  // a training log's step timing, one message for the input
  MegatronLog megatron_;                 // Megatron-LM's iteration reports and timers (into steps_)
  NvlinkStatusScanner nvlink_;           // nvidia-smi nvlink -s / -e / -c link lines
  SmiResetScanner resets_;               // nvidia-smi -r: refusals and resets
  LightningProfilerScanner profiler_;    // Lightning's SimpleProfiler report (its table rows)
  TorchProfilerScanner torch_profiler_;  // torch.profiler's key_averages() table
  BurnScanner burn_;                     // gpu_burn's run, one per input
  NcclTestsScanner nccl_tests_;
  NcclTopology nccl_topology_;  // NCCL_DEBUG=INFO's paths, when this input prints them
  BandwidthMatrixScanner matrices_;
  EnvReader env_;
  HostFacts host_;
  InputCoverage cov_;
  std::vector<CaptureSegment> segs_;
  static constexpr size_t kMaxSegments = 4096;
  size_t pos_ = 0, line_no_ = 0;
  // The kernel-log run being collected: [begin, end) of the text, its first and last line.
  size_t k_begin_ = std::string_view::npos, k_end_ = 0, k_first_ = 0, k_last_ = 0;
  std::vector<size_t> k_app_taken_;  // lines of that run the application scanner read
  // "Successfully ran diagnostic for group." seen and no diag table read since (its line).
  size_t diag_announced_ = 0;
  bool markdown_table_ = false;  // the lines since a Markdown table's separator row
  bool markdown_row(const Line& l);
  bool k_more_ = false;  // the last kernel-log segment goes on in the next piece
  // nvidia-bug-report.log: the section being read (kNone outside a bug report) and the lines
  // of sections that carry no GPU state, skipped without a reader (said in a note).
  bug_report::Section section_ = bug_report::Section::kNone;
  size_t br_sections_ = 0, br_skipped_ = 0;
  size_t gpu_select_line_ = 0;  // the last "nvidia-smi ... -i N" typed (0: none)
  // The columns of the last `--query-gpu=... --format=csv,noheader` command and its line.
  std::string query_header_;
  size_t query_line_ = 0;
  // A kernel-log run is parsed in pieces of about this size, so that the text behind the
  // parser can be handed back (InputText::release_before), and so that the parser reads a piece
  // the walk has just read while it is still in the CPU's L2 cache (4 MiB pieces were ~5 %
  // slower: docs/perf/parse.md).
  static constexpr size_t kKernelPiece = size_t{1} << 20;
  // The pieces of a long block: lspci's (block_end), the dmon logs' (text::walk_block).
  static constexpr size_t kBlockPiece = size_t{1} << 20;
  // The Xids of the run's pieces parsed so far (KernelLogParseOptions::xids_seen).
  std::unordered_set<uint64_t> k_xids_;
  // lspci's NVIDIA devices by address, and those past kMaxPciDevices.
  static constexpr size_t kMaxPciDevices = 256;
  std::set<std::string> pci_seen_;
  size_t pci_left_out_ = 0;
  size_t k_cut_retry_ = 0;  // may_cut looks again from here
  bool may_cut(const Line& l);
};

void Reader::segment(CaptureFormat f, size_t first_line, size_t last_line) {
  const bool more = std::exchange(k_more_, false);
  if (!segs_.empty() && segs_.back().format == f &&
      (f == CaptureFormat::kAppLog || f == CaptureFormat::kEnvReport || f == CaptureFormat::kDcgm ||
       f == CaptureFormat::kSmiNvlink || f == CaptureFormat::kSmiMessages ||
       f == CaptureFormat::kSmiDmon || (f == CaptureFormat::kKernelLog && more))) {
    segs_.back().lines = last_line - segs_.back().first_line + 1;
    return;
  }
  // Only whether anything was found, and the first format, are read from them: a file of
  // thousands of alternating parts keeps the first kMaxSegments.
  if (segs_.size() < kMaxSegments) segs_.push_back({f, first_line, last_line - first_line + 1});
  const std::string name(capture_format_name(f));
  for (const auto& x : cov_.formats)
    if (x == name) return;
  cov_.formats.push_back(name);
}

void Reader::not_understood(size_t line_no, std::string_view line) {
  ++cov_.lines_not_understood;
  if (capture_text::shows_wsl(text::trim(line))) host_.wsl = true;
  // Context lines come back late (AppScanner), so the first is the smallest, not the first seen.
  if (!cov_.first_not_understood_line || line_no < *cov_.first_not_understood_line)
    cov_.first_not_understood_line = line_no;
  if (names_gpu_stack(line) && !capture_text::is_decorative_prose(text::trim(line)))
    gpu_unread(line_no, line);
}

// A GPU line nothing read: listed with its text (the first few), always weighed.
void Reader::gpu_unread(size_t line_no, std::string_view line) {
  ++cov_.gpu_lines_not_read;
  if (cov_.gpu_unread.size() >= InputCoverage::kMaxListed) return;
  constexpr size_t kExcerpt = 160;
  std::string ex(text::trim(line.substr(0, kExcerpt)));
  if (line.size() > kExcerpt) ex += "...";
  cov_.gpu_unread.push_back({line_no, std::move(ex)});
}

void Reader::incomplete(std::string why) {
  cov_.incomplete = true;
  if (cov_.incomplete_reasons.size() < kMaxListedNotes)
    cov_.incomplete_reasons.push_back(std::move(why));
  else
    ++reasons_unlisted_;
}

// A note on this input: in its coverage entry, the report's notes, or both; past
// kMaxListedNotes only counted.
void Reader::note(std::string text, NoteIn where) {
  if (notes_listed_ >= kMaxListedNotes) {
    ++notes_unlisted_;
    return;
  }
  ++notes_listed_;
  put_note(std::move(text), where);
}

// A note said once per input (a summary): listed whatever the cap.
void Reader::put_note(std::string text, NoteIn where) {
  if (where != NoteIn::kReport) cov_.notes.push_back(text);
  if (where != NoteIn::kCoverage) obs_.notes.push_back(std::move(text));
}

// Parsers name lines relative to the block they were given: make them file lines again.
void Reader::rebase(size_t errors_before, size_t events_before, size_t first_line) {
  if (first_line <= 1) return;
  for (size_t i = errors_before; i < obs_.input_errors.size(); ++i)
    capture_text::shift_line(obs_.input_errors[i].where, origin_, first_line - 1);
  for (size_t i = events_before; i < obs_.events.size(); ++i)
    capture_text::shift_line(obs_.events[i].origin, origin_, first_line - 1);
}

void Reader::add_kernel_line(const Line& l) {
  if (k_begin_ != std::string_view::npos && may_cut(l)) flush_kernel(true);
  if (k_begin_ == std::string_view::npos) {
    k_begin_ = l.begin;
    k_first_ = l.no;
  }
  k_end_ = l.next;
  k_last_ = l.no;
}

// A run past a piece's size is cut before a line that no parser state crosses
// (kernel_log_may_cut), a run of GPU lines alone (an Xid storm: a 64 MB one peaked at 80 MB)
// too. Where the test (a hundred lines each side) says no, it is asked again some 64 KiB on.
bool Reader::may_cut(const Line& l) {
  if (l.begin - k_begin_ < kKernelPiece || l.begin < k_cut_retry_) return false;
  if (kernel_log_may_cut(text_, l.begin)) return true;
  // 32 to 96 KiB on, by a hash of where: a fixed step can fall on the same line of a record
  // that repeats every time (an Xid line and its dump: always the same dump line).
  k_cut_retry_ = l.begin + (size_t{32} << 10) + hash_mix(l.begin, k_begin_) % (size_t{64} << 10);
  return false;
}

// Inside a kernel-log run, the plain kernel lines that follow are added at once, up to the end
// of the current piece (add_kernel_line cuts pieces; progress is reported as pieces are parsed).
bool Reader::take_kernel_lines() {
  const size_t stop = std::min(k_begin_ + kKernelPiece, text_.size());
  size_t lines = 0;
  const size_t end = skip_kernel_lines(text_, pos_, stop, lines);
  if (lines == 0) return false;
  line_no_ += lines;
  cov_.lines += lines;
  k_end_ = end;
  k_last_ = line_no_;
  pos_ = end;
  return true;
}

void Reader::flush_kernel(bool more) {
  if (k_begin_ == std::string_view::npos) {
    k_more_ = false;
    return;
  }
  const size_t errs = obs_.input_errors.size(), evs = obs_.events.size();
  KernelLogParseOptions opt;
  if (progress_) opt.on_progress = [this](size_t done) { report(k_begin_ + done); };
  // The parser names lines from 1 within the run; lines it took nothing from are unread here.
  size_t app_i = 0;
  opt.on_unread_gpu_line = [this, &app_i](size_t no, std::string_view line) {
    const size_t at = k_first_ + no - 1;
    // Both ascend: one pass over the taken lines for the whole run.
    while (app_i < k_app_taken_.size() && k_app_taken_[app_i] < at) ++app_i;
    if (app_i < k_app_taken_.size() && k_app_taken_[app_i] == at) return;
    ++cov_.lines_not_understood;
    if (!cov_.first_not_understood_line || at < *cov_.first_not_understood_line)
      cov_.first_not_understood_line = at;
    gpu_unread(at, line);
  };
  opt.preceding = text_.substr(0, k_begin_);
  opt.xids_seen = &k_xids_;
  parse_kernel_log_stream(
      text_.substr(k_begin_, k_end_ - k_begin_), origin_,
      [&](Event&& e) { events_.add(std::move(e)); }, &obs_.input_errors, opt);
  rebase(errs, evs, k_first_);
  segment(CaptureFormat::kKernelLog, k_first_, k_last_);
  k_more_ = more;
  if (!more) k_xids_.clear();
  k_begin_ = std::string_view::npos;
  k_app_taken_.clear();
  report(k_end_);
}

namespace {

// The line that starts a table of the block's own kind again (a second print): nvidia-smi's
// banner, `topo -m`'s column header ("GPU0  GPU1 ... CPU Affinity"; a row is "GPU0  X  ...").
bool restarts_table(CaptureFormat f, std::string_view t) {
  if (f == CaptureFormat::kSmiTable) return text::starts_with(t, "| NVIDIA-SMI ");
  if (f != CaptureFormat::kSmiTopo || !text::starts_with(t, "GPU0")) return false;
  const std::string_view next = text::trim(t.substr(4));
  return text::starts_with(next, "GPU") || text::starts_with(next, "NIC") ||
         text::starts_with(next, "CPU");
}

}  // namespace

// Extends a block from `first` while lines fit it (blank lines may sit inside); ends after the
// last line that fits. For the tables a tool prints again and again (`nvidia-smi`, `topo -m` in
// a loop with no date line between), a second header ends the block (before its border, for
// nvidia-smi): each print is one snapshot or matrix, never one table of every print's rows.
// lspci's long block ends at a piece's size (see below).
size_t Reader::block_end(const Line& first, bool (*fits)(const Line&), CaptureFormat f) {
  block_cut_ = 0;
  size_t end = first.next, pos = first.next, last_no = first.no;
  size_t no = first.no;
  bool header = restarts_table(f, first.trimmed);
  // Where the block ended before the last line, when that line is a border.
  std::optional<std::pair<size_t, size_t>> before_border;
  while (pos < text_.size()) {
    Line l = line_at(pos);
    l.no = ++no;
    if (!l.trimmed.empty()) {
      if (!fits(l)) break;
      // `lspci -vv` of a big machine is a long block: read in pieces of about 1 MiB, each cut
      // before a device's first line, so that each is handed back once read. (The dmon logs,
      // blocks of days, find their own ends and pieces: text::walk_block.)
      if (f == CaptureFormat::kLspci && l.begin - first.begin >= kBlockPiece &&
          l.raw.front() != ' ' && l.raw.front() != '\t')
        break;
      if (l.begin - first.begin >= kMaxBlock) {
        block_cut_ = l.no;
        break;
      }
      if (restarts_table(f, l.trimmed)) {
        if (header) {
          if (before_border) std::tie(end, last_no) = *before_border;
          break;
        }
        header = true;
      }
      before_border.reset();
      if (text::starts_with(l.trimmed, "+-")) before_border.emplace(end, last_no);
      end = l.next;
      last_no = l.no;
    }
    pos = l.next;
  }
  line_no_ = last_no;
  return end;
}

// Another program's line inside nvidia-smi -q text (a vGPU layer's message such as HAMi-core's
// "[HAMI-core Msg(...)]: Initializing.....", a shell's stderr) does not end the block when the
// -q text goes on with a "Key : value" line right after it: the block is parsed without it,
// and the line is read on its own afterwards (`lines`).
size_t Reader::past_interleaved(size_t end, std::vector<Line>& lines) {
  constexpr size_t kMaxInterleaved = 8;
  const auto next_text_line = [&](size_t& pos, size_t& no, Line& out) {
    for (; pos < text_.size(); pos = out.next) {
      out = line_at(pos);
      out.no = ++no;
      if (!out.trimmed.empty()) {
        pos = out.next;
        return true;
      }
    }
    return false;
  };
  while (lines.size() < kMaxInterleaved) {
    size_t pos = end, no = line_no_;
    Line x, y;
    if (!next_text_line(pos, no, x) ||
        capture_text::block_start(x, text_) != CaptureFormat::kUnknown)
      return end;
    if (!next_text_line(pos, no, y) || capture_text::query_key(y.trimmed).empty() ||
        !capture_text::block_fits(CaptureFormat::kSmiQueryText)(y))
      return end;
    lines.push_back(x);
    end = block_end(y, capture_text::block_fits(CaptureFormat::kSmiQueryText));
  }
  return end;
}

void Reader::parse_block(CaptureFormat f, size_t begin, size_t end, size_t first_line) {
  parse_block_text(f, text_.substr(begin, end - begin), first_line);
}

void Reader::parse_block_text(CaptureFormat f, std::string_view block, size_t first_line) {
  const size_t errs = obs_.input_errors.size();
  switch (f) {
    case CaptureFormat::kSmiQueryXml: {
      auto r = parse_smi_query_xml(block, origin_);
      if (r)
        add_sample(std::move(r.value()));
      else
        obs_.input_errors.push_back(r.error());
      break;
    }
    case CaptureFormat::kSmiQueryText:
      add_query_text(block, first_line);
      break;
    case CaptureFormat::kSmiTable:
      add_table(block, first_line);
      break;
    case CaptureFormat::kSmiTopo: {
      auto t = parse_smi_topo(block, origin_);
      if (!t) {
        obs_.input_errors.push_back(t.error());
        break;
      }
      if (obs_.topology)
        note(std::string(origin_) + ":" + std::to_string(first_line) +
                 ": a second topo -m table replaces the first one read",
             NoteIn::kReport);
      obs_.topology = std::move(t.value());
      break;
    }
    case CaptureFormat::kLspci: {
      // One device listed twice (a bug report's `lspci -v -xxx` and `lspci -nn`) is one device.
      // No machine holds more than kMaxPciDevices NVIDIA functions: past them, counted.
      for (auto& d : parse_lspci(block)) {
        if (pci_seen_.count(d.pci_bus_id) > 0) continue;
        if (host_.nvidia_pci_devices.size() == kMaxPciDevices) {
          ++pci_left_out_;
          continue;
        }
        pci_seen_.insert(d.pci_bus_id);
        host_.nvidia_pci_devices.push_back(std::move(d));
      }
      add_source(std::string(origin_) + ": lspci");
      break;
    }
    default:
      break;
  }
  rebase(errs, obs_.events.size(), first_line);
  segment(f, first_line, line_no_);
}

void Reader::add_query_text(std::string_view block, size_t first_line) {
  QueryTextInfo qi;
  auto r = parse_smi_query_text_ex(block, origin_, &qi);
  if (!r) {
    obs_.input_errors.push_back(r.error());
    return;
  }
  Snapshot& s = r.value();
  const std::string at = std::string(origin_) + ":" + std::to_string(first_line);
  if (qi.header_only) {
    if (s.driver_version) host_.smi_driver_version = s.driver_version;
    if (s.cuda_driver_version) host_.smi_cuda_version = cuda_version_string(*s.cuda_driver_version);
    add_source(at + ": nvidia-smi -q header");
    incomplete("nvidia-smi -q header without any GPU section (" + at + ")");
    return;
  }
  if (qi.implicit_gpu) {
    std::string text = at +
                       ": nvidia-smi -q fragment without a 'GPU <bus id>' line: read as one GPU of "
                       "unknown bus id";
    note(std::move(text));
  }
  const size_t read = qi.gpu_sections + (qi.implicit_gpu ? 1 : 0);
  // "nvidia-smi -q -i 0" prints one GPU's section under the count of all attached GPUs.
  const bool selected =
      gpu_select_line_ > 0 && gpu_select_line_ < first_line && first_line - gpu_select_line_ <= 3;
  if (selected && qi.attached_gpus && *qi.attached_gpus > read)
    note(at + ": nvidia-smi -q for selected GPUs (-i): " + std::to_string(read) + " of " +
             std::to_string(*qi.attached_gpus) + " attached GPUs asked for",
         NoteIn::kCoverage);
  else if (qi.attached_gpus && *qi.attached_gpus > read)
    incomplete("Attached GPUs: " + std::to_string(*qi.attached_gpus) + " but " +
               std::to_string(read) + " GPU section(s) read (" + at + "): the others are unknown");
  cov_.elided_lines += qi.elided;
  add_sample(std::move(s));
}

void Reader::add_table(std::string_view block, size_t first_line) {
  auto r = parse_smi_table(block, origin_);
  if (r) {
    add_sample(std::move(r.value()));
    return;
  }
  // No GPU rows: keep what the banner says (a table cut after its header).
  text::LineReader rd(block);
  std::string_view line;
  bool banner = false;
  while (rd.next(line)) {
    if (auto b = parse_smi_banner_line(line)) {
      if (b->driver_version) host_.smi_driver_version = b->driver_version;
      if (b->cuda_version) host_.smi_cuda_version = b->cuda_version;
      banner = true;
    }
  }
  const std::string at = std::string(origin_) + ":" + std::to_string(first_line);
  if (banner) {
    add_source(at + ": nvidia-smi banner");
    incomplete("nvidia-smi table without GPU rows (" + at + "): cut after its header");
    return;
  }
  // The lower part of a table (the processes, a cut GPU row): nvidia-smi's, but no GPU in it.
  for (std::string_view mark : {"MiB", "Bus-Id", "Processes", "Persistence-M", "GPU-Util", "PID"})
    if (block.find(mark) != std::string_view::npos) {
      incomplete("part of an nvidia-smi table without its GPU rows (" + at + ")");
      return;
    }
  obs_.input_errors.push_back(r.error());
}

// Rows of `--format=csv,noheader`: named by the command a few lines above, else inferred from
// the values (and said so in `note`); "" when the line is no such row.
std::string Reader::headerless_csv(const Line& l, std::string& note) {
  if (l.trimmed.find("--query-gpu") != std::string_view::npos) {
    query_header_ = smi::query_header_of(l.trimmed);
    query_line_ = l.no;
    return {};
  }
  if (l.trimmed.find(',') == std::string_view::npos) return {};
  const std::string at = std::string(origin_) + ":" + std::to_string(l.no);
  if (!query_header_.empty() && l.no <= query_line_ + 3 &&
      smi::csv_row_fields(l.trimmed) ==
          static_cast<size_t>(std::count(query_header_.begin(), query_header_.end(), ',')) + 1) {
    note = at + ": CSV rows without a header: columns from the --query-gpu command at line " +
           std::to_string(query_line_) + " (" + query_header_ + ")";
    return query_header_;
  }
  size_t named = 0;
  std::string inferred = smi::infer_csv_header(l.trimmed, &named);
  if (inferred.empty()) return {};
  const size_t cols = static_cast<size_t>(std::count(inferred.begin(), inferred.end(), ',')) + 1;
  note = at +
         ": nvidia-smi CSV rows without a header or their command: columns inferred from the " +
         "values (" + inferred + "); the " + std::to_string(cols - named) +
         " unnamed columns are read only for failed readings";
  return inferred;
}

bool Reader::take_csv(const Line& l) {
  std::string header, note;
  if (!capture_text::looks_like_csv_header(l.trimmed)) {
    header = headerless_csv(l, note);
    if (header.empty()) return false;
  }
  flush_kernel();
  SampleReducer reducer;
  smi::CsvBlockInfo info;
  info.header = std::move(header);
  const smi::CsvStopFn other = [](std::string_view line) {
    return capture_text::claimed_by_other_format(text::trim(line));
  };
  const size_t errs = obs_.input_errors.size();
  const std::string_view rest = text_.substr(l.begin);
  if (progress_) info.on_progress = [this, &l](size_t done) { report(l.begin + done); };
  auto r = smi::parse_smi_csv_block(
      rest, origin_, [&](const Snapshot& s, bool last) { reducer.add(s, last); },
      &obs_.input_errors, smi::CsvPath::kFast, &other, &info);
  if (!r) {
    obs_.input_errors.push_back(r.error());
    return false;
  }
  rebase(errs, obs_.events.size(), l.no);
  if (!note.empty()) {
    query_header_.clear();
    this->note(std::move(note));
  }
  if (info.rows == 0)
    incomplete("CSV header with no data rows (line " + std::to_string(l.no) +
               "): nothing was sampled");
  cov_.elided_lines += info.elided;
  hand_over(reducer);
  const size_t end = l.begin + info.end;
  const size_t last = l.no + (info.end_line > 0 ? info.end_line - 1 : 0);
  line_no_ = last;
  pos_ = end;
  segment(CaptureFormat::kSmiCsv, l.no, last);
  return true;
}

namespace dcgm_fits {
bool diag(const Line& l) {
  return dcgm::block_fits(dcgm::Block::kDiagTable, l.trimmed);
}
bool health(const Line& l) {
  return dcgm::block_fits(dcgm::Block::kHealthTable, l.trimmed);
}
bool grid(const Line& l) {
  return dcgm::block_fits(dcgm::Block::kNvlinkGrid, l.trimmed);
}
// Discovery tables, stats reports and NVLink error counts end where the box does, like the
// diag table, or at the next box's title.
bool discovery(const Line& l) {
  return dcgm::block_fits(dcgm::Block::kDiscovery, l.trimmed);
}
bool stats(const Line& l) {
  return dcgm::block_fits(dcgm::Block::kStats, l.trimmed);
}
bool nvlink_errors(const Line& l) {
  return dcgm::block_fits(dcgm::Block::kNvlinkErrors, l.trimmed);
}
bool json(const Line& l) {
  return dcgm::json_like(l.trimmed);
}
}  // namespace dcgm_fits

// The end of a JSON object that starts at `begin` (its closing brace's line end), npos when it
// does not close within 1 MiB. Braces inside strings are skipped.
size_t Reader::json_end(size_t begin) const {
  constexpr size_t kMax = size_t{1} << 20;
  int depth = 0;
  bool in_str = false;
  for (size_t i = begin; i < text_.size() && i - begin < kMax; ++i) {
    const char c = text_[i];
    if (in_str) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_str = false;
      continue;
    }
    if (c == '"') in_str = true;
    if (c == '{') ++depth;
    if (c == '}' && --depth == 0) {
      const size_t nl = text_.find('\n', i);
      return nl == std::string_view::npos ? text_.size() : nl + 1;
    }
  }
  return std::string_view::npos;
}

// A DCGM block (diag table, nvlink grid, dmon, health JSON): first-byte gate, then its reader;
// a block its reader does not recognise is left to the others (an nvidia-smi table).
bool Reader::take_dcgm(const Line& l) {
  const char c = l.trimmed.front();
  if (c != '|' && c != '+' && c != '#' && c != '{') return false;
  const Line next = c == '+' || c == '|' ? line_at(l.next) : Line{};
  const dcgm::Block b = dcgm::block_start(l.trimmed, next.trimmed);
  if (b == dcgm::Block::kNone) return false;
  const size_t saved = line_no_;
  size_t end = 0;
  if (b == dcgm::Block::kJson) {
    end = json_end(l.begin);
    if (end != std::string_view::npos)
      line_no_ =
          l.no + text::count_newlines(text_.data() + l.next, end > l.next ? end - l.next : 0);
    else  // never closes (a paste cut mid-way): its JSON-looking lines
      end = block_end(l, dcgm_fits::json);
  } else if (b == dcgm::Block::kDmon) {
    // Read as it is found, in one pass (below): a dmon of days is millions of rows.
  } else {
    end = block_end(l,
                    b == dcgm::Block::kDiagTable     ? dcgm_fits::diag
                    : b == dcgm::Block::kHealthTable ? dcgm_fits::health
                    : b == dcgm::Block::kNvlinkGrid  ? dcgm_fits::grid
                    : b == dcgm::Block::kDiscovery   ? dcgm_fits::discovery
                    : b == dcgm::Block::kStats       ? dcgm_fits::stats
                                                     : dcgm_fits::nvlink_errors,
                    CaptureFormat::kDcgm);
  }
  std::vector<DcgmResult> found;
  // A dmon piece goes on where the last one stopped: one reader for all of them.
  if (b != dcgm::Block::kDmon || l.begin != dcgm_dmon_end_) finish_dcgm_dmon();
  dcgm::BlockInfo info;
  bool more = false;  // a dmon piece, the block going on
  if (b == dcgm::Block::kDmon) {
    text::BlockStop stop;
    info = (dcgm_dmon_ ? *dcgm_dmon_ : dcgm_dmon_.emplace())
               .read_from(text_, l.begin, l.no, {kBlockPiece, kMaxBlock}, origin_, found, stop);
    end = stop.end;
    line_no_ = stop.last_line;
    more = stop.more;
    block_cut_ = stop.cut_line;
  } else {
    info = dcgm::read_block(b, text_.substr(l.begin, end - l.begin), origin_, l.no, found);
  }
  if (!info.recognised && l.begin != dcgm_dmon_end_) {
    dcgm_dmon_.reset();
    line_no_ = saved;
    block_cut_ = 0;  // not this block's to report
    return false;
  }
  dcgm_dmon_end_ = more ? end : std::string_view::npos;
  if (b == dcgm::Block::kDmon && !more) finish_dcgm_dmon(&found);
  flush_kernel();
  if (b == dcgm::Block::kDiagTable) diag_announced_ = 0;
  fold_dcgm_lines(0);
  dcgm_fold_.add(obs_.dcgm, std::move(found));
  if (!info.cut.empty()) incomplete(info.cut + " (line " + std::to_string(l.no) + ")");
  report_cut_block(l);
  segment(CaptureFormat::kDcgm, l.no, line_no_);
  pos_ = end;
  return true;
}

bool Reader::markdown_row(const Line& l) {
  if (l.trimmed.front() != '|') return markdown_table_ = false;
  if (capture_text::is_markdown_separator(l.trimmed)) return markdown_table_ = true;
  if (markdown_table_) return true;
  // A header row: the separator follows it.
  return capture_text::is_markdown_separator(line_at(l.next).trimmed);
}

bool Reader::try_block(const Line& l) {
  block_cut_ = 0;  // each try starts clean: a block declined, JSON and XML leave it unset
  if (take_dcgm(l)) return true;
  if (take_csv(l)) return true;
  const CaptureFormat f = capture_text::block_start(l, text_);
  if (f == CaptureFormat::kUnknown) return false;
  flush_kernel();
  size_t end = 0;
  if (f == CaptureFormat::kSmiQueryXml) {
    // Through the closing tag (or to the end: a cut XML is the XML parser's to report), looked
    // for and its lines counted 4 MiB at a time, the bytes behind handed back (a document of
    // any size: one too big for the parser is refused, never held).
    constexpr std::string_view kClose = "</nvidia_smi_log>";
    constexpr size_t kStep = size_t{4} << 20;
    size_t close = std::string_view::npos, from = l.begin, lines = 0;
    while (from < text_.size() && close == std::string_view::npos) {
      const size_t to = std::min(text_.size(), from + kStep);
      close = text_.substr(0, std::min(text_.size(), to + kClose.size())).find(kClose, from);
      const size_t upto = close == std::string_view::npos ? to : close;
      const size_t count_from = std::max(from, l.next);
      if (upto > count_from)
        lines += text::count_newlines(text_.data() + count_from, upto - count_from);
      from = upto;
      report(from);
    }
    const size_t nl = close == std::string_view::npos ? close : text_.find('\n', close);
    end = nl == std::string_view::npos ? text_.size() : nl + 1;
    // The closing tag's line, counted from where the search stopped.
    const size_t tail = std::max(from, l.next);
    if (end > tail) lines += text::count_newlines(text_.data() + tail, end - tail);
    line_no_ = l.no + lines + (end > l.next && text_[end - 1] != '\n' ? 1 : 0);
  } else if (f == CaptureFormat::kSmiDmon) {
    end = take_smi_dmon(l);
  } else {
    end = block_end(l, capture_text::block_fits(f), f);
  }
  std::vector<Line> interleaved;
  if (f == CaptureFormat::kSmiQueryText && block_cut_ == 0)
    end = past_interleaved(end, interleaved);
  if (f == CaptureFormat::kSmiDmon) {
    segment(f, l.no, line_no_);  // read as it was found (take_smi_dmon)
  } else if (interleaved.empty()) {
    parse_block(f, l.begin, end, l.no);
  } else {
    // The block as it would read without those lines: each blanked, so line numbers stay.
    std::string block(text_.substr(l.begin, end - l.begin));
    for (const Line& x : interleaved)
      for (size_t i = x.begin - l.begin; i < x.next - l.begin && block[i] != '\n'; ++i)
        block[i] = ' ';
    parse_block_text(f, block, l.no);
  }
  report_cut_block(l);
  pos_ = end;
  for (const Line& x : interleaved) take_by_evidence(x);
  return true;
}

// An nvidia-smi dmon block, found and read in one pass (a log of days is one block of millions
// of rows), in pieces: one reducer takes them all, handed over when another snapshot comes or
// the input ends; a piece's last snapshot is the input's last only if nothing follows it.
// Returns where the piece ends.
size_t Reader::take_smi_dmon(const Line& l) {
  if (dmon_)
    dmon_->demote_last();
  else
    dmon_.emplace();
  text::BlockStop stop;
  auto r = parse_smi_dmon_at(
      text_, l.begin, l.no, {kBlockPiece, kMaxBlock}, origin_,
      [&](const Snapshot& s, bool last) { dmon_->add(s, last); }, &obs_.input_errors, stop);
  if (!r)
    obs_.input_errors.push_back(r.error());
  else if (r.value() == 0)
    incomplete("nvidia-smi dmon header with no sample rows (line " + std::to_string(l.no) + ")");
  block_cut_ = stop.cut_line;
  line_no_ = stop.last_line;
  return stop.end;
}

void Reader::report_cut_block(const Line& first) {
  if (block_cut_ == 0) return;
  incomplete("a block of over " + std::to_string(kMaxBlock >> 20) + " MiB from line " +
             std::to_string(first.no) + " read to line " + std::to_string(block_cut_ - 1) +
             " only; the lines from " + std::to_string(block_cut_) +
             " on read as if nothing came before them");
  block_cut_ = 0;
}

// nvidia-bug-report.log structure (bug_report.h): separators and section headers are read
// here; a section's lines go to the reader for that section (false: the usual readers), or are
// judged here when no reader applies (Xorg logs, /proc/driver/nvidia/gpus, no-GPU-state parts).
bool Reader::take_bug_report_line(const Line& l) {
  using bug_report::Section;
  if (bug_report::is_separator(l.trimmed)) {
    flush_kernel();
    section_ = Section::kAwaitHeader;
    return true;
  }
  if (section_ == Section::kNone) return false;
  if (section_ == Section::kAwaitHeader ||
      (l.trimmed.front() == '/' && bug_report::is_command_header(l.trimmed))) {
    flush_kernel();
    // After the report's last line, a paste goes on with other content: the usual readers.
    section_ = bug_report::is_end(l.trimmed) ? Section::kNone : bug_report::section_of(l.trimmed);
    ++br_sections_;
    segment(CaptureFormat::kBugReport, l.no, l.no);
    return true;
  }
  if (bug_report::is_script_line(l.trimmed)) return true;
  return take_section_line(l);
}

bool Reader::take_section_line(const Line& l) {
  using bug_report::Section;
  switch (section_) {
    case Section::kPrologue:
    case Section::kNoGpuState:
      ++br_skipped_;
      return true;
    case Section::kKernelLog:
      if (!bug_report::is_command_audit(l.trimmed))
        return bug_report::is_kernel_log_subheader(l.trimmed);
      flush_kernel();  // the kernel-log parser sees the run's text: not this line
      ++br_skipped_;
      return true;
    case Section::kXorg:
      // Never the kernel log's ("[    25.123] (EE) ..." looks like dmesg): an X server error
      // that names the GPU is listed unread and weighs; the rest is the X server's routine.
      if (bug_report::is_error_line(section_, l.trimmed) && names_gpu_stack(l.trimmed))
        not_understood(l.no, l.trimmed);
      else
        ++br_skipped_;
      return true;
    case Section::kInstallerLog:
    case Section::kServices:
    case Section::kProcGpu:
      // The driver's own install, units and GPU entries: a failure there is about the GPU
      // stack even when the line does not name it; listed unread, it weighs.
      if (bug_report::is_error_line(section_, l.trimmed)) {
        not_understood(l.no, l.trimmed);
        if (!names_gpu_stack(l.trimmed)) gpu_unread(l.no, l.trimmed);
      } else {
        ++br_skipped_;
      }
      return true;
    default:
      return false;
  }
}

// p2pBandwidthLatencyTest prints its P2P=Enabled bandwidth matrices after its banner, peer
// access and P2P=Disabled ones: a run without them is a cut capture, and the comparison that
// matters cannot be made.
void Reader::finish_matrices() {
  const bool p2p_test = matrices_.saw_p2p_test();
  bool enabled = false;
  for (auto& m : matrices_.finish()) {
    enabled = enabled || (m.kind == BandwidthMatrix::Kind::kBandwidth && m.p2p == true);
    obs_.bw_matrices.push_back(std::move(m));
  }
  if (p2p_test && !enabled)
    incomplete(
        "p2pBandwidthLatencyTest ran but its P2P=Enabled bandwidth matrices are not in "
        "the input");
}

void Reader::bound_errors() {
  auto& v = obs_.input_errors;
  std::map<std::string, size_t> listed;  // not views: the codes move below
  size_t w = errors_first_;
  for (size_t i = errors_first_; i < v.size(); ++i) {
    if (listed[v[i].code]++ >= kErrorsPerCode) {
      ++errors_unlisted_[v[i].code];
      continue;
    }
    if (w != i) v[w] = std::move(v[i]);
    ++w;
  }
  v.erase(v.begin() + static_cast<std::ptrdiff_t>(w), v.end());
  next_errors_check_ = v.size() + kErrorsCheckEvery;
}

void Reader::add_sample(Snapshot&& s) {
  hand_over_dmon();
  if (newest_) samples_.add(std::move(*newest_));
  newest_ = std::move(s);
}

// The readings of a dcgmi dmon read in pieces, once its last piece is read: with that piece's
// results (`into`), or as a group of their own.
void Reader::finish_dcgm_dmon(std::vector<DcgmResult>* into) {
  if (!dcgm_dmon_) return;
  std::vector<DcgmResult> readings;
  dcgm_dmon_->finish(origin_, into ? *into : readings);
  dcgm_dmon_.reset();
  dcgm_dmon_end_ = std::string_view::npos;
  if (!readings.empty()) dcgm_fold_.add(obs_.dcgm, std::move(readings));
}

void Reader::hand_over_dmon() {
  if (!dmon_) return;
  SampleReducer r = std::move(*dmon_);
  dmon_.reset();
  hand_over(r);
}

void Reader::hand_over(SampleReducer& block) {
  note_reduction(block, origin_, obs_);
  for (auto& s : block.take()) add_sample(std::move(s));
}

// What the caps on kept records and notes left out of this input, said once each.
void Reader::note_left_out() {
  const std::string at(origin_);
  const auto say = [&](size_t n, const char* what, size_t cap) {
    if (n == 0) return;
    cov_.incomplete = true;
    cov_.incomplete_reasons.push_back(std::to_string(n) + " " + what + " beyond the first " +
                                      std::to_string(cap) + " different ones kept were not read");
  };
  say(dcgm_fold_.dropped(), "DCGM result(s)", kMaxDcgmResultsPerInput);
  say(pci_left_out_, "NVIDIA PCI device(s) of lspci", kMaxPciDevices);
  say(nccl_tests_.dropped(), "nccl-tests run(s)", kMaxCollectiveRunsPerInput);
  say(matrices_.dropped(), "bandwidth matri(ces)", kMaxMatricesPerInput);
  if (const size_t n = app_merge_.unlisted(); n > 0) {
    put_note(at + ": " + std::to_string(n) + " application message(s) past the first " +
             std::to_string(AppMessageMerge::kMaxPerKind) +
             " different ones of their kind: counted with the last one kept, not listed");
  }
  bound_errors();
  for (const auto& [code, n] : errors_unlisted_)
    obs_.input_errors.push_back(make_error(
        code, std::to_string(n) + " more error(s) of this kind, not listed", std::string(at)));
  if (notes_unlisted_ > 0)
    put_note(at + ": " + std::to_string(notes_unlisted_) +
             " more note(s) like those above, not listed");
}

void Reader::note_bug_report() {
  if (br_sections_ == 0) return;
  put_note(std::string(origin_) + ": nvidia-bug-report: " + std::to_string(br_sections_) +
           " section(s); " + std::to_string(br_skipped_) +
           " line(s) of sections without GPU health state (prologue, X server routine, system "
           "files, compilers) skipped");
}

// Where a host fact came from, each once and at most kMaxListedNotes of them (a log of repeated
// reports names the same source again and again).
void Reader::add_source(std::string what) {
  auto& v = host_.sources;
  if (v.size() < kMaxListedNotes && std::find(v.begin(), v.end(), what) == v.end())
    v.push_back(std::move(what));
}

void Reader::finish_host() {
  for (const auto& r : env_.reports()) host_.sources.push_back(r);
  if (host_.wsl) host_.sources.push_back(std::string(origin_) + ": WSL 2 prompt or path");
  if (host_.sources.empty()) return;
  if (!obs_.host) {
    obs_.host = std::move(host_);
    return;
  }
  HostFacts& h = *obs_.host;
  auto fill = [](auto& dst, auto& src) {
    if (!dst && src) dst = std::move(src);
  };
  fill(h.kernel_module_version, host_.kernel_module_version);
  fill(h.smi_driver_version, host_.smi_driver_version);
  fill(h.smi_cuda_version, host_.smi_cuda_version);
  h.wsl = h.wsl || host_.wsl;
  auto append = [](auto& dst, auto& src) {
    for (auto& x : src) dst.push_back(std::move(x));
  };
  append(h.nvidia_pci_devices, host_.nvidia_pci_devices);
  append(h.cuda_toolkits, host_.cuda_toolkits);
  append(h.frameworks, host_.frameworks);
  append(h.gpu_models, host_.gpu_models);
  append(h.sources, host_.sources);
}

// NCCL's topology dump, kept whole for the first input that prints one.
bool Reader::take_nccl_topology(const Line& l) {
  if (!take_nccl_topology_line(l.trimmed, nccl_topology_)) return false;
  if (nccl_topology_.origin.empty())
    nccl_topology_.origin = std::string(origin_) + ":" + std::to_string(l.no);
  return true;
}

// A line no block reader took: each line reader by the evidence it needs, the first to take it
// wins; a line none takes is not understood.
// The line readers of nvidia-smi's line outputs, training logs and benchmark tools: the format
// of the line when one of them took it.
std::optional<CaptureFormat> Reader::take_tool_line(const Line& l) {
  // nvidia-smi nvlink: the GPU line is -L's (noted, left to the environment reader), its link
  // lines are read here.
  const bool header = nvlink_.note(l.trimmed, l.no);
  if (header || nvlink_.take(l.trimmed, origin_, l.no)) return CaptureFormat::kSmiNvlink;
  if (resets_.take(l.trimmed, l.no)) return CaptureFormat::kSmiMessages;
  // A run's own progress: the Trainer's metrics dicts, tqdm bars (read, no GPU fact in them).
  if (is_trainer_metrics_line(l.trimmed) || is_progress_bar(l.trimmed))
    return CaptureFormat::kAppLog;
  std::optional<StepTimingLine> interval;
  if (megatron_.take(l.trimmed, interval)) {
    if (interval) steps_.add(*interval, origin_, l.no);
    return CaptureFormat::kAppLog;
  }
  // Before the kernel-log test: "2019-07-21 16:20:05,759 - INFO - Epoch ..." has a log prefix.
  if (auto t = parse_step_timing(l.trimmed)) {
    steps_.add(*t, origin_, l.no);
    return CaptureFormat::kAppLog;
  }
  // A step's loss and throughput with no data time: progress, no finding; a line that also
  // names the GPU stack is left to the readers of errors.
  if (is_step_metrics_line(l.trimmed) && !names_gpu_stack(l.trimmed)) return CaptureFormat::kAppLog;
  // Before the kernel-log test: an MPI launcher's "[0]   1048576 ..." row looks like dmesg.
  if (burn_.take(l.trimmed, origin_, l.no) || nccl_tests_.take(l.trimmed, origin_, l.no) ||
      matrices_.take(l.trimmed, origin_, l.no) || take_nccl_topology(l))
    return CaptureFormat::kBenchTool;
  return std::nullopt;
}

void Reader::take_by_evidence(const Line& l) {
  if (const auto f = take_tool_line(l)) {
    flush_kernel();
    segment(*f, l.no, l.no);
    return;
  }
  if (env_.take(l.trimmed, host_)) {
    flush_kernel();
    segment(CaptureFormat::kEnvReport, l.no, l.no);
    return;
  }
  // Before the kernel-log test: the host engine's lines carry a log prefix of their own.
  if (dcgm::take_line(l.trimmed, origin_, l.no, dcgm_line_)) {
    fold_dcgm_lines(1);
    flush_kernel();
    if (l.trimmed == "Successfully ran diagnostic for group.") diag_announced_ = l.no;
    segment(CaptureFormat::kDcgm, l.no, l.no);
    return;
  }
  if (looks_like_kernel_log_line(l.trimmed)) {
    add_kernel_line(l);
    // A syslog line from a user-space daemon (dockerd, nvidia-persistenced) may carry an
    // application error; kernel lines never do. fabricmanager.log's "[date] [LEVEL] [tid N]"
    // looks like a dmesg -T line but is the fabric manager's own.
    if (((!capture_text::is_dmesg_bracket(l.trimmed) &&
          l.trimmed.find("kernel:") == std::string_view::npos) ||
         is_fabric_manager_line(l.trimmed)) &&
        app_.take(l.trimmed, origin_, l.no, obs_.app_messages))
      k_app_taken_.push_back(l.no);
    return;
  }
  // The kernel-log parser sees only kernel lines (and blanks): nothing else can be taken for
  // a continuation of a driver message.
  flush_kernel();
  if (app_.take(l.trimmed, origin_, l.no, obs_.app_messages)) {
    if (!app_.last_line_pending()) segment(CaptureFormat::kAppLog, l.no, l.no);
    return;
  }
  if (looks_like_shell_prompt(l.trimmed) || capture_text::is_command_echo(l.trimmed)) {
    if (capture_text::smi_selects_gpus(l.trimmed)) gpu_select_line_ = l.no;
    if (capture_text::shows_wsl(l.trimmed)) host_.wsl = true;
    return;
  }
  if (capture_text::is_date_line(l.trimmed)) return;
  // An lspci section's lines its reader leaves (-xxx hex dumps, "Kernel modules: nvidia"):
  // lspci output that carries no health state.
  if (section_ == bug_report::Section::kLspci) {
    ++br_skipped_;
    return;
  }
  not_understood(l.no, l.trimmed);
}

// After the last line: what the line readers collected goes into the Observation, with the
// notes that say what was incomplete or left out.
void Reader::finish() {
  flush_kernel();
  note_bug_report();
  app_.finish(obs_.app_messages);
  if (!steps_.empty()) obs_.app_messages.push_back(steps_.message());
  if (auto m = profiler_.message()) obs_.app_messages.push_back(std::move(*m));
  if (auto m = torch_profiler_.message()) obs_.app_messages.push_back(std::move(*m));
  fold_app_messages(0);
  fold_dcgm_lines(0);
  finish_dcgm_dmon();
  std::vector<DcgmResult> links;
  nvlink_.finish(links);
  dcgm_fold_.add(obs_.dcgm, std::move(links));
  // A refused reset no later line resolved: the GPU may still need it; not read.
  for (const auto& [line_no, text] : resets_.unresolved()) not_understood(line_no, text);
  if (auto b = burn_.finish()) obs_.burn_runs.push_back(std::move(*b));
  for (auto& n : nccl_tests_.finish()) obs_.nccl_tests.push_back(std::move(n));
  if (!nccl_topology_.origin.empty() && !obs_.nccl_topology)
    obs_.nccl_topology = std::move(nccl_topology_);
  finish_matrices();
  note_left_out();
  if (diag_announced_ > 0)
    incomplete("dcgmi diag ran (line " + std::to_string(diag_announced_) +
               ") but its result table is not in the input");
  for (auto& n : events_.finish(origin_)) put_note(std::move(n), NoteIn::kReport);
  if (events_.untracked() > 0)
    incomplete(std::to_string(events_.untracked()) +
               " kernel-log event(s) about GPUs and codes beyond the first " +
               std::to_string(kMaxEventKeys) + " different ones were not read");
  hand_over_dmon();
  if (newest_) samples_.add(std::move(*newest_), true);
  newest_.reset();
  merge_samples(samples_, origin_, obs_);
  finish_host();
  std::stable_sort(cov_.gpu_unread.begin(), cov_.gpu_unread.end(),
                   [](const UnreadLine& a, const UnreadLine& b) { return a.line < b.line; });
  if (cov_.lines_not_understood > 0) {
    obs_.notes.push_back(std::string(origin_) + ": " + std::to_string(cov_.lines_not_understood) +
                         " line(s) not understood, first at line " +
                         std::to_string(*cov_.first_not_understood_line));
  }
  if (cov_.elided_lines > 0)
    obs_.notes.push_back(std::string(origin_) + ": " + std::to_string(cov_.elided_lines) +
                         " '[...]' mark(s): lines were left out of this capture");
  if (reasons_unlisted_ > 0)
    cov_.incomplete_reasons.push_back(std::to_string(reasons_unlisted_) +
                                      " more reason(s) like these, not listed");
  for (const auto& why : cov_.incomplete_reasons)
    obs_.notes.push_back(std::string(origin_) + ": incomplete: " + why);
  obs_.coverage.push_back(std::move(cov_));
  if (progress_ && (reported_ != text_.size() || text_.empty()))
    progress_(text_.size(), text_.size());
}

std::vector<CaptureSegment> Reader::run() {
  text_ = text::strip_bom(text_);
  std::string clean;  // the line without ANSI escapes, when it had any
  while (pos_ < text_.size()) {
    if (pos_ >= next_report_) report(k_begin_ == std::string_view::npos ? pos_ : k_begin_);
    if (obs_.app_messages.size() >= next_fold_) fold_app_messages(kFoldTail);
    if (obs_.input_errors.size() >= next_errors_check_) bound_errors();
    if (k_begin_ != std::string_view::npos && take_kernel_lines()) continue;
    Line l = line_at(pos_);
    l.no = ++line_no_;
    ++cov_.lines;
    if (l.trimmed.empty()) {
      markdown_table_ = false;
      pos_ = l.next;
      continue;
    }
    // Inside a dmesg run most lines are "[  123.456] ...": no other reader wants them (the hot
    // path of a 1 GB log: one newline search and this test per line).
    if (k_begin_ != std::string_view::npos &&
        (capture_text::is_dmesg_bracket(l.trimmed) || capture_text::is_syslog_kernel(l.trimmed))) {
      add_kernel_line(l);
      pos_ = l.next;
      continue;
    }
    if (text::has_escape(l.raw)) {
      clean = text::strip_ansi(l.raw);
      l.trimmed = text::trim(clean);
      if (l.trimmed.empty()) {
        pos_ = l.next;
        continue;
      }
    }
    // A line a person emphasised in Markdown ("**Warning  Unschedulable ...**"): its text.
    if (l.trimmed.size() > 4 && l.trimmed[0] == '*' && l.trimmed[1] == '*' &&
        text::ends_with(l.trimmed, "**"))
      l.trimmed = text::trim(l.trimmed.substr(2, l.trimmed.size() - 4));
    // Bug-report structure: a first-byte test on every line, the rest only inside a report.
    if ((l.trimmed.front() == '_' || section_ != bug_report::Section::kNone) &&
        take_bug_report_line(l)) {
      pos_ = l.next;
      continue;
    }
    if (capture_text::is_bare_process_tag(l.trimmed)) {
      pos_ = l.next;
      continue;
    }
    if (text::is_elision_line(l.trimmed)) {
      ++cov_.elided_lines;
      pos_ = l.next;
      continue;
    }
    // A Markdown table ("| Field | Value |" over "|---|---|") is a person's, no nvidia-smi
    // table: its separator row is layout, its rows go to the line readers one by one.
    if (markdown_row(l)) {
      pos_ = l.next;
      if (!capture_text::is_markdown_separator(l.trimmed)) take_by_evidence(l);
      continue;
    }
    // Before the blocks: the profilers' tables ("|  action \t|  0.1 \t| ...", "-----  -----")
    // are no nvidia-smi table.
    if (profiler_.take(l.trimmed, origin_, l.no) ||
        torch_profiler_.take(l.trimmed, origin_, l.no)) {
      flush_kernel();
      segment(CaptureFormat::kAppLog, l.no, l.no);
      pos_ = l.next;
      continue;
    }
    const size_t before = line_no_;
    if (try_block(l)) {
      cov_.lines += line_no_ - before;
      continue;
    }
    pos_ = l.next;
    take_by_evidence(l);
  }
  finish();
  return std::move(segs_);
}

}  // namespace

std::vector<CaptureSegment> read_capture(std::string_view text, std::string_view origin,
                                         Observation& obs, const CaptureProgress& progress) {
  Reader r(text, origin, obs, progress);
  return r.run();
}

std::vector<CaptureSegment> read_capture(std::string_view text, std::string_view origin,
                                         Observation& obs) {
  static const CaptureProgress kNone;
  return read_capture(text, origin, obs, kNone);
}

bool looks_like_shell_prompt(std::string_view t) {
  return capture_text::is_prompt(t);
}

}  // namespace gw
