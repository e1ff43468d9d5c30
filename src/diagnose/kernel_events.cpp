#include "diagnose/kernel_events.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <ctime>
#include <set>
#include <string>
#include <unordered_map>

#include "diagnose/context.h"

namespace gw {

namespace {

struct Clock {
  int kind;  // 0 wall, 1 uptime, 2 in-year
  double s;
};

std::optional<Clock> clock_of(const Event& e) {
  if (e.time_ms) return Clock{0, static_cast<double>(*e.time_ms) / 1000.0};
  if (e.uptime_s) return Clock{1, *e.uptime_s};
  if (e.time_in_year_ms) return Clock{2, static_cast<double>(*e.time_in_year_ms) / 1000.0};
  return std::nullopt;
}

// "GPU4" tokens in s -> 4.
std::optional<unsigned> driver_gpu_token(std::string_view s) {
  size_t p = 0;
  while ((p = s.find("GPU", p)) != std::string_view::npos) {
    p += 3;
    size_t e = p;
    unsigned n = 0;
    while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e])) && e - p < 3)
      n = n * 10 + static_cast<unsigned>(s[e++] - '0');
    if (e > p && (e == s.size() || !std::isalnum(static_cast<unsigned char>(s[e])))) return n;
  }
  return std::nullopt;
}

}  // namespace

bool aer_unrecovered(std::string_view m) {
  return m.find("can't recover") != std::string_view::npos ||
         m.find("recovery failed") != std::string_view::npos ||
         m.find("(Fatal)") != std::string_view::npos;
}

std::optional<double> seconds_between(const Event& a, const Event& b) {
  const auto ca = clock_of(a), cb = clock_of(b);
  if (!ca || !cb || ca->kind != cb->kind) return std::nullopt;
  return cb->s - ca->s;
}

std::string event_when(const Event& e) {
  if (e.time_ms) {
    const std::time_t t = static_cast<std::time_t>(*e.time_ms / 1000);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return buf;
  }
  if (e.uptime_s) return fmt::format("{:.0f} s after boot", *e.uptime_s);
  if (e.time_in_year_ms) {
    // Day of a non-leap year: the log gave no year.
    static constexpr std::array<int, 12> kBefore = {0,   31,  59,  90,  120, 151,
                                                    181, 212, 243, 273, 304, 334};
    static constexpr std::array<const char*, 12> kMon = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                         "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    const int64_t s = *e.time_in_year_ms / 1000;
    const int64_t day = s / 86400;
    size_t m = 11;
    while (m > 0 && kBefore[m] > day) --m;
    return fmt::format("{} {} {:02}:{:02}:{:02}", kMon[m], day - kBefore[m] + 1, s % 86400 / 3600,
                       s % 3600 / 60, s % 60);
  }
  return e.origin;
}

std::string gpu_words(std::optional<unsigned> gpu, const std::optional<std::string>& pci,
                      std::optional<unsigned> driver_gpu) {
  if (gpu) return pci ? fmt::format("GPU {} ({})", *gpu, *pci) : fmt::format("GPU {}", *gpu);
  if (pci) return "GPU at PCI " + *pci;
  if (driver_gpu)
    return fmt::format("GPU{} as the driver numbers it (no PCI address in the log)", *driver_gpu);
  return "an unidentified GPU";
}

std::string pci_device(const std::string& normalised) {
  const size_t dot = normalised.rfind('.');
  return dot == std::string::npos ? normalised : normalised.substr(0, dot);
}

std::optional<std::string> normalise_event_pci(const std::optional<std::string>& pci) {
  if (!pci) return std::nullopt;
  std::string_view v = *pci;
  if (v.substr(0, 4) == "PCI:" || v.substr(0, 4) == "pci:") v.remove_prefix(4);
  return normalize_pci_bus_id(v);
}

namespace {

// The key of the GPU at a normalised PCI address: its index where a snapshot lists it.
std::string key_of_pci(const DiagnoseContext& c, const std::string& pci) {
  if (auto g = c.gpu_by_pci(pci)) return "g" + std::to_string(*g);
  return "p" + pci_device(pci);
}

}  // namespace

