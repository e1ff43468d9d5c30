// Device keys <-> DeviceInfo / GpuSample members. One visitor lists every key once, and both
// the reader and the writer walk it, so the two cannot disagree.
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>
#include <string>
#include <type_traits>

#include "core/event.h"
#include "core/snapshot_json.h"
#include "sources/nvml/scenario.h"

namespace gw::nvml {
namespace {

constexpr uint64_t kMiB = 1024ull * 1024ull;

template <class F>
void visit_info(DeviceInfo& d, F&& f) {
  f("name", d.name);
  f("uuid", d.uuid);
  f("serial", d.serial);
  f("pci_bus_id", d.pci_bus_id);
  f("minor_number", d.minor_number);
  f("architecture", d.architecture);
  f("vbios_version", d.vbios_version);
  f("mem_total_bytes", d.mem_total_bytes);
  f("temp_slowdown_c", d.temp_slowdown_c);
  f("temp_shutdown_c", d.temp_shutdown_c);
  f("temp_max_operating_c", d.temp_max_operating_c);
  f("temp_mem_max_c", d.temp_mem_max_c);
  f("power_default_limit_mw", d.power_default_limit_mw);
  f("power_min_limit_mw", d.power_min_limit_mw);
  f("power_max_limit_mw", d.power_max_limit_mw);
  f("max_sm_clock_mhz", d.max_sm_clock_mhz);
  f("max_graphics_clock_mhz", d.max_graphics_clock_mhz);
  f("max_mem_clock_mhz", d.max_mem_clock_mhz);
  f("default_app_graphics_clock_mhz", d.default_app_graphics_clock_mhz);
  f("default_app_mem_clock_mhz", d.default_app_mem_clock_mhz);
  f("pcie_max_gen", d.pcie_max_gen);
  f("pcie_gpu_max_gen", d.pcie_gpu_max_gen);
  f("pcie_max_width", d.pcie_max_width);
}

template <class F>
void visit_sample(GpuSample& s, F&& f) {
  f("temp_c", s.temp_c);
  f("mem_temp_c", s.mem_temp_c);
  f("fan_pct", s.fan_pct);
  f("power_mw", s.power_mw);
  f("power_limit_mw", s.power_limit_mw);
  f("energy_mj", s.energy_mj);
  f("sm_clock_mhz", s.sm_clock_mhz);
  f("graphics_clock_mhz", s.graphics_clock_mhz);
  f("mem_clock_mhz", s.mem_clock_mhz);
  f("app_graphics_clock_mhz", s.app_graphics_clock_mhz);
  f("app_mem_clock_mhz", s.app_mem_clock_mhz);
  f("util_gpu_pct", s.util_gpu_pct);
  f("util_mem_pct", s.util_mem_pct);
  f("util_enc_pct", s.util_enc_pct);
  f("util_dec_pct", s.util_dec_pct);
  f("mem_total_bytes", s.mem_total_bytes);
  f("mem_used_bytes", s.mem_used_bytes);
  f("mem_free_bytes", s.mem_free_bytes);
  f("mem_reserved_bytes", s.mem_reserved_bytes);
  f("pcie_gen", s.pcie_gen);
  f("pcie_width", s.pcie_width);
  f("pcie_tx_kb_s", s.pcie_tx_kb_s);
  f("pcie_rx_kb_s", s.pcie_rx_kb_s);
  f("pcie_replays", s.pcie_replays);
  f("ecc_enabled", s.ecc_enabled);
  f("ecc_pending_enabled", s.ecc_pending_enabled);
  f("ecc_sbe_volatile", s.ecc_sbe_volatile);
  f("ecc_dbe_volatile", s.ecc_dbe_volatile);
  f("ecc_sbe_aggregate", s.ecc_sbe_aggregate);
  f("ecc_dbe_aggregate", s.ecc_dbe_aggregate);
  f("retired_pages_sbe", s.retired_pages_sbe);
  f("retired_pages_dbe", s.retired_pages_dbe);
  f("retired_pages_pending", s.retired_pages_pending);
  f("remapped_rows_correctable", s.remapped_rows_correctable);
  f("remapped_rows_uncorrectable", s.remapped_rows_uncorrectable);
  f("remapped_rows_pending", s.remapped_rows_pending);
  f("remapped_rows_failure", s.remapped_rows_failure);
  f("pstate", s.pstate);
  f("persistence_mode", s.persistence_mode);
  f("mig_enabled", s.mig_enabled);
  f("mig_pending", s.mig_pending);
}

template <class F>
void visit_violations(ViolationCounters& v, F&& f) {
  f("power_ns", v.power_ns);
  f("thermal_ns", v.thermal_ns);
  f("sw_thermal_ns", v.sw_thermal_ns);
  f("hw_thermal_ns", v.hw_thermal_ns);
  f("hw_power_brake_ns", v.hw_power_brake_ns);
  f("board_limit_ns", v.board_limit_ns);
  f("reliability_ns", v.reliability_ns);
  f("sync_boost_ns", v.sync_boost_ns);
}

template <class F>
void visit_gpm(GpmMetrics& g, F&& f) {
  f("graphics_util_pct", g.graphics_util_pct);
  f("sm_util_pct", g.sm_util_pct);
  f("sm_occupancy_pct", g.sm_occupancy_pct);
  f("tensor_util_pct", g.tensor_util_pct);
  f("dram_bw_util_pct", g.dram_bw_util_pct);
  f("fp64_util_pct", g.fp64_util_pct);
  f("fp32_util_pct", g.fp32_util_pct);
  f("fp16_util_pct", g.fp16_util_pct);
}

template <class F>
void visit_nvlink(NvLinkInfo& l, F&& f) {
  f("version", l.version);
  f("replay_errors", l.replay_errors);
  f("recovery_errors", l.recovery_errors);
  f("crc_flit_errors", l.crc_flit_errors);
  f("crc_data_errors", l.crc_data_errors);
}

struct ReasonName {
  uint64_t bit;
  const char* name;
};
constexpr std::array<ReasonName, 9> kReasons = {
    {{clock_reason::kGpuIdle, "gpu_idle"},
     {clock_reason::kApplicationsClocksSetting, "applications_clocks"},
     {clock_reason::kSwPowerCap, "sw_power_cap"},
     {clock_reason::kHwSlowdown, "hw_slowdown"},
     {clock_reason::kSyncBoost, "sync_boost"},
     {clock_reason::kSwThermalSlowdown, "sw_thermal"},
     {clock_reason::kHwThermalSlowdown, "hw_thermal"},
     {clock_reason::kHwPowerBrakeSlowdown, "hw_power_brake"},
     {clock_reason::kDisplayClockSetting, "display_clock"}}};

constexpr std::array<const char*, 4> kComputeModes = {"default", "exclusive_thread", "prohibited",
                                                      "exclusive_process"};
// ---- reading one JSON value into a member; errors name the path ----

Status bad(const std::string& where, const std::string& what) {
  return make_error("scenario.bad_field", what, where);
}

template <class T>
Status read_number(const Json& j, std::optional<T>& out, const std::string& where,
                   uint64_t scale = 1) {
  if (j.is_null()) {
    out.reset();
    return {};
  }
  if constexpr (std::is_signed_v<T>) {
    if (!j.is_number_integer()) return bad(where, "expected an integer");
    // Refuse, never wrap: a value outside T would silently become another number.
    if (j.is_number_unsigned()
            ? j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<T>::max())
            : (j.get<int64_t>() < std::numeric_limits<T>::min() ||
               j.get<int64_t>() > std::numeric_limits<T>::max()))
      return bad(where, "value out of range");
    out = static_cast<T>(j.get<int64_t>());
  } else {
    if (!j.is_number_unsigned()) return bad(where, "expected a non-negative integer");
    const auto v = j.get<uint64_t>();
    if (v > std::numeric_limits<T>::max() / scale) return bad(where, "value out of range");
    out = static_cast<T>(v * scale);
  }
  return {};
}

// "fabric_health": the conditions NVML flags, in nvidia-smi's words (["Route Unhealthy"]); []
// is a healthy fabric. The fake encodes them as nvmlGpuFabricInfo_v2_t::healthMask.
Status read_fabric_health(const Json& j, GpuSample& s, const std::string& where) {
  if (j.is_null()) {
    s.fabric_healthy.reset();
    s.fabric_health.clear();
    return {};
  }
  if (!j.is_array())
    return bad(where, "expected an array of conditions, e.g. [\"Route Unhealthy\"]");
  std::string joined;
  for (const Json& c : j) {
    if (!c.is_string() || c.get<std::string>().empty())
      return bad(where, "expected non-empty strings");
    joined += (joined.empty() ? "" : "; ") + c.get<std::string>();
  }
  s.fabric_healthy = joined.empty();
  s.fabric_health = std::move(joined);
  return {};
}

Json write_fabric_health(const GpuSample& s) {
  Json out = Json::array();
  for (size_t p = 0; p < s.fabric_health.size();) {
    size_t e = s.fabric_health.find("; ", p);
    if (e == std::string::npos) e = s.fabric_health.size();
    out.push_back(s.fabric_health.substr(p, e - p));
    p = e + 2;
  }
  return out;
}

Status read_value(const Json& j, std::optional<bool>& out, const std::string& where, uint64_t) {
  if (j.is_null())
    out.reset();
  else if (j.is_boolean())
    out = j.get<bool>();
  else
    return bad(where, "expected true or false");
  return {};
}
Status read_value(const Json& j, std::optional<std::string>& out, const std::string& where,
                  uint64_t) {
  if (j.is_null())
    out.reset();
  else if (j.is_string())
    out = j.get<std::string>();
  else
    return bad(where, "expected a string");
  return {};
}
Status read_value(const Json& j, std::string& out, const std::string& where, uint64_t) {
  if (!j.is_string()) return bad(where, "expected a string");
  out = j.get<std::string>();
  return {};
}
// GPM percentages are fractional; any number is taken as the driver would report it (the
// reader clamps what lies outside 0..100).
Status read_value(const Json& j, std::optional<double>& out, const std::string& where, uint64_t) {
  if (j.is_null())
    out.reset();
  else if (j.is_number())
    out = j.get<double>();
  else
    return bad(where, "expected a number");
  return {};
}
template <class T>
Status read_value(const Json& j, std::optional<T>& out, const std::string& where, uint64_t scale) {
  return read_number(j, out, where, scale);
}

// Walks a visitor over `obj`: every key the visitor knows is read; "<x>_bytes" keys may be
// given as "<x>_mib". Keys consumed are added to `used`.
template <class Visit, class Target>
Status read_members(const Json& obj, Target& target, Visit visit, const std::string& where,
                    std::set<std::string>& used) {
  Status st;
  visit(target, [&](const char* key, auto& member) {
    if (!st) return;
    std::string k = key;
    uint64_t scale = 1;
    auto it = obj.find(k);
    if (it == obj.end() && k.ends_with("_bytes")) {
      k = k.substr(0, k.size() - 6) + "_mib";
      scale = kMiB;
      it = obj.find(k);
    }
    if (it == obj.end()) return;
    used.insert(k);
    st = read_value(*it, member, where + "." + k, scale);
  });
  return st;
}

template <class Visit, class Target>
void write_members(Json& obj, Target& target, Visit visit) {
  visit(target, [&](const char* key, auto& member) {
    if constexpr (std::is_same_v<std::decay_t<decltype(member)>, std::string>) {
      if (!member.empty()) obj[key] = member;
    } else {
      if (member) obj[key] = *member;
    }
  });
}

}  // namespace

