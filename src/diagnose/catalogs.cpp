#include "diagnose/catalogs.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "diagnose/embedded_data.h"

namespace gw {
namespace {

// Splits one TSV line into its tab-separated fields.
std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string_view::npos ? tab : tab - start));
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  return out;
}

// Calls fn(fields) for every data line (skipping the header and # comments).
template <class Fn>
void for_each_row(std::string_view tsv, Fn fn) {
  bool header = true;
  while (!tsv.empty()) {
    const size_t nl = tsv.find('\n');
    std::string_view line = tsv.substr(0, nl);
    tsv = nl == std::string_view::npos ? std::string_view{} : tsv.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    fn(split_tabs(line));
  }
}

XidCause cause_from(std::string_view s) {
  if (s == "application") return XidCause::kApplication;
  if (s == "driver") return XidCause::kDriver;
  if (s == "hardware") return XidCause::kHardware;
  if (s == "memory") return XidCause::kMemory;
  if (s == "nvlink") return XidCause::kNvLink;
  if (s == "thermal-power") return XidCause::kThermalPower;
  return XidCause::kOther;
}

std::vector<XidInfo> load_xids() {
  std::vector<XidInfo> rows;
  rows.reserve(256);  // the catalog's ~200 rows: built by every process that reads a kernel log
  for_each_row(embedded_xid_catalog_tsv(), [&rows](const std::vector<std::string_view>& f) {
    if (f.size() < 9) return;  // up to the investigatory action; the notes may be missing
    XidInfo x;
    if (std::from_chars(f[0].data(), f[0].data() + f[0].size(), x.xid).ec != std::errc{}) return;
    x.short_name = f[1];
    x.mnemonic = f[2];
    x.meaning = f[3];
    x.cause = cause_from(f[4]);
    x.severity = f[5];
    x.action = f[6];
    x.immediate_action = f[7];
    x.investigatory_action = f[8];
    x.notes = f.size() > 9 ? f[9] : std::string_view{};
    rows.push_back(x);
  });
  std::sort(rows.begin(), rows.end(),
            [](const XidInfo& a, const XidInfo& b) { return a.xid < b.xid; });
  return rows;
}

// "12.4 GA" / "11.4.0 GA" / "10.1 (10.1.105 and updates)" / "12.4" -> {12, 4}
std::optional<std::array<unsigned, 2>> major_minor(std::string_view s) {
  while (!s.empty() && (s.front() == 'c' || s.front() == 'u' || s.front() == ' '))
    s.remove_prefix(1);
  unsigned major = 0, minor = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), major);
  if (r.ec != std::errc{}) return std::nullopt;
  if (r.ptr == s.data() + s.size() || *r.ptr != '.') {
    // "cu121" style: 121 -> 12.1, 118 -> 11.8
    if (major >= 100) return std::array<unsigned, 2>{major / 10, major % 10};
    return std::nullopt;
  }
  auto r2 = std::from_chars(r.ptr + 1, s.data() + s.size(), minor);
  if (r2.ec != std::errc{}) return std::nullopt;
  return std::array<unsigned, 2>{major, minor};
}

std::optional<DriverVersion> parse_min(std::string_view s) {
  while (!s.empty() && (s.front() == '>' || s.front() == '=')) s.remove_prefix(1);
  return parse_driver_version(s);
}

}  // namespace

std::string_view xid_cause_name(XidCause c) {
  switch (c) {
    case XidCause::kApplication:
      return "application";
    case XidCause::kDriver:
      return "driver";
    case XidCause::kHardware:
      return "hardware";
    case XidCause::kMemory:
      return "memory";
    case XidCause::kNvLink:
      return "nvlink";
    case XidCause::kThermalPower:
      return "thermal/power";
    case XidCause::kOther:
      return "other";
  }
  return "other";
}

std::string nvidia_action_words(std::string_view bucket) {
  struct Word {
    std::string_view bucket, words;
  };
  static constexpr Word kWords[] = {
      {"RESTART_APP", "restart the application"},
      {"RESET_GPU", "reset the GPU"},
      {"RESTART_BM", "reboot the machine"},
      {"RESTART_VM", "restart the VM"},
      {"RESTART_FM", "restart the Fabric Manager"},
      {"IGNORE", "nothing on its own"},
      {"CONTACT_SUPPORT", "contact support"},
      {"CHECK_MECHANICALS", "check power, cooling and seating"},
      {"CHECK_UVM", "check the UVM driver"},
      {"UPDATE_SWFW", "update the driver and firmware"},
      {"INVESTIGATE_SW", "investigate the software (driver, application)"},
      {"XID_154", "follow the recovery action Xid 154 announces"},
  };
  for (const Word& w : kWords) {
    if (bucket == w.bucket) return std::string(w.words);
  }
  if (bucket.substr(0, 9) == "WORKFLOW_")
    return "follow NVIDIA's " + std::string(bucket.substr(9)) + " workflow";
  return std::string(bucket);
}

std::span<const XidInfo> xid_catalog() {
  static const std::vector<XidInfo> rows = load_xids();
  return rows;
}

const XidInfo* lookup_xid(unsigned xid) {
  const auto rows = xid_catalog();
  const auto it = std::lower_bound(rows.begin(), rows.end(), xid,
                                   [](const XidInfo& r, unsigned v) { return r.xid < v; });
  return it != rows.end() && it->xid == xid ? &*it : nullptr;
}

std::optional<DriverVersion> parse_driver_version(std::string_view text) {
  DriverVersion v{0, 0, 0};
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (size_t i = 0; i < v.size(); ++i) {
    auto r = std::from_chars(p, end, v[i]);
    if (r.ec != std::errc{}) {
      if (i == 0) return std::nullopt;
      break;
    }
    p = r.ptr;
    if (p == end || *p != '.') break;
    ++p;
  }
  return v;
}

std::string driver_version_string(const DriverVersion& v) {
  if (v[1] == 0 && v[2] == 0) return std::to_string(v[0]);  // a branch floor: "580"
  std::string s = std::to_string(v[0]) + "." + (v[1] < 10 ? "0" : "") + std::to_string(v[1]);
  if (v[2] != 0) s += "." + std::string(v[2] < 10 ? "0" : "") + std::to_string(v[2]);
  return s;
}

std::optional<CudaDriverNeed> cuda_driver_need(std::string_view cuda_version) {
  const auto want = major_minor(cuda_version);
  if (!want) return std::nullopt;
  std::optional<CudaDriverNeed> best;
  for_each_row(embedded_cuda_compat_tsv(), [&](const std::vector<std::string_view>& f) {
    if (f.size() < 5 || f[0] != "toolkit") return;
    const auto mm = major_minor(f[1]);
    if (!mm || *mm != *want) return;
    const auto tk = parse_min(f[2]);
    if (!tk) return;
    // Several rows per minor (GA, Update 1, ...): the GA row has the lowest minimum, and a
    // runtime of that minor needs no more than that.
    if (best && best->toolkit_min <= *tk) return;
    CudaDriverNeed need;
    need.cuda = std::to_string((*want)[0]) + "." + std::to_string((*want)[1]);
    need.toolkit_min = *tk;
    need.compat_min = parse_min(f[4]);
    best = need;
  });
  return best;
}

}  // namespace gw
