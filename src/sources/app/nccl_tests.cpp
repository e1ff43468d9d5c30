#include "sources/app/nccl_tests.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <string>
#include <vector>

#include "sources/smi/text_util.h"

namespace gw {

namespace {

// The line with MPI rank tags ("[0]", "-1[0]") blanked out.
std::string without_rank_tags(std::string_view s) {
  std::string clean;
  clean.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[') {
      const size_t close = s.find(']', i);
      if (close != std::string_view::npos && close - i <= 6 &&
          std::all_of(s.begin() + static_cast<long>(i) + 1, s.begin() + static_cast<long>(close),
                      [](char c) { return c >= '0' && c <= '9'; })) {
        clean += ' ';
        i = close;
        continue;
      }
    }
    clean += s[i];
  }
  return clean;
}

bool all_digits(std::string_view t) {
  return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_type(std::string_view t) {
  static constexpr std::array<std::string_view, 13> kTypes = {
      "float", "half",   "double",   "int8",     "uint8",    "int32", "uint32",
      "int64", "uint64", "bfloat16", "fp8_e4m3", "fp8_e5m2", "int"};
  return std::find(kTypes.begin(), kTypes.end(), t) != kTypes.end();
}

bool is_redop(std::string_view t) {
  return t == "sum" || t == "prod" || t == "max" || t == "min" || t == "avg" || t == "none" ||
         t == "mulsum";
}

// "time algbw busbw #wrong": the busbw of the group at `i`, when it is one.
std::optional<double> group_busbw(const std::vector<std::string_view>& t, size_t i, double* algbw) {
  if (i + 2 >= t.size()) return std::nullopt;
  const auto time = text::parse_double(t[i]);
  const auto alg = text::parse_double(t[i + 1]);
  const auto bus = text::parse_double(t[i + 2]);
  if (!time || !alg || !bus || *bus < 0 || *bus > 1e5) return std::nullopt;
  if (algbw) *algbw = *alg;
  return *bus;
}

// "... device  0 [0x3b] Tesla T4" -> the device number and the bus.
CollectiveDevice device_of(std::string_view body) {
  CollectiveDevice d;
  const size_t p = body.find(" device ");
  if (p == std::string_view::npos) return d;
  const std::string_view rest = text::trim(body.substr(p + 8));
  size_t used = 0;
  const uint64_t n = text::leading_digits(rest, used);
  if (used > 0 && used < 4) d.cuda_index = static_cast<unsigned>(n);
  const size_t open = rest.find('[');
  const size_t close = rest.find(']');
  if (open != std::string_view::npos && close != std::string_view::npos && open < close &&
      close - open < 16)
    d.bus = std::string(rest.substr(open + 1, close - open - 1));
  return d;
}

// The command that started a test: "CUDA_VISIBLE_DEVICES=0,1 ./build/all_reduce_perf -b 8".
bool is_test_command(std::string_view s) {
  return s.find("_perf") != std::string_view::npos &&
         (s.find("./") != std::string_view::npos || s.find("/build/") != std::string_view::npos ||
          s.find("mpirun") != std::string_view::npos);
}

std::string test_name(std::string_view s) {
  const size_t p = s.find("_perf");
  size_t b = p;
  while (b > 0 && ((s[b - 1] >= 'a' && s[b - 1] <= 'z') || s[b - 1] == '_')) --b;
  return std::string(s.substr(b, p + 5 - b));
}

std::optional<std::vector<unsigned>> visible_devices(std::string_view s) {
  const size_t p = s.find("CUDA_VISIBLE_DEVICES=");
  if (p == std::string_view::npos) return std::nullopt;
  std::string_view v = s.substr(p + 21);
  if (!v.empty() && (v.front() == '"' || v.front() == '\'')) v.remove_prefix(1);
  std::vector<unsigned> out;
  while (!v.empty() && v.front() >= '0' && v.front() <= '9') {
    size_t used = 0;
    const uint64_t n = text::leading_digits(v, used);
    if (used > 3) return std::nullopt;
    out.push_back(static_cast<unsigned>(n));
    v.remove_prefix(used);
    if (v.empty() || v.front() != ',') break;
    v.remove_prefix(1);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace

std::optional<CollectiveRow> parse_nccl_tests_row(std::string_view line) {
  const std::string_view s = text::trim(line);
  if (s.empty() || (s.front() != '[' && (s.front() < '0' || s.front() > '9'))) return std::nullopt;
  // A rank tag is digits only ("[0]"); dmesg's "[    0.000000]" is not one: cheap on a kernel log.
  if (s.front() == '[' &&
      (s.size() < 3 || s[1] < '0' || s[1] > '9' || s.find(']') > 5 || s.find('.') < s.find(']')))
    return std::nullopt;
  const std::string clean = without_rank_tags(s);
  const auto t = text::words(clean);
  // size count type [redop [root]] then time algbw busbw wrong (out-of-place), the same in-place.
  if (t.size() < 7 || !all_digits(t[0]) || !all_digits(t[1]) || !is_type(t[2])) return std::nullopt;
  size_t i = 3;
  if (i < t.size() && is_redop(t[i])) ++i;
  // The root column (-1 but for broadcast and reduce): one token more than whole groups of four.
  if ((t.size() - i) % 4 == 1 && (t[i] == "-1" || all_digits(t[i]))) ++i;
  CollectiveRow r;
  // All digits, but maybe more than a uint64 holds: refused, never thrown.
  const auto [end, ec] = std::from_chars(t[0].data(), t[0].data() + t[0].size(), r.bytes);
  if (ec != std::errc() || end != t[0].data() + t[0].size()) return std::nullopt;
  double alg = 0;
  const auto out = group_busbw(t, i, &alg);
  if (!out) return std::nullopt;
  r.busbw_gbs = *out;
  r.algbw_gbs = alg;
  if (auto in = group_busbw(t, i + 4, &alg); in && *in > r.busbw_gbs) {
    r.busbw_gbs = *in;
    r.algbw_gbs = alg;
  }
  return r;
}

CollectiveRun& NcclTestsScanner::run(std::string_view origin, size_t line_no) {
  if (!run_) {
    run_.emplace();
    run_->origin = std::string(origin) + ":" + std::to_string(line_no);
    run_->test = std::move(command_test_);
    run_->visible_devices = std::move(command_visible_);
    command_test_.clear();
    command_visible_.reset();
  }
  return *run_;
}

bool NcclTestsScanner::take(std::string_view line, std::string_view origin, size_t line_no) {
  std::string_view s = text::trim(line);
  if (auto r = parse_nccl_tests_row(s)) {
    r->line = line_no;
    if (run_ && !run_->rows.empty() && r->bytes <= run_->rows.back().bytes) close();
    run(origin, line_no).rows.push_back(*r);
    return true;
  }
  // The '#' lines: a rank tag may come first ("[0] # Avg bus bandwidth").
  if (s.size() > 4 && s.front() == '[' && s.find(']') < 6)
    s = text::trim(s.substr(s.find(']') + 1));
  if (is_test_command(s)) {  // the next table's command, with or without a shell prompt
    if (run_ && !run_->rows.empty()) close();
    command_test_ = test_name(s);
    command_visible_ = visible_devices(s);
    return true;
  }
  if (s.empty() || s.front() != '#') return false;
  const std::string_view body = text::trim(s.substr(1));
  if (text::starts_with(body, "Avg bus bandwidth")) {
    const size_t colon = body.find(':');
    if (colon != std::string_view::npos)
      run(origin, line_no).avg_busbw_gbs = text::parse_double(text::trim(body.substr(colon + 1)));
    return true;
  }
  if (text::starts_with(body, "Rank") && body.find(" device ") != std::string_view::npos) {
    const size_t close = body.rfind(']');
    if (close != std::string_view::npos) {
      CollectiveRun& r = run(origin, line_no);
      r.devices.emplace_back(text::trim(body.substr(close + 1)));
      r.device_ids.push_back(device_of(body));
    }
    return true;
  }
  if (text::starts_with(body, "nThread") || text::starts_with(body, "Using devices")) {
    run(origin, line_no);
    return true;
  }
  if (!run_) return false;
  // The table's header and closing lines.
  return text::starts_with(body, "size") || text::starts_with(body, "(B)") ||
         body.find("out-of-place") != std::string_view::npos ||
         text::starts_with(body, "Out of bounds values") || body.empty();
}

void NcclTestsScanner::close() {
  fold_.add(done_, std::move(*run_));
  run_.reset();
}

std::vector<CollectiveRun> NcclTestsScanner::finish() {
  if (run_) close();
  std::vector<CollectiveRun> out = std::move(done_);
  done_.clear();
  dropped_ = fold_.dropped();
  fold_ = GroupFold<CollectiveRun>(0, kMaxCollectiveRunsPerInput);
  return out;
}

}  // namespace gw