namespace {

Status read_reasons(const Json& j, std::optional<uint64_t>& out, const std::string& where) {
  if (j.is_null()) {
    out.reset();
    return {};
  }
  if (j.is_number_unsigned()) {
    out = j.get<uint64_t>();
    return {};
  }
  if (!j.is_array()) return bad(where, "expected a list of reason names or a bitmask");
  uint64_t bits = 0;
  for (const Json& n : j) {
    const auto* r =
        n.is_string()
            ? std::find_if(kReasons.begin(), kReasons.end(),
                           [&](const ReasonName& x) { return n.get<std::string>() == x.name; })
            : kReasons.end();
    if (r == kReasons.end())
      return bad(where, "unknown clock reason " + n.dump() +
                            " (known: gpu_idle, sw_power_cap, hw_slowdown, sync_boost, sw_thermal, "
                            "hw_thermal, hw_power_brake, applications_clocks, display_clock)");
    bits |= r->bit;
  }
  out = bits;
  return {};
}

Json write_reasons(uint64_t bits) {
  Json names = Json::array();
  uint64_t known = 0;
  for (const auto& r : kReasons) {
    if (bits & r.bit) names.push_back(r.name);
    known |= r.bit;
  }
  if ((bits & ~known) != 0) return bits;  // bits we have no name for: keep the number
  return names;
}

Status read_compute_mode(const Json& j, std::optional<ComputeMode>& out, const std::string& where) {
  if (j.is_null()) {
    out.reset();
    return {};
  }
  for (size_t i = 0; i < kComputeModes.size(); ++i) {
    if (j.is_string() && j.get<std::string>() == kComputeModes[i]) {
      out = static_cast<ComputeMode>(i);
      return {};
    }
  }
  return bad(where, "expected default, exclusive_process, prohibited or exclusive_thread");
}

Status read_fabric_state(const Json& j, std::optional<FabricState>& out, const std::string& where) {
  if (j.is_null()) {
    out.reset();
    return {};
  }
  if (j.is_string()) out = fabric_state_from_key(j.get<std::string>());
  if (j.is_string() && out) return {};
  return bad(where, "expected not_supported, not_started, in_progress or completed");
}

Status read_processes(const Json& j, std::optional<std::vector<ProcessInfo>>& out,
                      const std::string& where) {
  if (j.is_null()) {
    out.reset();
    return {};
  }
  if (!j.is_array()) return bad(where, "expected a list of processes");
  std::vector<ProcessInfo> procs;
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string w = where + "[" + std::to_string(i) + "]";
    const Json& p = j[i];
    if (!p.is_object() || !p.contains("pid") || !p["pid"].is_number_unsigned())
      return bad(w, "expected an object with a numeric pid");
    if (p["pid"].get<uint64_t>() > std::numeric_limits<uint32_t>::max())
      return bad(w + ".pid", "value out of range");
    ProcessInfo info;
    info.pid = p["pid"].get<uint32_t>();
    std::optional<bool> graphics;
    std::set<std::string> used{"pid"};
    Status st = read_members(
        p, info,
        [](ProcessInfo& t, auto&& f) {
          f("used_mem_bytes", t.used_mem_bytes);
          f("name", t.name);
        },
        w, used);
    if (!st) return st;
    if (auto g = p.find("graphics"); g != p.end()) {
      used.insert("graphics");
      if (!(st = read_value(*g, graphics, w + ".graphics", 1))) return st;
    }
    for (const auto& [k, v] : p.items())
      if (!used.count(k)) return bad(w + "." + k, "unknown process key");
    info.graphics = graphics.value_or(false);
    procs.push_back(std::move(info));
  }
  out = std::move(procs);
  return {};
}

