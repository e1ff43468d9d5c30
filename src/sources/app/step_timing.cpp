#include "sources/app/step_timing.h"

#include <charconv>
#include <string>

#include "sources/smi/text_util.h"

namespace gw {

namespace {

bool boundary_before(std::string_view s, size_t at) {
  if (at == 0) return true;
  const char c = s[at - 1];
  return c == ' ' || c == '\t' || c == ',' || c == '|' || c == '(' || c == '[';
}

// The number after `key` at `at`: "key: 1.5", "key 1.5", "key=1.5", "key  0.355 ( 0.563)" (the
// first number is the step's; a running average may follow), when the key is a whole word.
std::optional<double> value_at(std::string_view s, size_t at, std::string_view key) {
  if (!boundary_before(s, at)) return std::nullopt;
  size_t p = at + key.size();
  if (p < s.size() && (s[p] == ':' || s[p] == '='))
    ++p;
  else if (p >= s.size() || s[p] != ' ')
    return std::nullopt;
  while (p < s.size() && s[p] == ' ') ++p;
  if (p >= s.size() || s[p] < '0' || s[p] > '9') return std::nullopt;
  // At most 24 characters, as a person reads one number; no copy and no locale.
  const std::string_view num = s.substr(p, 24);
  double v = 0;
  const auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), v);
  if (ec != std::errc() || end == num.data() || !(v >= 0) || v > 1e7) return std::nullopt;
  return v;
}

std::optional<double> value_of(std::string_view s, std::string_view key) {
  for (size_t at = text::find(s, key); at != std::string_view::npos;
       at = text::find(s, key, at + 1))
    if (auto v = value_at(s, at, key)) return v;
  return std::nullopt;
}

// One form a framework writes: the key of the wait, the key of the step, and whether the step
// includes the wait (the loop's whole iteration) or was measured apart (compute only).
struct Form {
  std::string_view wait_key;
  std::string_view step_key;
  bool apart;
  std::string_view needs = {};  // a generic key pair: only on a line that also holds this
};

// First match wins: the specific keys before the generic "Data"/"Time" pair.
constexpr Form kForms[] = {
    {"load_data_time", "train_step_time", true},  // scripts that time the two parts
    {"data_time", "iter_time", false},            // YOLOX: "iter_time: 8.711s, data_time: ..."
    {"data_time", "time", false},                 // mmcv / mmdetection / detectron2
    // PaddlePaddle's suites: "batch_cost: 14.99 data_cost: 14.41" (PaddleDetection),
    // "avg_reader_cost: 2.77 s, avg_batch_cost: 3.11 s" (PaddleOCR 2.4 on), "reader_cost: 0.07
    // s, batch_cost: 0.13 s" (PaddleOCR 2.3): the batch's cost includes its reader's.
    {"data_cost", "batch_cost", false},
    {"avg_reader_cost", "avg_batch_cost", false},
    {"reader_cost", "batch_cost", false},
    {"DataLoadingTime", "Time", true},  // Lua Torch imagenet-multiGPU
    {"Data", "Time", false},  // PyTorch's ImageNet example, timm: "Time  0.355 ( 0.563)  Data ..."
    {"data", "time", false,
     "eta:"},  // torchvision references' MetricLogger: "time: 2.54  data: 0.03"
};

// "N/" at `p` (spaces allowed before N): N, else nullopt. With `bare`, "N" ended by a space or
// the line's end counts too (detectron2 prints no total).
std::optional<uint64_t> count_at(std::string_view s, size_t p, bool bare = false) {
  while (p < s.size() && s[p] == ' ') ++p;
  size_t used = 0;
  const uint64_t n = text::leading_digits(s.substr(p), used);
  if (used == 0 || used > 12) return std::nullopt;
  const size_t end = p + used;
  if (end < s.size() && s[end] == '/') return n;
  if (bare && (end == s.size() || s[end] == ' ')) return n;
  return std::nullopt;
}

// The iteration a line reports: "iter: 240/983" (YOLOX, mmcv's "Iter [240/983]"), detectron2's
// "iter: 1259" (no total), else the first "[N/M" bracket ("Epoch: [3][ 40/5005]", "[ 103/5005]",
// "[ 100/1251 (  8%)]"). Not the date of a "[11/01 11:27:04 d2.utils.events]" prefix.
std::optional<uint64_t> step_index(std::string_view s) {
  for (std::string_view key : {"iter: ", "iter ", "Iter ["})
    if (const size_t p = text::find(s, key); p != std::string_view::npos)
      if (auto n = count_at(s, p + key.size(), key == "iter: ")) return n;
  for (size_t b = s.find('['); b != std::string_view::npos; b = s.find('[', b + 1))
    if (auto n = count_at(s, b + 1)) return n;
  return std::nullopt;
}

// The forms share keys ("data_time", "time", "Time"): each is looked up in a line once.
class KeyValues {
 public:
  explicit KeyValues(std::string_view s) : s_(s) {}
  std::optional<double> of(std::string_view key) {
    for (size_t i = 0; i < n_; ++i)
      if (seen_[i].key == key) return seen_[i].value;
    const auto v = value_of(s_, key);
    seen_[n_++] = {key, v};
    return v;
  }

 private:
  struct Seen {
    std::string_view key;
    std::optional<double> value;
  };
  std::string_view s_;
  Seen seen_[2 * std::size(kForms)];  // two keys a form at most
  size_t n_ = 0;
};

}  // namespace

std::optional<StepTimingLine> parse_step_timing(std::string_view s) {
  // Cheap on other lines: every wait key holds "ata" or "_cost".
  if (text::find(s, "ata") == std::string_view::npos &&
      text::find(s, "_cost") == std::string_view::npos)
    return std::nullopt;
  KeyValues values(s);
  for (const Form& f : kForms) {
    if (!f.needs.empty() && text::find(s, f.needs) == std::string_view::npos) continue;
    const auto wait = values.of(f.wait_key);
    if (!wait) continue;
    const auto step = values.of(f.step_key);
    if (!step) continue;
    if (f.apart) return StepTimingLine{*wait, *wait + *step, step_index(s)};
    if (*step <= 0 || *wait > *step * 1.01) return std::nullopt;  // a wait longer than its step
    return StepTimingLine{*wait, *step, step_index(s)};
  }
  return std::nullopt;
}

void StepTimingSum::add(const StepTimingLine& t, std::string_view origin, size_t line_no) {
  if (m_.steps == 0) {
    m_.kind = AppMessageKind::kStepTiming;
    m_.framework = "training";
    m_.first_wait_s = t.wait_s;
    m_.first_step_s = t.step_s;
  }
  // The first step read carries the loader's start-up (the rule sets it apart) unless the log
  // shows it is not the run's first: an iteration beyond the logging interval (a log cut in
  // the middle of an epoch). Then nothing is set apart.
  if (m_.steps == 0) first_index_ = t.index;
  if (m_.steps == 1 && first_index_ && t.index && *t.index > *first_index_ &&
      *first_index_ > *t.index - *first_index_) {
    m_.first_wait_s = 0;
    m_.first_step_s = 0;
  }
  ++m_.steps;
  m_.data_wait_s += t.wait_s;
  m_.step_s += t.step_s;
  if (t.wait_s > m_.longest_wait_s || m_.origin.empty()) {
    m_.longest_wait_s = t.wait_s;
    m_.origin = std::string(origin) + ":" + std::to_string(line_no);
  }
}

}  // namespace gw