std::string gpu_key(const DiagnoseContext& c, const Event& e, const DriverGpuMap& m) {
  if (e.gpu_index) return "g" + std::to_string(*e.gpu_index);
  if (e.pci_bus_id) {
    auto [it, fresh] = c.gpu_key_of_pci.try_emplace(*e.pci_bus_id);
    if (fresh) {
      const std::optional<std::string> pci = normalise_event_pci(e.pci_bus_id);
      if (pci) it->second = key_of_pci(c, *pci);  // else "": no address to go by
    }
    if (!it->second.empty()) return it->second;
  }
  if (!e.driver_gpu) return "";
  const auto it = m.find(*e.driver_gpu);
  if (it == m.end()) return "d" + std::to_string(*e.driver_gpu);
  return key_of_pci(c, it->second);
}

std::set<std::string> gpu_devices(const DiagnoseContext& c) {
  std::set<std::string> out;
  for (const GpuSeries& g : c.gpus) {
    if (auto n = normalize_pci_bus_id(g.pci())) out.insert(pci_device(*n));
  }
  for (const Event& e : c.obs.events) {
    // SXid lines name the switch; AER, link and hung-task lines any device.
    if (e.kind == EventKind::kSXid) continue;
    if (e.kind == EventKind::kDriverMessage &&
        (e.driver_kind == DriverMessageKind::kPcieAer ||
         e.driver_kind == DriverMessageKind::kHungTask ||
         e.driver_kind == DriverMessageKind::kPcieLinkLimited))
      continue;
    if (auto n = normalise_event_pci(e.pci_bus_id)) out.insert(pci_device(*n));
  }
  return out;
}

DriverGpuMap driver_gpu_map(const DiagnoseContext& c) {
  DriverGpuMap m;
  // A log that names one GPU by address and one by the driver's number only ("NVRM: GPU0
  // _kgspBootGspRm: ..." before "NVRM: GPU 0000:01:00.0: RmInitAdapter failed!") speaks of one
  // GPU: the driver prints the number where the GPU object exists and the address elsewhere.
  std::optional<std::string> one_address;
  std::optional<unsigned> one_number;
  bool many_addresses = false, many_numbers = false;
  // Thousands of kept events of a big log name a few addresses: each is normalised once.
  std::unordered_map<std::string, std::optional<std::string>> normalised;
  const std::optional<std::string> none;
  const auto normalise = [&](const std::optional<std::string>& raw) -> const auto& {
    if (!raw) return none;
    auto [it, fresh] = normalised.try_emplace(*raw);
    if (fresh) it->second = normalise_event_pci(raw);
    return it->second;
  };
  for (const Event& e : c.obs.events) {
    const std::optional<std::string>& pci = normalise(e.pci_bus_id);
    if (!pci) {
      if (e.driver_gpu && !many_numbers) {
        many_numbers = one_number && *one_number != *e.driver_gpu;
        one_number = e.driver_gpu;
      }
      continue;
    }
    if (!many_addresses) {
      many_addresses = one_address && *one_address != *pci;
      one_address = *pci;
    }
    std::optional<unsigned> n = e.driver_gpu;
    if (!n && e.kind == EventKind::kXid) n = driver_gpu_token(e.message);
    if (n) m.emplace(*n, *pci);
  }
  if (one_address && !many_addresses && one_number && !many_numbers && !m.count(*one_number))
    m.emplace(*one_number, *one_address);
  return m;
}

std::string_view trim_text(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::optional<unsigned> leading_uint(std::string_view s) {
  unsigned v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc{}) return std::nullopt;
  return v;
}

std::optional<int> leading_int(std::string_view s) {
  int v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc{}) return std::nullopt;
  return v;
}

std::optional<unsigned> hex_value(std::string_view s) {
  if (s.substr(0, 2) == "0x" || s.substr(0, 2) == "0X") s.remove_prefix(2);
  unsigned v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (r.ec != std::errc{}) return std::nullopt;
  return v;
}

}  // namespace gw
