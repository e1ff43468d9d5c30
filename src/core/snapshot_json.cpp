#include "core/snapshot_json.h"

#include <array>
#include <charconv>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace gw {
namespace {

using nlohmann::json;

// ---- one list of plain fields per struct, shared by the writer and the reader ----
// `v(key, field)` is called for every plain optional/scalar field, so the two directions can
// never drift apart.

template <class D, class V>
void device_fields(D& d, V&& v) {
  v("index", d.index);
  v("name", d.name);
  v("uuid", d.uuid);
  v("serial", d.serial);
  v("pci_bus_id", d.pci_bus_id);
  v("minor_number", d.minor_number);
  v("architecture", d.architecture);
  v("vbios_version", d.vbios_version);
  v("mem_total_bytes", d.mem_total_bytes);
  v("temp_slowdown_c", d.temp_slowdown_c);
  v("temp_shutdown_c", d.temp_shutdown_c);
  v("temp_max_operating_c", d.temp_max_operating_c);
  v("temp_mem_max_c", d.temp_mem_max_c);
  v("power_default_limit_mw", d.power_default_limit_mw);
  v("power_min_limit_mw", d.power_min_limit_mw);
  v("power_max_limit_mw", d.power_max_limit_mw);
  v("max_sm_clock_mhz", d.max_sm_clock_mhz);
  v("max_graphics_clock_mhz", d.max_graphics_clock_mhz);
  v("max_mem_clock_mhz", d.max_mem_clock_mhz);
  v("default_app_graphics_clock_mhz", d.default_app_graphics_clock_mhz);
  v("default_app_mem_clock_mhz", d.default_app_mem_clock_mhz);
  v("pcie_max_gen", d.pcie_max_gen);
  v("pcie_gpu_max_gen", d.pcie_gpu_max_gen);
  v("pcie_max_width", d.pcie_max_width);
}

template <class S, class V>
void violation_fields(S& s, V&& v) {
  v("power_ns", s.power_ns);
  v("thermal_ns", s.thermal_ns);
  v("sw_thermal_ns", s.sw_thermal_ns);
  v("hw_thermal_ns", s.hw_thermal_ns);
  v("hw_power_brake_ns", s.hw_power_brake_ns);
  v("board_limit_ns", s.board_limit_ns);
  v("reliability_ns", s.reliability_ns);
  v("sync_boost_ns", s.sync_boost_ns);
}

template <class S, class V>
void sample_fields(S& s, V&& v) {
  v("temp_c", s.temp_c);
  v("mem_temp_c", s.mem_temp_c);
  v("fan_pct", s.fan_pct);
  v("power_mw", s.power_mw);
  v("power_limit_mw", s.power_limit_mw);
  v("energy_mj", s.energy_mj);
  v("sm_clock_mhz", s.sm_clock_mhz);
  v("graphics_clock_mhz", s.graphics_clock_mhz);
  v("mem_clock_mhz", s.mem_clock_mhz);
  v("app_graphics_clock_mhz", s.app_graphics_clock_mhz);
  v("app_mem_clock_mhz", s.app_mem_clock_mhz);
  v("util_gpu_pct", s.util_gpu_pct);
  v("util_mem_pct", s.util_mem_pct);
  v("util_enc_pct", s.util_enc_pct);
  v("util_dec_pct", s.util_dec_pct);
  v("mem_total_bytes", s.mem_total_bytes);
  v("mem_used_bytes", s.mem_used_bytes);
  v("mem_free_bytes", s.mem_free_bytes);
  v("mem_reserved_bytes", s.mem_reserved_bytes);
  v("pcie_gen", s.pcie_gen);
  v("pcie_width", s.pcie_width);
  v("pcie_tx_kb_s", s.pcie_tx_kb_s);
  v("pcie_rx_kb_s", s.pcie_rx_kb_s);
  v("pcie_replays", s.pcie_replays);
  v("ecc_enabled", s.ecc_enabled);
  v("ecc_pending_enabled", s.ecc_pending_enabled);
  v("ecc_sbe_volatile", s.ecc_sbe_volatile);
  v("ecc_dbe_volatile", s.ecc_dbe_volatile);
  v("ecc_sbe_aggregate", s.ecc_sbe_aggregate);
  v("ecc_dbe_aggregate", s.ecc_dbe_aggregate);
  v("ecc_sram_uncorrectable_volatile", s.ecc_sram_uncorrectable_volatile);
  v("ecc_sram_uncorrectable_aggregate", s.ecc_sram_uncorrectable_aggregate);
  v("ecc_sram_threshold_exceeded", s.ecc_sram_threshold_exceeded);
  v("retired_pages_sbe", s.retired_pages_sbe);
  v("retired_pages_dbe", s.retired_pages_dbe);
  v("retired_pages_pending", s.retired_pages_pending);
  v("remapped_rows_correctable", s.remapped_rows_correctable);
  v("remapped_rows_uncorrectable", s.remapped_rows_uncorrectable);
  v("remapped_rows_pending", s.remapped_rows_pending);
  v("remapped_rows_failure", s.remapped_rows_failure);
  v("pstate", s.pstate);
  v("persistence_mode", s.persistence_mode);
  v("mig_enabled", s.mig_enabled);
  v("mig_pending", s.mig_pending);
}

template <class G, class V>
void gpm_fields(G& g, V&& v) {
  v("graphics_util_pct", g.graphics_util_pct);
  v("sm_util_pct", g.sm_util_pct);
  v("sm_occupancy_pct", g.sm_occupancy_pct);
  v("tensor_util_pct", g.tensor_util_pct);
  v("dram_bw_util_pct", g.dram_bw_util_pct);
  v("fp64_util_pct", g.fp64_util_pct);
  v("fp32_util_pct", g.fp32_util_pct);
  v("fp16_util_pct", g.fp16_util_pct);
}

template <class P, class V>
void process_fields(P& p, V&& v) {
  v("pid", p.pid);
  v("used_mem_bytes", p.used_mem_bytes);
  v("name", p.name);
  v("graphics", p.graphics);
}

template <class L, class V>
void nvlink_fields(L& l, V&& v) {
  v("link", l.link);
  v("active", l.active);
  v("version", l.version);
  v("replay_errors", l.replay_errors);
  v("recovery_errors", l.recovery_errors);
  v("crc_flit_errors", l.crc_flit_errors);
  v("crc_data_errors", l.crc_data_errors);
}

template <class S, class V>
void snapshot_fields(S& s, V&& v) {
  v("time_ms", s.time_ms);
  v("source", s.source);
  v("hostname", s.hostname);
  v("driver_version", s.driver_version);
  v("nvml_version", s.nvml_version);
  v("cuda_driver_version", s.cuda_driver_version);
}

// ---- writing ----

struct Writer {
  json* out;
  template <class T>
  void operator()(const char* key, const std::optional<T>& field) const {
    (*out)[key] = field ? json(*field) : json(nullptr);
  }
  template <class T>
  void operator()(const char* key, const T& field) const {
    (*out)[key] = field;
  }
};

template <class T, class F>
json object_of(const T& value, F fields) {
  json j = json::object();
  fields(value, Writer{&j});
  return j;
}

constexpr std::array<std::pair<uint64_t, std::string_view>, 9> kReasonNames = {{
    {clock_reason::kGpuIdle, "gpu_idle"},
    {clock_reason::kApplicationsClocksSetting, "applications_clocks_setting"},
    {clock_reason::kSwPowerCap, "sw_power_cap"},
    {clock_reason::kHwSlowdown, "hw_slowdown"},
    {clock_reason::kSyncBoost, "sync_boost"},
    {clock_reason::kSwThermalSlowdown, "sw_thermal_slowdown"},
    {clock_reason::kHwThermalSlowdown, "hw_thermal_slowdown"},
    {clock_reason::kHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
    {clock_reason::kDisplayClockSetting, "display_clock_setting"},
}};

json sample_to_json(const GpuSample& s) {
  json j = object_of(s, [](const auto& x, auto&& v) { sample_fields(x, v); });
  j["clock_reasons"] = s.clock_reasons ? json(*s.clock_reasons) : json(nullptr);
  j["clock_reason_names"] =
      s.clock_reasons ? json(clock_reason_names(*s.clock_reasons)) : json(nullptr);
  j["violations"] =
      object_of(s.violations, [](const auto& x, auto&& v) { violation_fields(x, v); });
  // Only GPUs with GPM readings carry the object (most sources have none).
  if (s.gpm.any()) j["gpm"] = object_of(s.gpm, [](const auto& x, auto&& v) { gpm_fields(x, v); });
  j["compute_mode"] =
      s.compute_mode ? json(std::string(compute_mode_name(*s.compute_mode))) : json(nullptr);
  // Only GPUs that report a fabric registration carry these (NVSwitch systems).
  if (s.fabric_state) j["fabric_state"] = std::string(fabric_state_key(*s.fabric_state));
  if (!s.fabric_status.empty()) j["fabric_status"] = s.fabric_status;
  if (s.fabric_healthy) j["fabric_healthy"] = *s.fabric_healthy;
  if (!s.fabric_health.empty()) j["fabric_health"] = s.fabric_health;
  if (s.processes) {
    json list = json::array();
    for (const auto& p : *s.processes) {
      list.push_back(object_of(p, [](const auto& x, auto&& v) { process_fields(x, v); }));
    }
    j["processes"] = std::move(list);
  } else {
    j["processes"] = nullptr;
  }
  json links = json::array();
  for (const auto& l : s.nvlinks) {
    links.push_back(object_of(l, [](const auto& x, auto&& v) { nvlink_fields(x, v); }));
  }
  j["nvlinks"] = std::move(links);
  return j;
}

json gpu_to_json(const GpuState& g) {
  json j = json::object();
  json dev = object_of(g.info, [](const auto& x, auto&& v) { device_fields(x, v); });
  json caps = json::array();
  for (size_t i = 0; i < kCapabilityCount; ++i) {
    const auto c = static_cast<Capability>(i);
    if (g.info.caps.has(c)) caps.push_back(std::string(capability_name(c)));
  }
  dev["capabilities"] = std::move(caps);
  j["device"] = std::move(dev);
  j["access"] = std::string(gpu_access_name(g.access));
  j["errors"] = g.errors;
  if (!g.failed_readings.empty()) j["failed_readings"] = g.failed_readings;
  j["sample"] = sample_to_json(g.sample);
  return j;
}

// ---- reading: a failure throws BadField, caught once in snapshot_from_json ----

struct BadField {
  std::string code;
  std::string message;
  std::string path;
};

std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string type_of(const json& j) {
  if (j.is_number_float()) return "a fractional number";
  if (j.is_number()) return "a number";
  return std::string("a ") + j.type_name();
}

[[noreturn]] void wrong_type(const json& j, const std::string& path, std::string_view want) {
  throw BadField{"snapshot_json.type", "expected " + std::string(want) + ", got " + type_of(j),
                 path};
}

template <class T>
T read_value(const json& j, const std::string& path) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) wrong_type(j, path, "true or false");
    return j.get<bool>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!j.is_string()) wrong_type(j, path, "a string");
    return j.get<std::string>();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!j.is_number()) wrong_type(j, path, "a number");
    return j.get<T>();
  } else {
    static_assert(std::is_integral_v<T>);
    if (!j.is_number_integer()) wrong_type(j, path, "an integer");
    using L = std::numeric_limits<T>;
    if (j.is_number_unsigned()) {
      const auto u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(L::max())) {
        throw BadField{"snapshot_json.range", std::to_string(u) + " is out of range", path};
      }
      return static_cast<T>(u);
    }
    const auto i = j.get<int64_t>();
    if (i < static_cast<int64_t>(L::min()) ||
        (i > 0 && static_cast<uint64_t>(i) > static_cast<uint64_t>(L::max()))) {
      throw BadField{"snapshot_json.range", std::to_string(i) + " is out of range", path};
    }
    return static_cast<T>(i);
  }
}

