// nvidia-smi -q text: an indented tree of "Key : Value" lines and value-less section headers.
// We keep a stack of open sections by indent and map (section, key) to model fields.
#include <algorithm>
#include <string>
#include <vector>

#include "core/event.h"
#include "sources/smi/csv_fields.h"
#include "sources/smi/model_util.h"
#include "sources/smi/smi_parsers.h"
#include "sources/smi/text_util.h"

namespace gw {

namespace {

using text::parse_u64;
using text::to_unsigned;

struct Section {
  size_t indent;
  std::string_view name;
};

struct Ctx {
  Snapshot snap;
  GpuState* gpu = nullptr;
  std::vector<Section> stack;     // open sections below the GPU line
  bool power_draw_exact = false;  // "Power Draw" seen: don't override with Average/Instant
  bool limit_exact = false;
};

bool is_section(std::string_view name, std::string_view want) {
  return text::iequals(name, want);
}

std::string_view parent(const Ctx& c, size_t up = 0) {
  return c.stack.size() > up ? c.stack[c.stack.size() - 1 - up].name : std::string_view{};
}

bool inside_mig_device(const Ctx& c) {
  for (const auto& s : c.stack)
    if (text::starts_with(s.name, "MIG Device")) return true;
  return false;
}

void on_pci(Ctx& c, std::string_view sec, std::string_view key, std::string_view val) {
  GpuSample& s = c.gpu->sample;
  DeviceInfo& d = c.gpu->info;
  if (is_section(sec, "PCIe Generation")) {
    if (key == "Max")
      d.pcie_max_gen = to_unsigned(parse_u64(val));
    else if (key == "Current")
      s.pcie_gen = to_unsigned(parse_u64(val));
    else if (key == "Device Max")
      d.pcie_gpu_max_gen = to_unsigned(parse_u64(val));
    else if (key == "Host Max") {
      // The host's limit caps what the link can reach (system max = min(link max, host)).
      auto host = to_unsigned(parse_u64(val));
      if (host && (!d.pcie_max_gen || *host < *d.pcie_max_gen)) d.pcie_max_gen = host;
    }
  } else if (is_section(sec, "Link Width")) {
    if (key == "Max")
      d.pcie_max_width = to_unsigned(parse_u64(val));
    else if (key == "Current")
      s.pcie_width = to_unsigned(parse_u64(val));
  } else if (is_section(sec, "PCI")) {
    if (key == "Bus Id") {
      if (auto id = normalize_pci_bus_id(text::trim(val))) d.pci_bus_id = *id;
    } else if (key == "Replays Since Reset")
      s.pcie_replays = parse_u64(val);
    else if (key == "Tx Throughput")
      s.pcie_tx_kb_s = parse_u64(val);
    else if (key == "Rx Throughput")
      s.pcie_rx_kb_s = parse_u64(val);
  }
}

void on_top_gpu_field(Ctx& c, std::string_view key, std::string_view val) {
  GpuSample& s = c.gpu->sample;
  DeviceInfo& d = c.gpu->info;
  if (key == "Product Name")
    d.name = std::string(text::trim(val));
  else if (key == "Product Architecture" && !text::is_na(val))
    d.architecture = std::string(val);
  else if (key == "Persistence Mode")
    s.persistence_mode = text::parse_bool(val);
  else if (key == "Serial Number" && !text::is_na(val))
    d.serial = std::string(val);
  else if (key == "GPU UUID")
    d.uuid = std::string(val);
  else if (key == "Minor Number")
    d.minor_number = to_unsigned(parse_u64(val));
  else if (key == "VBIOS Version" && !text::is_na(val))
    d.vbios_version = std::string(val);
  else if (key == "Fan Speed")
    s.fan_pct = to_unsigned(parse_u64(val));
  else if (key == "Performance State")
    s.pstate = text::parse_pstate(val);
  else if (key == "Compute Mode") {
    if (val == "Default")
      s.compute_mode = ComputeMode::kDefault;
    else if (val == "Exclusive_Process")
      s.compute_mode = ComputeMode::kExclusiveProcess;
    else if (val == "Exclusive_Thread")
      s.compute_mode = ComputeMode::kExclusiveThread;
    else if (val == "Prohibited")
      s.compute_mode = ComputeMode::kProhibited;
  } else if (key == "Processes" && val == "None") {
    s.processes.emplace();
  } else if (key == "GPU Recovery Action") {
    smi::apply_recovery_action(val, *c.gpu);
  }
}

void on_memory_and_util(Ctx& c, std::string_view sec, std::string_view key, std::string_view val) {
  GpuSample& s = c.gpu->sample;
  if (is_section(sec, "FB Memory Usage")) {
    if (key == "Total") {
      s.mem_total_bytes = text::parse_mem_bytes(val);
      c.gpu->info.mem_total_bytes = s.mem_total_bytes;
    } else if (key == "Reserved")
      s.mem_reserved_bytes = text::parse_mem_bytes(val);
    else if (key == "Used")
      s.mem_used_bytes = text::parse_mem_bytes(val);
    else if (key == "Free")
      s.mem_free_bytes = text::parse_mem_bytes(val);
  } else if (is_section(sec, "Utilization")) {
    if (text::iequals(key, "Gpu"))
      s.util_gpu_pct = to_unsigned(parse_u64(val));
    else if (key == "Memory")
      s.util_mem_pct = to_unsigned(parse_u64(val));
    else if (key == "Encoder")
      s.util_enc_pct = to_unsigned(parse_u64(val));
    else if (key == "Decoder")
      s.util_dec_pct = to_unsigned(parse_u64(val));
  } else if (is_section(sec, "MIG Mode")) {
    if (key == "Current")
      s.mig_enabled = text::parse_bool(val);
    else if (key == "Pending")
      s.mig_pending = text::parse_bool(val);
  }
}

void on_ecc(Ctx& c, std::string_view sec, std::string_view key, std::string_view val) {
  GpuSample& s = c.gpu->sample;
  if (is_section(sec, "ECC Mode")) {
    if (key == "Current")
      s.ecc_enabled = text::parse_bool(val);
    else if (key == "Pending")
      s.ecc_pending_enabled = text::parse_bool(val);
    return;
  }
  // New drivers: Volatile/Aggregate -> "DRAM Correctable". Old: Volatile -> Single Bit ->
  // "Device Memory" (preferred) or "Total".
  const bool vol_new = is_section(sec, "Volatile"), agg_new = is_section(sec, "Aggregate");
  const std::string_view up = parent(c, 1);
  const bool bit_sec = is_section(sec, "Single Bit") || is_section(sec, "Double Bit");
  const bool vol = vol_new || (bit_sec && is_section(up, "Volatile"));
  const bool agg = agg_new || (bit_sec && is_section(up, "Aggregate"));
  if (!vol && !agg) return;
  auto& sbe = vol ? s.ecc_sbe_volatile : s.ecc_sbe_aggregate;
  auto& dbe = vol ? s.ecc_dbe_volatile : s.ecc_dbe_aggregate;
  if (!bit_sec) {
    // R510+: SRAM and DRAM counted apart ("SRAM Uncorrectable Parity"/"SEC-DED" on R550+).
    // The totals are their sum, as NVML's total ECC count is.
    auto add = [&](std::optional<uint64_t>& slot) {
      if (const auto v = parse_u64(val)) slot = slot.value_or(0) + *v;
    };
    const bool sram = text::starts_with(key, "SRAM ");
    const bool mem = text::starts_with(key, "DRAM ") || sram;
    if (sram && key == "SRAM Threshold Exceeded") {
      s.ecc_sram_threshold_exceeded = text::parse_bool(val);
    } else if (mem && key.find("Uncorrectable") != std::string_view::npos) {
      add(dbe);
      if (sram) add(vol ? s.ecc_sram_uncorrectable_volatile : s.ecc_sram_uncorrectable_aggregate);
    } else if (mem && key.find("Correctable") != std::string_view::npos) {
      add(sbe);
    }
    return;
  }
  auto& slot = is_section(sec, "Single Bit") ? sbe : dbe;
  if (key == "Device Memory")
    slot = parse_u64(val);
  else if (key == "Total" && !slot)
    slot = parse_u64(val);
}

void on_pages_rows(Ctx& c, std::string_view sec, std::string_view key, std::string_view val) {
  GpuSample& s = c.gpu->sample;
  if (is_section(sec, "Retired Pages")) {
    if (key == "Single Bit ECC")
      s.retired_pages_sbe = to_unsigned(parse_u64(val));
    else if (key == "Double Bit ECC")
      s.retired_pages_dbe = to_unsigned(parse_u64(val));
    else if (text::starts_with(key, "Pending"))
      s.retired_pages_pending = text::parse_bool(val);
  } else if (is_section(sec, "Remapped Rows")) {
    if (key == "Correctable Error")
      s.remapped_rows_correctable = to_unsigned(parse_u64(val));
    else if (key == "Uncorrectable Error")
      s.remapped_rows_uncorrectable = to_unsigned(parse_u64(val));
    else if (key == "Pending")
      s.remapped_rows_pending = text::parse_bool(val);
    else if (key == "Remapping Failure Occurred")
      s.remapped_rows_failure = text::parse_bool(val);
  }
}

// "Fabric" (NVSwitch registration, its "Health" below it) and "GPU Reset Status" (R550+).
void on_fabric_reset(Ctx& c, std::string_view sec, std::string_view key, std::string_view val) {
  if (is_section(sec, "Fabric")) {
    if (key == "State")
      c.gpu->sample.fabric_state = smi::parse_fabric_state(val);
    else if (key == "Status")
      smi::apply_fabric_status(val, c.gpu->sample);
  } else if (is_section(sec, "Health") && is_section(parent(c, 1), "Fabric")) {
    smi::apply_fabric_health(key, val, c.gpu->sample);
  } else if (is_section(sec, "GPU Reset Status") &&
             (key == "Reset Required" || key == "Drain and Reset Recommended")) {
    smi::apply_reset_status(key, val, *c.gpu);
  }
}

void on_temperature(Ctx& c, std::string_view key, std::string_view val) {
  GpuSample& s = c.gpu->sample;
  DeviceInfo& d = c.gpu->info;
  auto v = text::to_int(text::parse_i64(val));
  // "T.Limit" values are signed margins to the limit, not readings: kept in their own fields.
  if (key.find("T.Limit") != std::string_view::npos) {
    if (key == "GPU T.Limit Temp" || key == "GPU Current T.Limit Temp")
      s.tlimit_margin_c = v;
    else if (key == "GPU Shutdown T.Limit Temp")
      d.tlimit_shutdown_c = v;
    else if (key == "GPU Slowdown T.Limit Temp")
      d.tlimit_slowdown_c = v;
    else if (key == "GPU Max Operating T.Limit Temp")
      d.tlimit_max_operating_c = v;
    return;
  }
  if (key == "GPU Current Temp")
    s.temp_c = v;
  else if (key == "GPU Shutdown Temp")
    d.temp_shutdown_c = v;
  else if (key == "GPU Slowdown Temp")
    d.temp_slowdown_c = v;
  else if (key == "GPU Max Operating Temp")
    d.temp_max_operating_c = v;
  else if (key == "Memory Current Temp")
    s.mem_temp_c = v;
  else if (key == "Memory Max Operating Temp")
    d.temp_mem_max_c = v;
}

void on_power(Ctx& c, std::string_view key, std::string_view val) {
  GpuSample& s = c.gpu->sample;
  DeviceInfo& d = c.gpu->info;
  auto mw = text::parse_watts_mw(val);
  if (key == "Power Draw") {
    s.power_mw = mw;
    c.power_draw_exact = true;
  } else if (key == "Average Power Draw" && !c.power_draw_exact && mw) {
    s.power_mw = mw;
    c.power_draw_exact = true;  // average is what NVML's power usage reports
  } else if (key == "Instantaneous Power Draw" && !s.power_mw) {
    s.power_mw = mw;
  } else if (key == "Current Power Limit" || key == "Enforced Power Limit") {
    s.power_limit_mw = mw;
    c.limit_exact = true;
  } else if (key == "Power Limit" && !c.limit_exact) {
    s.power_limit_mw = mw;
  } else if (key == "Default Power Limit")
    d.power_default_limit_mw = mw;
  else if (key == "Min Power Limit")
    d.power_min_limit_mw = mw;
  else if (key == "Max Power Limit")
    d.power_max_limit_mw = mw;
}

void on_clocks(Ctx& c, std::string_view sec, std::string_view key, std::string_view val) {
  GpuSample& s = c.gpu->sample;
  DeviceInfo& d = c.gpu->info;
  auto mhz = to_unsigned(parse_u64(val));
  if (is_section(sec, "Clocks")) {
    if (key == "Graphics")
      s.graphics_clock_mhz = mhz;
    else if (key == "SM")
      s.sm_clock_mhz = mhz;
    else if (key == "Memory")
      s.mem_clock_mhz = mhz;
  } else if (is_section(sec, "Max Clocks")) {
    if (key == "Graphics")
      d.max_graphics_clock_mhz = mhz;
    else if (key == "SM")
      d.max_sm_clock_mhz = mhz;
    else if (key == "Memory")
      d.max_mem_clock_mhz = mhz;
  } else if (is_section(sec, "Applications Clocks")) {
    if (key == "Graphics")
      s.app_graphics_clock_mhz = mhz;
    else if (key == "Memory")
      s.app_mem_clock_mhz = mhz;
  } else if (is_section(sec, "Default Applications Clocks")) {
    if (key == "Graphics")
      d.default_app_graphics_clock_mhz = mhz;
    else if (key == "Memory")
      d.default_app_mem_clock_mhz = mhz;
  }
}

void on_process(Ctx& c, std::string_view key, std::string_view val) {
  auto& procs = c.gpu->sample.processes;
  if (!procs) procs.emplace();
  if (key == "Process ID") {
    ProcessInfo p;
    p.pid = static_cast<uint32_t>(parse_u64(val).value_or(0));
    procs->push_back(p);
    return;
  }
  if (procs->empty()) return;
  ProcessInfo& p = procs->back();
  if (key == "Type")
    p.graphics = smi::process_type_is_graphics(val);
  else if (key == "Name")
    p.name = std::string(val);
  else if (key == "Used GPU Memory")
    p.used_mem_bytes = text::parse_mem_bytes(val);
}

std::string normalized_section(std::string_view name) {
  std::string n(name);
  for (char& ch : n)
    if (ch == '_') ch = ' ';
  return n;
}

// A fragment that starts inside a section ("-q -d TEMPERATURE" dedented, a pasted excerpt)
// has keys but no section above them: the keys say which section they belong to.
void on_loose_field(Ctx& c, std::string_view key, std::string_view val) {
  on_top_gpu_field(c, key, val);
  if (text::ends_with(key, "Temp") || key.find("T.Limit") != std::string_view::npos)
    return on_temperature(c, key, val);
  if (key.find("Power Draw") != std::string_view::npos ||
      key.find("Power Limit") != std::string_view::npos)
    return on_power(c, key, val);
  if (key == "Correctable Error" || key == "Uncorrectable Error" ||
      key == "Remapping Failure Occurred")
    return on_pages_rows(c, "Remapped Rows", key, val);
  if (key == "Single Bit ECC" || key == "Double Bit ECC" || text::starts_with(key, "Pending Page"))
    return on_pages_rows(c, "Retired Pages", key, val);
  if (key == "Reset Required" || key == "Drain and Reset Recommended")
    return on_fabric_reset(c, "GPU Reset Status", key, val);
  if (auto on = text::parse_bool(val)) smi::apply_clock_reason(key, *on, c.gpu->sample);
}

void on_field(Ctx& c, std::string_view key, std::string_view val) {
  // "Fan Speed : Unknown Error": a reading that failed, whatever the field.
  if (smi::may_be_failed_reading(val)) smi::note_failed_reading(key, val, *c.gpu);
  if (c.stack.empty()) return on_loose_field(c, key, val);
  if (inside_mig_device(c)) return;  // per-instance numbers, not the whole GPU's
  const std::string_view sec = parent(c);
  const std::string norm = normalized_section(sec);
  if (text::iequals(norm, "Clocks Event Reasons") ||
      text::iequals(norm, "Clocks Throttle Reasons")) {
    if (auto on = text::parse_bool(val)) smi::apply_clock_reason(key, *on, c.gpu->sample);
  } else if (text::starts_with(norm, "Clocks Event Reasons Counters") ||
             text::starts_with(norm, "Clocks Throttle Reasons Counters")) {
    if (auto* slot = smi::violation_slot(key, c.gpu->sample.violations))
      *slot = text::parse_duration_ns(val);
  } else if (is_section(sec, "Temperature")) {
    on_temperature(c, key, val);
  } else if (is_section(sec, "GPU Power Readings") || is_section(sec, "Power Readings") ||
             is_section(sec, "GPU Ceiling Power Limit")) {
    on_power(c, key, val);
  } else if (is_section(sec, "Processes")) {
    on_process(c, key, val);
  } else {
    on_pci(c, sec, key, val);
    on_memory_and_util(c, sec, key, val);
    on_ecc(c, sec, key, val);
    on_pages_rows(c, sec, key, val);
    on_clocks(c, sec, key, val);
    on_fabric_reset(c, sec, key, val);
  }
}

void on_header_field(Ctx& c, std::string_view key, std::string_view val) {
  if (key == "Timestamp") {
    if (auto t = text::parse_ctime_ms(val)) c.snap.time_ms = *t;
  } else if (key == "Driver Version" || key == "KMD Version") {
    if (!text::is_na(val)) c.snap.driver_version = smi::clean_version(val);
  } else if (key == "CUDA Version") {
    c.snap.cuda_driver_version = smi::parse_cuda_version(smi::clean_version(val));
  }
}

// Splits "    Key      : Value" into indent, key and value; has_value false for headers.
bool split_line(std::string_view line, size_t& indent, std::string_view& key,
                std::string_view& val) {
  indent = 0;
  while (indent < line.size() && (line[indent] == ' ' || line[indent] == '\t')) ++indent;
  std::string_view body = line.substr(indent);
  size_t colon = body.find(" :");
  while (colon != std::string_view::npos && colon + 2 < body.size() && body[colon + 2] != ' ')
    colon = body.find(" :", colon + 1);
  if (colon == std::string_view::npos) {
    key = text::trim(body);
    val = {};
    return false;
  }
  key = text::trim(body.substr(0, colon));
  val = text::trim(body.substr(colon + 2));
  return true;
}

void start_gpu(Ctx& c, std::string_view bus) {
  GpuState g;
  g.info.index = static_cast<unsigned>(c.snap.gpus.size());
  if (auto id = normalize_pci_bus_id(bus)) g.info.pci_bus_id = *id;
  c.snap.gpus.push_back(std::move(g));
  c.gpu = &c.snap.gpus.back();
  c.stack.clear();
  c.power_draw_exact = c.limit_exact = false;
}

// Dedented text (every line at column 0): the nesting is rebuilt from the section names.
// Sub-sections sit one or two levels below a section; GPU-level keys close any section.
size_t flat_section_indent(std::string_view name) {
  for (std::string_view sub : {"Volatile", "Aggregate", "PCIe Generation", "Link Width",
                               "Bank Remap Availability Histogram", "Current", "Pending", "Health"})
    if (text::iequals(name, sub)) return 8;
  if (text::iequals(name, "Single Bit") || text::iequals(name, "Double Bit")) return 12;
  return 4;
}

bool is_gpu_level_key(std::string_view key) {
  for (std::string_view k : {"Product Name",
                             "Product Brand",
                             "Product Architecture",
                             "Display Mode",
                             "Display Active",
                             "Persistence Mode",
                             "Addressing Mode",
                             "Accounting Mode",
                             "Accounting Mode Buffer Size",
                             "Serial Number",
                             "GPU UUID",
                             "Minor Number",
                             "VBIOS Version",
                             "MultiGPU Board",
                             "Board ID",
                             "Board Part Number",
                             "GPU Part Number",
                             "FRU Part Number",
                             "Module ID",
                             "GSP Firmware Version",
                             "Fan Speed",
                             "Performance State",
                             "Compute Mode",
                             "GPU Recovery Action",
                             "Processes",
                             "Sparse Operation Mode",
                             "Platform Info",
                             "Display Attached"})
    if (key == k) return true;
  return false;
}

size_t indent_of(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && (line[n] == ' ' || line[n] == '\t')) ++n;
  return n;
}

// The margin every line shares (a report pasted indented, quoted in a bug report) and whether
// every line sits on it (dedented text: the nesting must be rebuilt from the names).
struct Margin {
  size_t width = 0;
  bool flat = true;
};

Margin margin_of(std::string_view text) {
  Margin m;
  bool first = true;
  text::LineReader rd(text);
  std::string_view line;
  while (rd.next(line)) {
    if (text::trim(line).empty()) continue;
    const size_t n = indent_of(line);
    if (first) {
      m.width = n;
      first = false;
    } else if (n != m.width) {
      m.flat = false;
      m.width = std::min(m.width, n);
    }
  }
  return m;
}

bool is_header_key(std::string_view key) {
  return key == "Timestamp" || key == "Driver Version" || key == "KMD Version" ||
         key == "CUDA Version" || key == "Attached GPUs" || key == "CUDA UMD Version" ||
         key == "HIC Info" || key == "Heterogenous Multi-vGPU" ||
         key == "Heterogeneous Multi-vGPU";  // of the header's "vGPU Driver Capability"
}

}  // namespace

