// nvidia-smi --query-gpu=... --format=csv[,noheader-less][,nounits]. The header names the
// columns; each row is one GPU at one moment. Rows are grouped into Snapshots: a new group
// starts when a GPU repeats or the timestamp moves on by more than kGroupWindowMs.
// Hot path for big -l logs: no allocation per row (the Snapshot and field vector are reused).
#include <cstring>
#include <string>
#include <vector>

#include "sources/smi/csv_fields.h"
#include "sources/smi/model_util.h"
#include "sources/smi/smi_parsers.h"
#include "sources/smi/text_util.h"

namespace gw {

namespace {

constexpr int64_t kGroupWindowMs = 500;  // rows of one -l cycle are a few ms apart
constexpr size_t kMaxRowErrors = 50;     // then one summary error

// "2026/07/14 08:12:53.353" (also '-' separated) -> epoch ms, read as UTC.
std::optional<int64_t> parse_csv_timestamp(std::string_view v) {
  v = text::trim(v);
  if (v.size() < 19) return std::nullopt;
  auto num = [&](size_t pos, size_t len) -> int64_t {
    int64_t out = 0;
    for (size_t i = pos; i < pos + len; ++i) {
      const char c = v[i];
      if (c < '0' || c > '9') return -1;
      out = out * 10 + (c - '0');
    }
    return out;
  };
  const int64_t y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2),
                s = num(17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || mi < 0 || s < 0)
    return std::nullopt;
  int64_t ms = 0;
  if (v.size() >= 23 && v[19] == '.') ms = std::max<int64_t>(0, num(20, 3));
  const int64_t days =
      text::days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return ((days * 24 + h) * 60 + mi) * 60000 + s * 1000 + ms;
}

// Splits one row on ',' into `out` (views into the row).
void split_row(std::string_view row, std::vector<std::string_view>& out) {
  out.clear();
  const char* p = row.data();
  const char* end = p + row.size();
  while (true) {
    const void* c = std::memchr(p, ',', static_cast<size_t>(end - p));
    const char* stop = c ? static_cast<const char*>(c) : end;
    out.emplace_back(p, static_cast<size_t>(stop - p));
    if (!c) break;
    p = stop + 1;
  }
}

// Clears a reused GpuState but keeps its identity strings: the identity columns overwrite
// them only when they differ (see apply_identity), saving an allocation per row.
void reset_gpu(GpuState& g) {
  std::string name = std::move(g.info.name), uuid = std::move(g.info.uuid),
              bus = std::move(g.info.pci_bus_id);
  g.info = DeviceInfo{};
  g.sample = GpuSample{};
  g.info.name = std::move(name);
  g.info.uuid = std::move(uuid);
  g.info.pci_bus_id = std::move(bus);
}

class CsvParser {
 public:
  CsvParser(std::string_view origin, const SnapshotSink& sink, std::vector<Error>* errors)
      : origin_(origin), sink_(sink), errors_(errors) {
    cur_.source = "smi-csv:" + std::string(origin);
  }

  Status header(std::string_view line, size_t line_no);
  void row(std::string_view line, size_t line_no);
  size_t finish();
  std::string_view header_line() const { return header_text_; }

 private:
  void emit();
  bool starts_new_group(std::string_view id, std::optional<int64_t> ts) const;
  void row_error(size_t line_no, size_t got);