struct Reader {
  const json* obj;
  std::string path;

  template <class T>
  void operator()(const char* key, std::optional<T>& field) const {
    const auto it = obj->find(key);
    if (it == obj->end() || it->is_null()) {
      field.reset();
    } else {
      field = read_value<T>(*it, join(path, key));
    }
  }
  template <class T>
  void operator()(const char* key, T& field) const {
    const auto it = obj->find(key);
    if (it == obj->end() || it->is_null()) {
      throw BadField{"snapshot_json.missing", "required key is missing", join(path, key)};
    }
    field = read_value<T>(*it, join(path, key));
  }
};

const json& require_object(const json& j, const std::string& path) {
  if (!j.is_object()) wrong_type(j, path, "an object");
  return j;
}

// The array at obj[key]; absent or null reads as empty when `optional` is true.
const json* find_array(const json& obj, const std::string& path, const char* key, bool optional) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (optional) return nullptr;
    throw BadField{"snapshot_json.missing", "required key is missing", join(path, key)};
  }
  if (!it->is_array()) wrong_type(*it, join(path, key), "an array");
  return &*it;
}

std::string item(const std::string& path, const char* key, size_t i) {
  return join(path, key) + "[" + std::to_string(i) + "]";
}

template <class T, class F>
T read_object(const json& j, const std::string& path, F fields) {
  require_object(j, path);
  T value{};
  fields(value, Reader{&j, path});
  return value;
}