Status read_nvlinks(const Json& j, std::vector<NvLinkInfo>& out, const std::string& where) {
  if (!j.is_array()) return bad(where, "expected a list of links");
  out.clear();
  for (size_t i = 0; i < j.size(); ++i) {
    const std::string w = where + "[" + std::to_string(i) + "]";
    const Json& l = j[i];
    if (!l.is_object() || !l.contains("link") || !l["link"].is_number_unsigned())
      return bad(w, "expected an object with a numeric link");
    if (l["link"].get<uint64_t>() > 255) return bad(w + ".link", "value out of range");
    if (l.contains("active") && !l["active"].is_boolean())
      return bad(w + ".active", "expected true or false");
    NvLinkInfo info;
    info.link = l["link"].get<unsigned>();
    info.active = l.value("active", true);
    std::set<std::string> used{"link", "active"};
    if (Status st = read_members(
            l, info, [](NvLinkInfo& t, auto&& f) { visit_nvlink(t, f); }, w, used);
        !st)
      return st;
    for (const auto& [k, v] : l.items())
      if (!used.count(k)) return bad(w + "." + k, "unknown NVLink key");
    out.push_back(info);
  }
  return {};
}

Status read_unsupported(const Json& j, CapabilitySet& caps, const std::string& where) {
  if (!j.is_array()) return bad(where, "expected a list of capability names");
  for (size_t i = 0; i < kCapabilityCount; ++i) caps.set(static_cast<Capability>(i));
  for (const Json& n : j) {
    const auto c = n.is_string() ? capability_from_name(n.get<std::string>()) : std::nullopt;
    if (!c) return bad(where, "unknown capability " + n.dump() + " (see docs/scenario-format.md)");
    caps.set(*c, false);
  }
  return {};
}