  std::string_view origin_;
  const SnapshotSink& sink_;
  std::vector<Error>* errors_;
  std::vector<smi::CsvColumn> cols_;
  std::string_view header_text_;
  size_t header_line_no_ = 0;
  int id_col_ = -1, ts_col_ = -1;
  std::vector<std::string_view> fields_;
  Snapshot cur_;
  size_t in_group_ = 0;
  std::vector<std::string> group_ids_;
  std::optional<int64_t> group_ts_;
  std::string last_ts_text_;
  std::optional<int64_t> last_ts_;
  size_t emitted_ = 0, bad_rows_ = 0;
};

Status CsvParser::header(std::string_view line, size_t line_no) {
  header_text_ = line;
  header_line_no_ = line_no;
  split_row(line, fields_);
  cols_.clear();
  size_t known = 0;
  for (size_t i = 0; i < fields_.size(); ++i) {
    cols_.push_back(smi::csv_column_for(fields_[i]));
    if (cols_.back().field != smi::CsvField::kIgnore) ++known;
    if (cols_.back().field == smi::CsvField::kTimestamp) ts_col_ = static_cast<int>(i);
    if (cols_.back().field == smi::CsvField::kIndex ||
        (id_col_ < 0 && (cols_.back().field == smi::CsvField::kBusId ||
                         cols_.back().field == smi::CsvField::kUuid)))
      id_col_ = static_cast<int>(i);
  }
  if (known == 0) {
    return make_error("capture.smi_csv",
                      "expected a --query-gpu CSV header naming known fields "
                      "(timestamp, index, temperature.gpu, ...)",
                      std::string(origin_) + ":" + std::to_string(line_no));
  }
  return {};
}

bool CsvParser::starts_new_group(std::string_view id, std::optional<int64_t> ts) const {
  if (in_group_ == 0) return false;
  if (ts && group_ts_ && (*ts - *group_ts_ > kGroupWindowMs || *ts < *group_ts_)) return true;
  if (id_col_ < 0) return true;  // rows name no GPU: each row is its own moment
  for (size_t i = 0; i < in_group_; ++i)
    if (group_ids_[i] == id) return true;
  return false;
}

void CsvParser::row_error(size_t line_no, size_t got) {
  ++bad_rows_;
  if (!errors_ || bad_rows_ > kMaxRowErrors) return;
  errors_->push_back(make_error("capture.smi_csv",
                                "expected " + std::to_string(cols_.size()) +
                                    " comma-separated fields as in the header (line " +
                                    std::to_string(header_line_no_) + "), got " +
                                    std::to_string(got) + "; row skipped",
                                std::string(origin_) + ":" + std::to_string(line_no)));
}

void CsvParser::row(std::string_view line, size_t line_no) {
  split_row(line, fields_);
  if (fields_.size() != cols_.size()) return row_error(line_no, fields_.size());
  std::optional<int64_t> ts;
  if (ts_col_ >= 0) {
    const std::string_view t = fields_[static_cast<size_t>(ts_col_)];
    if (t != last_ts_text_) {  // rows of one cycle often share the text: parse once
      last_ts_text_.assign(t);
      last_ts_ = parse_csv_timestamp(t);
    }
    ts = last_ts_;
  }
  const std::string_view id = id_col_ >= 0 ? text::trim(fields_[static_cast<size_t>(id_col_)]) : "";
  if (starts_new_group(id, ts)) emit();
  if (in_group_ == 0) {
    group_ts_ = ts;
    cur_.time_ms = ts.value_or(0);
  }
  if (in_group_ >= cur_.gpus.size()) cur_.gpus.emplace_back();
  if (in_group_ >= group_ids_.size()) group_ids_.emplace_back();
  group_ids_[in_group_].assign(id);
  GpuState& g = cur_.gpus[in_group_];
  reset_gpu(g);
  g.info.index = static_cast<unsigned>(in_group_);
  for (size_t i = 0; i < cols_.size(); ++i)
    if (cols_[i].field != smi::CsvField::kIgnore)
      smi::apply_csv_value(cols_[i], fields_[i], cur_, g);
  ++in_group_;
}

void CsvParser::emit() {
  if (in_group_ == 0) return;
  cur_.gpus.resize(in_group_);
  for (auto& g : cur_.gpus) smi::derive_capabilities(g);
  sink_(cur_);
  ++emitted_;
  in_group_ = 0;
}

size_t CsvParser::finish() {
  emit();
  if (errors_ && bad_rows_ > kMaxRowErrors) {
    errors_->push_back(make_error("capture.smi_csv",
                                  std::to_string(bad_rows_ - kMaxRowErrors) +
                                      " more rows with the wrong number of fields were skipped",
                                  std::string(origin_)));
  }
  return emitted_;
}

}  // namespace

Result<size_t> parse_smi_csv(std::string_view text, std::string_view origin,
                             const SnapshotSink& sink, std::vector<Error>* errors) {
  CsvParser p(origin, sink, errors);
  text::LineReader rd(text::strip_bom(text));
  std::string_view line;
  bool have_header = false;
  while (rd.next(line)) {
    if (text::trim(line).empty()) continue;
    if (!have_header) {
      if (auto st = p.header(line, rd.line_no()); !st) return st.error();
      have_header = true;
    } else if (line != p.header_line()) {  // a repeated header (appended logs) is skipped
      p.row(line, rd.line_no());
    }
  }
  if (!have_header) {
    return make_error("capture.smi_csv", "expected a CSV header line, found no text",
                      std::string(origin) + ":1");
  }
  return p.finish();
}

std::vector<Snapshot> collect_smi_csv(std::string_view text, std::string_view origin,
                                      std::vector<Error>* errors) {
  std::vector<Snapshot> out;
  auto r = parse_smi_csv(
      text, origin, [&](const Snapshot& s) { out.push_back(s); }, errors);
  if (!r && errors) errors->push_back(r.error());
  return out;
}

}  // namespace gw