CapabilitySet read_caps(const json& dev, const std::string& path) {
  CapabilitySet caps;
  const json* list = find_array(dev, path, "capabilities", true);
  if (list == nullptr) return caps;
  for (size_t i = 0; i < list->size(); ++i) {
    const auto p = item(path, "capabilities", i);
    const auto name = read_value<std::string>((*list)[i], p);
    const auto c = capability_from_name(name);
    if (!c) throw BadField{"snapshot_json.value", "unknown capability '" + name + "'", p};
    caps.set(*c);
  }
  return caps;
}

std::optional<uint64_t> read_reasons(const json& s, const std::string& path) {
  std::optional<uint64_t> mask;
  Reader{&s, path}("clock_reasons", mask);
  if (mask) return mask;  // the raw mask wins; the names are derived from it
  const json* names = find_array(s, path, "clock_reason_names", true);
  if (names == nullptr) return std::nullopt;
  uint64_t bits = 0;
  for (size_t i = 0; i < names->size(); ++i) {
    const auto p = item(path, "clock_reason_names", i);
    const auto name = read_value<std::string>((*names)[i], p);
    const auto bit = clock_reason_from_name(name);
    if (!bit) throw BadField{"snapshot_json.value", "unknown clock reason '" + name + "'", p};
    bits |= *bit;
  }
  return bits;
}