Result<Snapshot> parse_smi_query_text(std::string_view text, std::string_view origin) {
  return parse_smi_query_text_ex(text, origin, nullptr);
}

namespace {

// A line of the header above the GPU sections: a header key (at column 0, or under a section
// of the header such as a vGPU host's "vGPU Driver Capability" before any GPU), or such a
// section's own line. Header keys at column 0 also end a GPU section; once GPUs were read, a
// column-0 key of another name belongs to a dedented GPU fragment.
bool header_line(Ctx& c, QueryTextInfo& qi, size_t indent, bool has_value, std::string_view key,
                 std::string_view val) {
  const bool above_gpus = c.snap.gpus.empty() && !c.gpu;
  if (!has_value) return indent == 0 && above_gpus && key == "vGPU Driver Capability";
  if (!(indent == 0 || above_gpus) ||
      !(is_header_key(key) ||
        (indent == 0 && c.snap.gpus.empty() && key.find("Version") != std::string_view::npos)))
    return false;
  c.gpu = nullptr;  // back at the header level
  if (key == "Attached GPUs") qi.attached_gpus = to_unsigned(parse_u64(val));
  on_header_field(c, key, val);
  return true;
}

// A GPU field or section header: placed under the sections above it (by indent, or for flat
// text by the known sections' names), or read as a field.
void gpu_line(Ctx& c, bool flat, size_t& flat_section, size_t indent, bool has_value,
              std::string_view key, std::string_view val) {
  if (flat) {
    if (!has_value)
      indent = flat_section = flat_section_indent(key);
    else if (is_gpu_level_key(key)) {
      indent = 4;
      flat_section = 0;
    } else
      indent = flat_section + 4;
  }
  while (!c.stack.empty() && c.stack.back().indent >= indent) c.stack.pop_back();
  if (!has_value)
    c.stack.push_back({indent, key});
  else
    on_field(c, key, val);
}

}  // namespace

