#include "sources/app/gpu_burn.h"

#include <algorithm>
#include <string>

#include "sources/smi/text_util.h"

namespace gw {

namespace {

// "-524288000", "0", "11367": an integer token (a lone "-" is gpu_burn's separator).
std::optional<int64_t> integer(std::string_view t) {
  if (t.empty()) return std::nullopt;
  size_t i = t[0] == '-' ? 1 : 0;
  if (i == t.size() || t.size() - i > 18) return std::nullopt;  // 18 digits: no int64 overflow
  int64_t v = 0;
  for (; i < t.size(); ++i) {
    if (t[i] < '0' || t[i] > '9') return std::nullopt;
    v = v * 10 + (t[i] - '0');
  }
  return t[0] == '-' ? -v : v;
}

// "proc'd: N (G Gflop/s) - N (G Gflop/s) ..."
void read_procd(const std::vector<std::string_view>& t, BurnProgress& p) {
  for (size_t i = 0; i < t.size(); ++i) {
    const auto n = integer(t[i]);
    if (!n) continue;
    BurnProgress::Gpu g;
    g.worker_gone = *n < 0;
    if (i + 2 < t.size() && t[i + 1].front() == '(' && text::starts_with(t[i + 2], "Gflop/s"))
      g.gflops = text::parse_double(t[i + 1].substr(1));
    p.gpus.push_back(g);
  }
}

// "errors: 0 - -524288000  (WARNING!)- 1278531568  (DIED!)"
void read_errors(const std::vector<std::string_view>& t, BurnProgress& p) {
  size_t k = 0;
  bool any = false;
  for (const std::string_view tok : t) {
    if (text::starts_with(tok, "(WARNING!)") || text::starts_with(tok, "(DIED!)")) {
      if (any && k > 0 && k - 1 < p.gpus.size()) {
        auto& g = p.gpus[k - 1];
        (tok[1] == 'W' ? g.error_flag : g.died) = true;
      }
      continue;
    }
    const auto n = integer(tok);
    if (!n) continue;
    while (p.gpus.size() <= k) p.gpus.emplace_back();
    p.gpus[k++].errors = *n;
    any = true;
  }
}

// "temps: 62 C - 82 C", "--" when the tool could not read one.
void read_temps(const std::vector<std::string_view>& t, BurnProgress& p) {
  size_t k = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == "--") {
      ++k;
      continue;
    }
    const auto n = integer(t[i]);
    if (!n || i + 1 >= t.size() || t[i + 1] != "C") continue;
    while (p.gpus.size() <= k) p.gpus.emplace_back();  // "--" entries may have run ahead
    if (*n > -50 && *n < 200) p.gpus[k].temp_c = static_cast<int>(*n);
    ++k;
  }
}

std::optional<BurnProgress> parse_one(std::string_view s) {
  const size_t procd = s.find("proc'd:");
  if (procd == std::string_view::npos) return std::nullopt;
  const size_t errs = s.find("errors:", procd);
  const size_t temps = s.find("temps:", procd);
  BurnProgress p;
  read_procd(text::words(s.substr(procd + 7,
                                  (errs == std::string_view::npos ? s.size() : errs) - procd - 7)),
             p);
  if (errs != std::string_view::npos)
    read_errors(text::words(s.substr(
                    errs + 7, (temps == std::string_view::npos ? s.size() : temps) - errs - 7)),
                p);
  if (temps != std::string_view::npos) read_temps(text::words(s.substr(temps + 6)), p);
  if (p.gpus.empty()) return std::nullopt;
  return p;
}

bool starts(std::string_view s, std::string_view p) {
  return text::starts_with(s, p);
}

// Lines gpu_burn writes around its progress: understood while a run is open.
bool is_routine(std::string_view s) {
  return starts(s, "Summary at:") || starts(s, "Killing processes") || starts(s, "Results are ") ||
         starts(s, "read[") || starts(s, "Freed memory for dev") || starts(s, "Uninitted cublas") ||
         s == "done";
}