GpuSample read_sample(const json& s, const std::string& path) {
  auto sample = read_object<GpuSample>(s, path, [](auto& x, auto&& v) { sample_fields(x, v); });
  sample.clock_reasons = read_reasons(s, path);
  if (const auto it = s.find("violations"); it != s.end() && !it->is_null()) {
    sample.violations = read_object<ViolationCounters>(
        *it, join(path, "violations"), [](auto& x, auto&& v) { violation_fields(x, v); });
  }
  if (const auto it = s.find("gpm"); it != s.end() && !it->is_null()) {
    sample.gpm = read_object<GpmMetrics>(*it, join(path, "gpm"),
                                         [](auto& x, auto&& v) { gpm_fields(x, v); });
  }
  std::optional<std::string> mode;
  Reader{&s, path}("compute_mode", mode);
  if (mode) {
    sample.compute_mode = compute_mode_from_name(*mode);
    if (!sample.compute_mode) {
      throw BadField{"snapshot_json.value", "unknown compute mode '" + *mode + "'",
                     join(path, "compute_mode")};
    }
  }
  std::optional<std::string> fabric, fabric_status;
  Reader{&s, path}("fabric_state", fabric);
  if (fabric) {
    sample.fabric_state = fabric_state_from_key(*fabric);
    if (!sample.fabric_state) {
      throw BadField{"snapshot_json.value", "unknown fabric state '" + *fabric + "'",
                     join(path, "fabric_state")};
    }
  }
  Reader{&s, path}("fabric_status", fabric_status);
  sample.fabric_status = fabric_status.value_or("");
  std::optional<std::string> fabric_health;
  Reader{&s, path}("fabric_healthy", sample.fabric_healthy);
  Reader{&s, path}("fabric_health", fabric_health);
  sample.fabric_health = fabric_health.value_or("");
  if (const json* procs = find_array(s, path, "processes", true)) {
    sample.processes.emplace();
    for (size_t i = 0; i < procs->size(); ++i) {
      sample.processes->push_back(
          read_object<ProcessInfo>((*procs)[i], item(path, "processes", i),
                                   [](auto& x, auto&& v) { process_fields(x, v); }));
    }
  }
  if (const json* links = find_array(s, path, "nvlinks", true)) {
    for (size_t i = 0; i < links->size(); ++i) {
      sample.nvlinks.push_back(read_object<NvLinkInfo>(
          (*links)[i], item(path, "nvlinks", i), [](auto& x, auto&& v) { nvlink_fields(x, v); }));
    }
  }
  return sample;
}

