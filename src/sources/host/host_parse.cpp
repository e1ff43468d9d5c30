#include "sources/host/host_parse.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "sources/smi/text_util.h"

namespace gw::host {
namespace {

using text::trim;  // blanks are text::is_space's: space, tab, CR, LF

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  text::split_words_any_space(s, out);
  return out;
}

// Calls f(line) for each line.
template <class F>
void each_line(std::string_view text, F f) {
  while (!text.empty()) {
    const auto nl = text.find('\n');
    f(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

std::optional<double> to_double(std::string_view s) {
  s = trim(s);
  double v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  if (!std::isfinite(v)) return std::nullopt;  // from_chars reads "nan" and "inf"
  return v;
}

// A reading the kernel writes as a non-negative number ("-1" is another file's "none").
std::optional<double> to_non_negative(std::string_view s) {
  const auto v = to_double(s);
  if (!v || *v < 0) return std::nullopt;
  return v;
}

std::optional<uint64_t> to_u64(std::string_view s) {
  uint64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

bool looks_like_version(std::string_view s) {
  if (s.empty() || s.front() < '0' || s.front() > '9') return false;
  return s.find_first_not_of("0123456789.") == std::string_view::npos &&
         s.find('.') != std::string_view::npos;
}

// The quoted string after `key` and an '=' or ':' on a Python line: `key = '1.2'`,
// `key: Optional[str] = "1.2"`, `'key': '1.2'`. nullopt when the value is not a string
// literal (None, a call, ...).
std::optional<std::string> python_string_after(std::string_view line, std::string_view key) {
  auto rest = trim(line);
  if (rest.substr(0, key.size()) != key) return std::nullopt;
  rest = trim(rest.substr(key.size()));
  if (rest.empty() || (rest.front() != ':' && rest.front() != '=')) return std::nullopt;
  const bool colon = rest.front() == ':';
  rest = trim(rest.substr(1));
  if (colon && !rest.empty() && rest.front() != '\'' && rest.front() != '"') {
    // An annotation ("cuda: Optional[str] = '12.1'"): the value follows the '='.
    const auto eq = rest.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    rest = trim(rest.substr(eq + 1));
  }
  if (rest.empty() || (rest.front() != '\'' && rest.front() != '"')) return std::nullopt;
  const char q = rest.front();
  const auto end = rest.find(q, 1);
  if (end == std::string_view::npos) return std::nullopt;
  return std::string(rest.substr(1, end - 1));
}

}  // namespace

std::optional<std::string> parse_nvidia_driver_version(std::string_view text) {
  std::optional<std::string> found;
  each_line(text, [&](std::string_view line) {
    if (found || line.find("NVRM version:") == std::string_view::npos) return;
    // The version is the first dotted-number word after "Module".
    const auto mod = line.find("Module");
    const auto words = split_ws(line.substr(mod == std::string_view::npos ? 0 : mod));
    for (const auto w : words) {
      if (looks_like_version(w)) {
        found = std::string(w);
        return;
      }
    }
  });
  return found;
}

LoadedModules parse_proc_modules(std::string_view text) {
  LoadedModules m;
  each_line(text, [&](std::string_view line) {
    const auto words = split_ws(line);
    if (words.empty()) return;
    if (words[0] == "nvidia") m.nvidia = true;
    if (words[0] == "nouveau") m.nouveau = true;
  });
  return m;
}

bool cgroup_says_container(std::string_view text) {
  static constexpr std::array<std::string_view, 7> kHints = {
      "docker", "kubepods", "containerd", "lxc", "libpod", "crio", "garden"};
  bool yes = false;
  each_line(text, [&](std::string_view line) {
    for (const auto h : kHints) {
      if (line.find(h) != std::string_view::npos) yes = true;
    }
  });
  return yes;
}

std::optional<double> parse_link_speed_gt_s(std::string_view text) {
  const auto words = split_ws(text);
  if (words.size() < 2 || words[1] != "GT/s") return std::nullopt;
  const auto v = to_double(words[0]);
  if (!v || *v <= 0) return std::nullopt;
  return v;
}

std::optional<uint32_t> parse_hex(std::string_view text) {
  text = trim(text);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
  }
  uint32_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v, 16);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return v;
}

std::optional<int64_t> parse_int(std::string_view text) {
  text = trim(text);
  int64_t v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || text.empty()) {
    return std::nullopt;
  }
  return v;
}

std::optional<double> parse_loadavg1(std::string_view text) {
  const auto words = split_ws(text);
  if (words.empty()) return std::nullopt;
  return to_non_negative(words[0]);
}

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
  ProcStat st;
  bool have_cpu = false;
  bool bad = false;
  each_line(text, [&](std::string_view line) {
    const auto w = split_ws(line);
    if (w.empty() || w[0].substr(0, 3) != "cpu") return;
    if (w[0] != "cpu") {
      ++st.cpu_count;
      return;
    }
    // user nice system idle iowait irq softirq steal (older kernels stop earlier).
    std::array<uint64_t*, 8> f = {&st.cpu.user,   &st.cpu.nice, &st.cpu.system,  &st.cpu.idle,
                                  &st.cpu.iowait, &st.cpu.irq,  &st.cpu.softirq, &st.cpu.steal};
    if (w.size() < 5) bad = true;
    for (size_t i = 0; i < f.size() && i + 1 < w.size(); ++i) {
      const auto v = to_u64(w[i + 1]);
      if (!v) bad = true;
      *f[i] = v.value_or(0);
    }
    have_cpu = true;
  });
  if (!have_cpu || bad) return std::nullopt;
  return st;
}