// Lines only gpu_burn writes: they open a run by themselves.
bool opens_run(std::string_view s) {
  return (starts(s, "Initialized device ") && s.find("MB of memory") != std::string_view::npos) ||
         (starts(s, "Burning for ") && s.find(" seconds") != std::string_view::npos) ||
         starts(s, "Run length not specified in the command line") ||
         starts(s, "Using compare file");
}

// "GPU 3: FAULTY" / "GPU 0: OK" (the closing summary): index and verdict.
std::optional<std::pair<unsigned, bool>> summary_line(std::string_view s) {
  if (!starts(s, "GPU ")) return std::nullopt;
  const size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon < 5) return std::nullopt;
  const auto idx = integer(s.substr(4, colon - 4));
  const auto word = text::trim(s.substr(colon + 1));
  if (!idx || *idx < 0 || *idx > 4096 || (word != "OK" && word != "FAULTY")) return std::nullopt;
  return std::make_pair(static_cast<unsigned>(*idx), word == "OK");
}

}  // namespace

std::optional<BurnProgress> parse_burn_progress(std::string_view line) {
  // A terminal log keeps every '\r' update on one line: the last complete one counts.
  std::optional<BurnProgress> last;
  size_t b = 0;
  while (b <= line.size()) {
    const size_t e = std::min(line.find('\r', b), line.size());
    if (auto p = parse_one(line.substr(b, e - b))) last = std::move(p);
    b = e + 1;
  }
  return last;
}

BurnRun& BurnScanner::run(std::string_view origin, size_t line_no) {
  if (!run_) {
    run_.emplace();
    run_->origin = std::string(origin) + ":" + std::to_string(line_no);
  }
  return *run_;
}

void BurnScanner::add(const BurnProgress& p, std::string_view origin, size_t line_no) {
  BurnRun& r = run(origin, line_no);
  ++r.progress_lines;
  for (size_t i = 0; i < p.gpus.size(); ++i) {
    if (r.gpus.size() <= i) {
      r.gpus.emplace_back();
      r.gpus.back().index = static_cast<unsigned>(i);
    }
    BurnGpu& g = r.gpus[i];
    const BurnProgress::Gpu& in = p.gpus[i];
    if (in.gflops && !in.worker_gone) {
      if (g.first_gflops == 0) g.first_gflops = *in.gflops;
      g.last_gflops = *in.gflops;
      g.best_gflops = std::max(g.best_gflops, *in.gflops);
    }
    if (in.errors && !in.died) g.errors = *in.errors;
    g.error_flag = g.error_flag || in.error_flag;
    if ((in.died || in.worker_gone) && !g.died && r.died_origin.empty())
      r.died_origin = std::string(origin) + ":" + std::to_string(line_no);
    g.died = g.died || in.died || in.worker_gone;
    if (in.temp_c) {
      if (!g.first_temp_c) g.first_temp_c = in.temp_c;
      g.max_temp_c = std::max(g.max_temp_c.value_or(*in.temp_c), *in.temp_c);
    }
  }
}

bool BurnScanner::take(std::string_view s, std::string_view origin, size_t line_no) {
  if (auto p = parse_burn_progress(s)) {
    add(*p, origin, line_no);
    return true;
  }
  if (starts(s, "No clients are alive!")) {
    run(origin, line_no).no_clients_alive = true;
    return true;
  }
  if (starts(s, "Couldn't init a GPU test:")) {
    BurnRun& r = run(origin, line_no);
    if (r.init_error.empty()) r.init_error = std::string(s.substr(0, 200));
    return true;
  }
  if (auto v = summary_line(s)) {
    BurnRun& r = run(origin, line_no);
    while (r.gpus.size() <= v->first) {
      r.gpus.emplace_back();
      r.gpus.back().index = static_cast<unsigned>(r.gpus.size() - 1);
    }
    r.gpus[v->first].summary_ok = v->second;
    return true;
  }
  if (opens_run(s)) {
    run(origin, line_no);
    return true;
  }
  if (!run_) return false;
  if (starts(s, "Tested ") && s.find(" GPUs:") != std::string_view::npos) return true;
  return is_routine(s);
}

std::optional<BurnRun> BurnScanner::finish() {
  std::optional<BurnRun> r = std::move(run_);
  run_.reset();
  return r;
}

}  // namespace gw