GpuState read_gpu(const json& g, const std::string& path) {
  require_object(g, path);
  GpuState gpu;
  const auto dev_it = g.find("device");
  if (dev_it == g.end()) {
    throw BadField{"snapshot_json.missing", "required key is missing", join(path, "device")};
  }
  const auto dev_path = join(path, "device");
  gpu.info =
      read_object<DeviceInfo>(*dev_it, dev_path, [](auto& x, auto&& v) { device_fields(x, v); });
  gpu.info.caps = read_caps(*dev_it, dev_path);

  std::string access;
  Reader{&g, path}("access", access);
  const auto a = gpu_access_from_name(access);
  if (!a) {
    throw BadField{"snapshot_json.value", "unknown access state '" + access + "'",
                   join(path, "access")};
  }
  gpu.access = *a;
  if (const json* errs = find_array(g, path, "errors", true)) {
    for (size_t i = 0; i < errs->size(); ++i) {
      gpu.errors.push_back(read_value<std::string>((*errs)[i], item(path, "errors", i)));
    }
  }
  if (const json* fails = find_array(g, path, "failed_readings", true)) {
    for (size_t i = 0; i < fails->size(); ++i)
      gpu.failed_readings.push_back(
          read_value<std::string>((*fails)[i], item(path, "failed_readings", i)));
  }
  const auto sample_it = g.find("sample");
  if (sample_it != g.end() && !sample_it->is_null()) {
    gpu.sample = read_sample(*sample_it, join(path, "sample"));
  }
  return gpu;
}

void check_schema(const json& j) {
  const auto it = j.find("schema");
  if (it == j.end()) {
    throw BadField{"snapshot_json.schema",
                   "no \"schema\" key; expected \"" + std::string(kSnapshotSchema) + "\"",
                   "schema"};
  }
  const auto schema = read_value<std::string>(*it, "schema");
  if (schema != kSnapshotSchema) {
    throw BadField{"snapshot_json.schema",
                   "unsupported schema \"" + schema + "\"; this build reads \"" +
                       std::string(kSnapshotSchema) + "\"",
                   "schema"};
  }
}

}  // namespace