namespace {
// CpuTimes::total(), or nullopt when the sum does not fit (it would wrap, and a wrapped total
// makes any share, even one above 100 %).
std::optional<uint64_t> checked_total(const CpuTimes& c) {
  uint64_t sum = 0;
  for (uint64_t v : {c.user, c.nice, c.system, c.idle, c.iowait, c.irq, c.softirq, c.steal})
    if (__builtin_add_overflow(sum, v, &sum)) return std::nullopt;
  return sum;
}
}  // namespace

std::optional<double> iowait_pct(const CpuTimes& before, const CpuTimes& after) {
  const auto b = checked_total(before), a = checked_total(after);
  if (!b || !a) return std::nullopt;
  const uint64_t t0 = *b, t1 = *a;
  if (t1 <= t0 || after.iowait < before.iowait) return std::nullopt;  // no time, or a reset
  // A counter that grew more than the total did is a reset or a broken reading, not a share.
  if (after.iowait - before.iowait > t1 - t0) return std::nullopt;
  return 100.0 * static_cast<double>(after.iowait - before.iowait) / static_cast<double>(t1 - t0);
}

std::optional<double> parse_psi_some_avg10(std::string_view text) {
  std::optional<double> v;
  each_line(text, [&](std::string_view line) {
    const auto w = split_ws(line);
    if (w.empty() || w[0] != "some") return;
    for (const auto word : w) {
      // A percentage of time stalled.
      if (word.substr(0, 6) == "avg10=") {
        v = to_non_negative(word.substr(6));
        if (v && *v > 100) v.reset();
      }
    }
  });
  return v;
}

std::optional<PidStat> parse_pid_stat(std::string_view text) {
  const auto open = text.find('(');
  const auto close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  PidStat st;
  st.comm = std::string(text.substr(open + 1, close - open - 1));
  // After ")": field 3 (state) is w[0]; utime is field 14, stime 15, num_threads 20,
  // starttime 22 (proc(5), 1-based).
  const auto w = split_ws(text.substr(close + 1));
  if (w.size() < 20) return std::nullopt;
  const auto field = [&](size_t n) { return to_u64(w[n - 3]); };
  const auto ut = field(14), stt = field(15), th = field(20), start = field(22);
  if (!ut || !stt || !th || !start || *th > UINT32_MAX) return std::nullopt;
  st.utime_ticks = *ut;
  st.stime_ticks = *stt;
  st.threads = static_cast<unsigned>(*th);
  st.start_ticks = *start;
  return st;
}

std::optional<double> parse_uptime_s(std::string_view text) {
  const auto w = split_ws(text);
  if (w.empty()) return std::nullopt;
  return to_non_negative(w[0]);
}

std::optional<std::string> parse_cuda_version_json(std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  const auto cuda = j.find("cuda");
  if (cuda == j.end() || !cuda->is_object()) return std::nullopt;
  const auto v = cuda->find("version");
  if (v == cuda->end() || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}

std::optional<std::string> parse_cuda_version_txt(std::string_view text) {
  const auto w = split_ws(text);
  for (size_t i = 0; i + 2 < w.size(); ++i) {
    if (w[i] == "CUDA" && w[i + 1] == "Version" && looks_like_version(w[i + 2])) {
      return std::string(w[i + 2]);
    }
  }
  return std::nullopt;
}

std::optional<TorchVersion> parse_torch_version_py(std::string_view text) {
  TorchVersion tv;
  bool have_version = false;
  each_line(text, [&](std::string_view line) {
    if (auto v = python_string_after(line, "__version__")) {
      tv.version = *v;
      have_version = true;
    } else if (auto c = python_string_after(line, "cuda")) {
      tv.cuda = *c;
    }
  });
  if (!have_version) return std::nullopt;
  return tv;
}

std::optional<std::string> parse_tf_build_info_cuda(std::string_view text) {
  std::optional<std::string> v;
  each_line(text, [&](std::string_view line) {
    // Inside the build_info dict, one entry per line: 'cuda_version': '12.2',
    if (auto c = python_string_after(line, "'cuda_version'")) v = *c;
  });
  return v;
}

std::optional<std::pair<std::string, std::string>> parse_dist_info_name(std::string_view name) {
  constexpr std::string_view kSuffix = ".dist-info";
  if (name.size() <= kSuffix.size() || name.substr(name.size() - kSuffix.size()) != kSuffix) {
    return std::nullopt;
  }
  name.remove_suffix(kSuffix.size());
  const auto dash = name.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == name.size()) return std::nullopt;
  return std::pair{std::string(name.substr(0, dash)), std::string(name.substr(dash + 1))};
}

bool is_gpu_env_var(std::string_view name) {
  static constexpr std::array<std::string_view, 8> kPrefixes = {
      "CUDA_", "NCCL_", "NVIDIA_", "TORCH_NCCL_", "TORCH_CUDA", "PYTORCH_", "XLA_", "TF_GPU_"};
  static constexpr std::array<std::string_view, 6> kExact = {
      "LD_LIBRARY_PATH",           "LD_PRELOAD",           "OMP_NUM_THREADS",
      "TF_FORCE_GPU_ALLOW_GROWTH", "TF_CPP_MIN_LOG_LEVEL", "GPU_DEVICE_ORDINAL"};
  for (const auto p : kPrefixes) {
    if (name.substr(0, p.size()) == p) return true;
  }
  for (const auto e : kExact) {
    if (name == e) return true;
  }
  return false;
}

std::map<std::string, std::string> select_gpu_env(const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : env) {
    if (is_gpu_env_var(k)) out.emplace(k, v);
  }
  return out;
}

}  // namespace gw::host