Result<Snapshot> parse_smi_query_text_ex(std::string_view text, std::string_view origin,
                                         QueryTextInfo* info) {
  QueryTextInfo scratch;
  QueryTextInfo& qi = info ? *info : scratch;
  Ctx c;
  c.snap.source = "smi-text:" + std::string(origin);
  text::LineReader rd(text::strip_bom(text));
  std::string_view line;
  bool saw_banner = false;
  const Margin margin = margin_of(text);
  size_t flat_section = 0;  // synthetic indent of the last section header (flat text)
  while (rd.next(line)) {
    const std::string_view t = text::trim(line);
    if (t.empty()) continue;
    if (line.find("NVSMI LOG") != std::string_view::npos) {
      saw_banner = true;
      continue;
    }
    if (text::is_elision_line(t)) {
      ++qi.elided;
      continue;
    }
    size_t indent = 0;
    std::string_view key, val;
    const bool has_value = split_line(line, indent, key, val);
    indent = indent > margin.width ? indent - margin.width : 0;
    if (indent == 0 && !has_value && text::starts_with(key, "GPU ") &&
        normalize_pci_bus_id(text::trim(key.substr(4)))) {
      start_gpu(c, key.substr(4));
      ++qi.gpu_sections;
      flat_section = 0;
      continue;
    }
    if (header_line(c, qi, indent, has_value, key, val)) continue;
    if (!c.gpu) {
      // GPU fields with no "GPU <bus id>" line above: one GPU whose bus id is unknown.
      start_gpu(c, "");
      qi.implicit_gpu = true;
    }
    gpu_line(c, margin.flat, flat_section, indent, has_value, key, val);
  }
  if (info && c.snap.gpus.empty() &&
      (c.snap.driver_version || c.snap.cuda_driver_version || qi.attached_gpus)) {
    qi.header_only = true;  // the header alone: versions known, GPU sections cut off
    return std::move(c.snap);
  }
  if (c.snap.gpus.empty()) {
    return make_error(
        "capture.smi_text",
        saw_banner ? "expected at least one 'GPU <bus id>' section after the NVSMI LOG banner"
                   : "expected nvidia-smi -q output ('GPU <bus id>' sections)",
        std::string(origin) + ":" + std::to_string(rd.line_no()));
  }
  for (auto& g : c.snap.gpus) smi::derive_capabilities(g);
  return std::move(c.snap);
}

}  // namespace gw