// The keys that are not plain members.
Status read_special(const Json& obj, ScenarioGpu& g, const std::string& where,
                    std::set<std::string>& used) {
  auto take = [&](const char* k) -> const Json* {
    auto it = obj.find(k);
    if (it == obj.end()) return nullptr;
    used.insert(k);
    return &*it;
  };
  GpuSample& s = g.state.sample;
  Status st;
  if (const Json* j = take("clock_reasons"))
    st = read_reasons(*j, s.clock_reasons, where + ".clock_reasons");
  if (const Json* j = take("compute_mode"); j && st)
    st = read_compute_mode(*j, s.compute_mode, where + ".compute_mode");
  if (const Json* j = take("processes"); j && st)
    st = read_processes(*j, s.processes, where + ".processes");
  if (const Json* j = take("fabric_state"); j && st)
    st = read_fabric_state(*j, s.fabric_state, where + ".fabric_state");
  // "Success" or an NVML return name (INSUFFICIENT_RESOURCES), as the registration ended.
  if (const Json* j = take("fabric_status"); j && st) {
    if (j->is_null())
      s.fabric_status.clear();
    else
      st = read_value(*j, s.fabric_status, where + ".fabric_status", 1);
  }
  if (const Json* j = take("fabric_health"); j && st)
    st = read_fabric_health(*j, s, where + ".fabric_health");
  if (const Json* j = take("nvlinks"); j && st)
    st = read_nvlinks(*j, s.nvlinks, where + ".nvlinks");
  if (const Json* j = take("unsupported"); j && st)
    st = read_unsupported(*j, g.state.info.caps, where + ".unsupported");
  if (const Json* j = take("violations"); j && st) {
    if (!j->is_object()) return bad(where + ".violations", "expected an object");
    std::set<std::string> vused;
    st = read_members(
        *j, s.violations, [](ViolationCounters& t, auto&& f) { visit_violations(t, f); },
        where + ".violations", vused);
    for (const auto& [k, v] : j->items())
      if (st && !vused.count(k)) st = bad(where + ".violations." + k, "unknown violation counter");
  }
  if (const Json* j = take("gpm"); j && st) {
    if (!j->is_object()) return bad(where + ".gpm", "expected an object");
    std::set<std::string> gused;
    st = read_members(
        *j, s.gpm, [](GpmMetrics& t, auto&& f) { visit_gpm(t, f); }, where + ".gpm", gused);
    for (const auto& [k, v] : j->items())
      if (st && !gused.count(k)) st = bad(where + ".gpm." + k, "unknown GPM metric");
  }
  if (const Json* j = take("handle_error"); j && st) {
    g.handle_error =
        j->is_null() ? std::nullopt
                     : nvml_return_from_name(j->is_string() ? j->get<std::string>() : j->dump());
    if (!j->is_null() && !g.handle_error)
      st = bad(where + ".handle_error", "unknown NVML return code");
  }
  if (const Json* j = take("pci_device_id"); j && st) {
    // A 32-bit id, as hex text or a number; anything else (or wider) is refused.
    const std::string t = j->is_string() ? j->get<std::string>() : std::string();
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = j->is_string() ? std::strtoull(t.c_str(), &end, 0) : 0;
    if (j->is_string() && !t.empty() && t[0] != '-' && end == t.c_str() + t.size() && errno == 0 &&
        v <= std::numeric_limits<uint32_t>::max())
      g.pci_device_id = static_cast<unsigned>(v);
    else if (j->is_number_unsigned() && j->get<uint64_t>() <= std::numeric_limits<uint32_t>::max())
      g.pci_device_id = j->get<unsigned>();
    else
      st = bad(where + ".pci_device_id", "expected \"0x233010DE\" or a number");
  }
  return st;
}

}  // namespace