nlohmann::json snapshot_to_json(const Snapshot& snapshot) {
  json j = json::object();
  j["schema"] = std::string(kSnapshotSchema);
  snapshot_fields(snapshot, Writer{&j});
  json gpus = json::array();
  for (const auto& g : snapshot.gpus) gpus.push_back(gpu_to_json(g));
  j["gpus"] = std::move(gpus);
  return j;
}

Result<Snapshot> snapshot_from_json(const nlohmann::json& j) {
  try {
    require_object(j, "(top level)");
    check_schema(j);
    Snapshot snap;
    snapshot_fields(snap, Reader{&j, ""});
    const json* gpus = find_array(j, "", "gpus", false);
    for (size_t i = 0; i < gpus->size(); ++i) {
      snap.gpus.push_back(read_gpu((*gpus)[i], item("", "gpus", i)));
    }
    return snap;
  } catch (const BadField& bad) {
    return make_error(bad.code, bad.message, bad.path);
  }
}

std::vector<std::string> clock_reason_names(uint64_t mask) {
  std::vector<std::string> names;
  for (unsigned bit = 0; bit < 64; ++bit) {
    const uint64_t b = uint64_t{1} << bit;
    if ((mask & b) == 0) continue;
    std::string name;
    for (const auto& [value, n] : kReasonNames) {
      if (value == b) name = n;
    }
    if (name.empty()) {
      std::array<char, 20> buf{};
      const auto r = std::to_chars(buf.data(), buf.data() + buf.size(), b, 16);
      name = "0x" + std::string(buf.data(), r.ptr);
    }
    names.push_back(std::move(name));
  }
  return names;
}

std::optional<uint64_t> clock_reason_from_name(std::string_view name) {
  for (const auto& [value, n] : kReasonNames) {
    if (n == name) return value;
  }
  if (name.size() > 2 && name.substr(0, 2) == "0x") {
    uint64_t v = 0;
    const auto* end = name.data() + name.size();
    const auto r = std::from_chars(name.data() + 2, end, v, 16);
    // Only a single unnamed bit is a valid name.
    if (r.ec == std::errc() && r.ptr == end && v != 0 && (v & (v - 1)) == 0) return v;
  }
  return std::nullopt;
}

std::string_view fabric_state_key(FabricState s) {
  switch (s) {
    case FabricState::kNotSupported:
      return "not_supported";
    case FabricState::kNotStarted:
      return "not_started";
    case FabricState::kInProgress:
      return "in_progress";
    case FabricState::kCompleted:
      return "completed";
  }
  return "not_supported";
}

std::optional<FabricState> fabric_state_from_key(std::string_view key) {
  for (FabricState f : {FabricState::kNotSupported, FabricState::kNotStarted,
                        FabricState::kInProgress, FabricState::kCompleted})
    if (fabric_state_key(f) == key) return f;
  return std::nullopt;
}

std::string_view compute_mode_name(ComputeMode m) {
  switch (m) {
    case ComputeMode::kDefault:
      return "default";
    case ComputeMode::kExclusiveThread:
      return "exclusive_thread";
    case ComputeMode::kProhibited:
      return "prohibited";
    case ComputeMode::kExclusiveProcess:
      return "exclusive_process";
  }
  return "default";
}

std::optional<ComputeMode> compute_mode_from_name(std::string_view name) {
  for (auto m : {ComputeMode::kDefault, ComputeMode::kExclusiveThread, ComputeMode::kProhibited,
                 ComputeMode::kExclusiveProcess}) {
    if (compute_mode_name(m) == name) return m;
  }
  return std::nullopt;
}

std::optional<GpuAccess> gpu_access_from_name(std::string_view name) {
  for (auto a : {GpuAccess::kOk, GpuAccess::kLost, GpuAccess::kResetRequired, GpuAccess::kHung,
                 GpuAccess::kNoPermission, GpuAccess::kError}) {
    if (gpu_access_name(a) == name) return a;
  }
  return std::nullopt;
}

}  // namespace gw