Status apply_device_fields(const Json& fields, ScenarioGpu& g, const std::string& where) {
  if (!fields.is_object()) return bad(where, "expected an object of device keys");
  std::set<std::string> used;
  Status st = read_members(
      fields, g.state.info, [](DeviceInfo& d, auto&& f) { visit_info(d, f); }, where, used);
  if (st)
    st = read_members(
        fields, g.state.sample, [](GpuSample& s, auto&& f) { visit_sample(s, f); }, where, used);
  if (st) st = read_special(fields, g, where, used);
  if (!st) return st;
  for (const auto& [k, v] : fields.items())
    if (!used.count(k))
      return bad(where + "." + k, "unknown device key (see docs/scenario-format.md)");
  if (!g.state.info.pci_bus_id.empty()) {
    auto norm = normalize_pci_bus_id(g.state.info.pci_bus_id);
    if (!norm) return bad(where + ".pci_bus_id", "not a PCI address: " + g.state.info.pci_bus_id);
    g.state.info.pci_bus_id = *norm;
  }
  return {};
}

Json device_fields(const ScenarioGpu& gpu) {
  ScenarioGpu g = gpu;  // the visitors take non-const members
  Json o = Json::object();
  write_members(o, g.state.info, [](DeviceInfo& d, auto&& f) { visit_info(d, f); });
  if (g.pci_device_id) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08X", *g.pci_device_id);
    o["pci_device_id"] = buf;
  }
  Json unsupported = Json::array();
  for (size_t i = 0; i < kCapabilityCount; ++i)
    if (!g.state.info.caps.has(static_cast<Capability>(i)))
      unsupported.push_back(capability_name(static_cast<Capability>(i)));
  o["unsupported"] = unsupported;
  if (g.handle_error) o["handle_error"] = nvml_return_name(*g.handle_error);
  GpuSample& s = g.state.sample;
  write_members(o, s, [](GpuSample& x, auto&& f) { visit_sample(x, f); });
  if (s.clock_reasons) o["clock_reasons"] = write_reasons(*s.clock_reasons);
  if (s.compute_mode) o["compute_mode"] = kComputeModes.at(static_cast<size_t>(*s.compute_mode));
  if (s.fabric_state) o["fabric_state"] = std::string(fabric_state_key(*s.fabric_state));
  if (!s.fabric_status.empty()) o["fabric_status"] = s.fabric_status;
  if (s.fabric_healthy) o["fabric_health"] = write_fabric_health(s);
  Json v = Json::object();
  write_members(v, s.violations, [](ViolationCounters& t, auto&& f) { visit_violations(t, f); });
  if (!v.empty()) o["violations"] = v;
  Json gpm = Json::object();
  write_members(gpm, s.gpm, [](GpmMetrics& t, auto&& f) { visit_gpm(t, f); });
  if (!gpm.empty()) o["gpm"] = gpm;
  if (s.processes) {
    Json procs = Json::array();
    for (ProcessInfo& p : *s.processes) {
      Json pj = {{"pid", p.pid}};
      if (p.used_mem_bytes) pj["used_mem_bytes"] = *p.used_mem_bytes;
      if (p.name) pj["name"] = *p.name;
      if (p.graphics) pj["graphics"] = true;
      procs.push_back(pj);
    }
    o["processes"] = procs;
  }
  if (!s.nvlinks.empty()) {
    Json links = Json::array();
    for (NvLinkInfo& l : s.nvlinks) {
      Json lj = {{"link", l.link}, {"active", l.active}};
      write_members(lj, l, [](NvLinkInfo& t, auto&& f) { visit_nvlink(t, f); });
      links.push_back(lj);
    }
    o["nvlinks"] = links;
  }
  return o;
}

}  // namespace gw::nvml
