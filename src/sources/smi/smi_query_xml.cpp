// nvidia-smi -q -x: one <gpu id="..."> element per GPU. Element names changed across driver
// generations (clocks_throttle_reasons -> clocks_event_reasons, power_readings ->
// gpu_power_readings, ...); each lookup below lists the names it accepts.
#include <algorithm>
#include <initializer_list>
#include <pugixml.hpp>
#include <string>

#include "core/event.h"
#include "sources/smi/csv_fields.h"
#include "sources/smi/model_util.h"
#include "sources/smi/smi_parsers.h"
#include "sources/smi/text_util.h"

namespace gw {

namespace {

using text::parse_u64;
using text::to_unsigned;

std::string_view txt(pugi::xml_node n) {
  return text::trim(n.child_value());
}

// The first child that exists among several schema spellings.
pugi::xml_node any_child(pugi::xml_node n, std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (auto c = n.child(name)) return c;
  return {};
}

std::optional<unsigned> uint_of(pugi::xml_node n) {
  return to_unsigned(parse_u64(txt(n)));
}

void read_identity(pugi::xml_node g, GpuState& gs) {
  DeviceInfo& d = gs.info;
  d.name = std::string(txt(g.child("product_name")));
  if (auto a = txt(g.child("product_architecture")); !a.empty() && !text::is_na(a))
    d.architecture = std::string(a);
  d.uuid = std::string(txt(g.child("uuid")));
  if (auto s = txt(g.child("serial")); !s.empty() && !text::is_na(s)) d.serial = std::string(s);
  if (auto v = txt(g.child("vbios_version")); !v.empty() && !text::is_na(v))
    d.vbios_version = std::string(v);
  d.minor_number = uint_of(g.child("minor_number"));
  std::string_view bus = txt(g.child("pci").child("pci_bus_id"));
  if (bus.empty()) bus = g.attribute("id").value();
  if (auto id = normalize_pci_bus_id(bus)) d.pci_bus_id = *id;
}

void read_pci(pugi::xml_node pci, GpuState& gs) {
  const auto gen = pci.child("pci_gpu_link_info").child("pcie_gen");
  const auto width = pci.child("pci_gpu_link_info").child("link_widths");
  DeviceInfo& d = gs.info;
  GpuSample& s = gs.sample;
  d.pcie_max_gen = uint_of(gen.child("max_link_gen"));
  if (auto host = uint_of(gen.child("max_host_link_gen"));
      host && (!d.pcie_max_gen || *host < *d.pcie_max_gen))
    d.pcie_max_gen = host;  // the host slot caps the link
  d.pcie_gpu_max_gen = uint_of(gen.child("max_device_link_gen"));
  s.pcie_gen = uint_of(gen.child("current_link_gen"));
  d.pcie_max_width = uint_of(width.child("max_link_width"));
  s.pcie_width = uint_of(width.child("current_link_width"));
  s.pcie_replays = parse_u64(txt(pci.child("replay_counter")));
  s.pcie_tx_kb_s = parse_u64(txt(pci.child("tx_util")));
  s.pcie_rx_kb_s = parse_u64(txt(pci.child("rx_util")));
}

void read_reasons(pugi::xml_node g, GpuSample& s) {
  const auto reasons = any_child(g, {"clocks_event_reasons", "clocks_throttle_reasons"});
  for (auto r : reasons.children())
    if (auto on = text::parse_bool(txt(r))) smi::apply_clock_reason(r.name(), *on, s);
  const auto counters =
      any_child(g, {"clocks_event_reasons_counters", "clocks_throttle_reasons_counters"});
  for (auto r : counters.children())
    if (auto* slot = smi::violation_slot(r.name(), s.violations))
      *slot = text::parse_duration_ns(txt(r));
}

void read_memory_util(pugi::xml_node g, GpuState& gs) {
  GpuSample& s = gs.sample;
  const auto fb = g.child("fb_memory_usage");
  s.mem_total_bytes = text::parse_mem_bytes(txt(fb.child("total")));
  s.mem_reserved_bytes = text::parse_mem_bytes(txt(fb.child("reserved")));
  s.mem_used_bytes = text::parse_mem_bytes(txt(fb.child("used")));
  s.mem_free_bytes = text::parse_mem_bytes(txt(fb.child("free")));
  gs.info.mem_total_bytes = s.mem_total_bytes;
  const auto u = g.child("utilization");
  s.util_gpu_pct = uint_of(u.child("gpu_util"));
  s.util_mem_pct = uint_of(u.child("memory_util"));
  s.util_enc_pct = uint_of(u.child("encoder_util"));
  s.util_dec_pct = uint_of(u.child("decoder_util"));
  s.fan_pct = uint_of(g.child("fan_speed"));
  s.pstate = text::parse_pstate(txt(g.child("performance_state")));
  s.persistence_mode = text::parse_bool(txt(g.child("persistence_mode")));
  s.mig_enabled = text::parse_bool(txt(g.child("mig_mode").child("current_mig")));
  s.mig_pending = text::parse_bool(txt(g.child("mig_mode").child("pending_mig")));
  const auto cm = txt(g.child("compute_mode"));
  if (cm == "Default")
    s.compute_mode = ComputeMode::kDefault;
  else if (cm == "Exclusive_Process")
    s.compute_mode = ComputeMode::kExclusiveProcess;
  else if (cm == "Exclusive_Thread")
    s.compute_mode = ComputeMode::kExclusiveThread;
  else if (cm == "Prohibited")
    s.compute_mode = ComputeMode::kProhibited;
}

// SRAM uncorrectable count of one scope: R510-R545 give sram_uncorrectable, R550+ split it into
// parity and SEC-DED (summed, as nvidia-smi's own total is).
std::optional<uint64_t> sram_uncorrectable(pugi::xml_node scope) {
  std::optional<uint64_t> sum;
  for (const char* name :
       {"sram_uncorrectable", "sram_uncorrectable_parity", "sram_uncorrectable_secded"})
    if (const auto v = parse_u64(txt(scope.child(name)))) sum = sum.value_or(0) + *v;
  return sum;
}

// Old schemas: volatile/single_bit/device_memory; new (R510+): SRAM and DRAM apart, the totals
// their sum, as the text form's are (smi_query_text.cpp) and NVML's total ECC count is.
std::optional<uint64_t> ecc_count(pugi::xml_node scope, bool uncorrectable) {
  if (auto n = scope.child(uncorrectable ? "dram_uncorrectable" : "dram_correctable")) {
    std::optional<uint64_t> sum = parse_u64(txt(n));
    const auto sram =
        uncorrectable ? sram_uncorrectable(scope) : parse_u64(txt(scope.child("sram_correctable")));
    if (sram) sum = sum.value_or(0) + *sram;
    return sum;
  }
  const auto bits = scope.child(uncorrectable ? "double_bit" : "single_bit");
  if (auto n = bits.child("device_memory")) {
    if (auto v = parse_u64(txt(n))) return v;
  }
  return parse_u64(txt(bits.child("total")));
}

void read_ecc(pugi::xml_node g, GpuSample& s) {
  s.ecc_enabled = text::parse_bool(txt(g.child("ecc_mode").child("current_ecc")));
  s.ecc_pending_enabled = text::parse_bool(txt(g.child("ecc_mode").child("pending_ecc")));
  const auto errs = g.child("ecc_errors");
  s.ecc_sbe_volatile = ecc_count(errs.child("volatile"), false);
  s.ecc_dbe_volatile = ecc_count(errs.child("volatile"), true);
  s.ecc_sbe_aggregate = ecc_count(errs.child("aggregate"), false);
  s.ecc_dbe_aggregate = ecc_count(errs.child("aggregate"), true);
  s.ecc_sram_uncorrectable_volatile = sram_uncorrectable(errs.child("volatile"));
  s.ecc_sram_uncorrectable_aggregate = sram_uncorrectable(errs.child("aggregate"));
  s.ecc_sram_threshold_exceeded =
      text::parse_bool(txt(errs.child("aggregate").child("sram_threshold_exceeded")));
  const auto rp = g.child("retired_pages");
  s.retired_pages_sbe = uint_of(rp.child("multiple_single_bit_retirement").child("retired_count"));
  s.retired_pages_dbe = uint_of(rp.child("double_bit_retirement").child("retired_count"));
  auto pend = any_child(rp, {"pending_retirement", "pending_blacklist"});
  s.retired_pages_pending = text::parse_bool(txt(pend));
  if (auto other = rp.child("pending_blacklist"); other && !s.retired_pages_pending.value_or(false))
    if (auto b = text::parse_bool(txt(other)); b && *b) s.retired_pages_pending = true;
  const auto rr = g.child("remapped_rows");
  s.remapped_rows_correctable = uint_of(rr.child("remapped_row_corr"));
  s.remapped_rows_uncorrectable = uint_of(rr.child("remapped_row_unc"));
  s.remapped_rows_pending = text::parse_bool(txt(rr.child("remapped_row_pending")));
  s.remapped_rows_failure = text::parse_bool(txt(rr.child("remapped_row_failure")));
}

void read_temps_power(pugi::xml_node g, GpuState& gs) {
  GpuSample& s = gs.sample;
  DeviceInfo& d = gs.info;
  const auto t = g.child("temperature");
  auto temp = [&](const char* name) { return text::to_int(text::parse_i64(txt(t.child(name)))); };
  // *_tlimit elements are signed margins to the limit, not readings: kept in their own fields.
  s.tlimit_margin_c = temp("gpu_temp_tlimit");
  d.tlimit_shutdown_c = temp("gpu_temp_max_tlimit_threshold");
  d.tlimit_slowdown_c = temp("gpu_temp_slow_tlimit_threshold");
  d.tlimit_max_operating_c = temp("gpu_temp_max_gpu_tlimit_threshold");
  s.temp_c = temp("gpu_temp");
  s.mem_temp_c = temp("memory_temp");
  d.temp_shutdown_c = temp("gpu_temp_max_threshold");
  d.temp_slowdown_c = temp("gpu_temp_slow_threshold");
  d.temp_max_operating_c = temp("gpu_temp_max_gpu_threshold");
  d.temp_mem_max_c = temp("gpu_temp_max_mem_threshold");
  const auto p = any_child(g, {"gpu_power_readings", "power_readings"});
  auto w = [&](const char* name) { return text::parse_watts_mw(txt(p.child(name))); };
  s.power_mw = w("power_draw");
  if (!s.power_mw) s.power_mw = w("average_power_draw");
  if (!s.power_mw) s.power_mw = w("instant_power_draw");
  s.power_limit_mw = w("current_power_limit");
  if (!s.power_limit_mw) s.power_limit_mw = w("enforced_power_limit");
  if (!s.power_limit_mw) s.power_limit_mw = w("power_limit");
  d.power_default_limit_mw = w("default_power_limit");
  d.power_min_limit_mw = w("min_power_limit");
  d.power_max_limit_mw = w("max_power_limit");
}

void read_clocks(pugi::xml_node g, GpuState& gs) {
  GpuSample& s = gs.sample;
  DeviceInfo& d = gs.info;
  const auto c = g.child("clocks");
  s.graphics_clock_mhz = uint_of(c.child("graphics_clock"));
  s.sm_clock_mhz = uint_of(c.child("sm_clock"));
  s.mem_clock_mhz = uint_of(c.child("mem_clock"));
  const auto m = g.child("max_clocks");
  d.max_graphics_clock_mhz = uint_of(m.child("graphics_clock"));
  d.max_sm_clock_mhz = uint_of(m.child("sm_clock"));
  d.max_mem_clock_mhz = uint_of(m.child("mem_clock"));
  const auto a = g.child("applications_clocks");
  s.app_graphics_clock_mhz = uint_of(a.child("graphics_clock"));
  s.app_mem_clock_mhz = uint_of(a.child("mem_clock"));
  const auto da = g.child("default_applications_clocks");
  d.default_app_graphics_clock_mhz = uint_of(da.child("graphics_clock"));
  d.default_app_mem_clock_mhz = uint_of(da.child("mem_clock"));
}

void read_processes(pugi::xml_node g, GpuSample& s) {
  const auto procs = g.child("processes");
  if (!procs) return;
  s.processes.emplace();
  for (auto p : procs.children("process_info")) {
    ProcessInfo pi;
    pi.pid = static_cast<uint32_t>(parse_u64(txt(p.child("pid"))).value_or(0));
    pi.graphics = smi::process_type_is_graphics(txt(p.child("type")));
    if (auto n = txt(p.child("process_name")); !n.empty()) pi.name = std::string(n);
    pi.used_mem_bytes = text::parse_mem_bytes(txt(p.child("used_memory")));
    s.processes->push_back(std::move(pi));
  }
}

// The fabric registration, the reset status (R550+) and the recovery action: what the driver
// says the GPU needs before it can run work.
void read_fabric_reset(pugi::xml_node g, GpuState& gs) {
  const auto fabric = g.child("fabric");
  gs.sample.fabric_state = smi::parse_fabric_state(txt(fabric.child("state")));
  smi::apply_fabric_status(txt(fabric.child("status")), gs.sample);
  for (pugi::xml_node h : fabric.child("health").children())  // <route_unhealthy>, <summary>...
    smi::apply_fabric_health(h.name(), txt(h), gs.sample);
  const auto reset = g.child("gpu_reset_status");
  smi::apply_reset_status("Reset Required", txt(reset.child("reset_required")), gs);
  smi::apply_reset_status("Drain and Reset Recommended",
                          txt(reset.child("drain_and_reset_recommended")), gs);
  smi::apply_recovery_action(txt(g.child("gpu_recovery_action")), gs);
}

// pugixml reports a byte offset; users want a line.
size_t line_of_offset(std::string_view text, ptrdiff_t offset) {
  const auto end =
      static_cast<size_t>(std::clamp<ptrdiff_t>(offset, 0, static_cast<ptrdiff_t>(text.size())));
  return 1 + text::count_newlines(text.data(), end);
}

}  // namespace

Result<Snapshot> parse_smi_query_xml(std::string_view text, std::string_view origin) {
  // A DOM costs several times its text: a document beyond what nvidia-smi writes for any
  // machine (about 40 KB a GPU) is refused rather than held (bounded memory, issue 20).
  if (text.size() > kMaxSmiXmlBytes)
    return make_error("capture.smi_xml",
                      "expected an nvidia-smi -q -x document of at most " +
                          std::to_string(kMaxSmiXmlBytes >> 20) + " MiB (about 40 KB a GPU), got " +
                          std::to_string(text.size() >> 20) + " MiB; not read",
                      std::string(origin) + ":1");
  pugi::xml_document doc;
  const auto res =
      doc.load_buffer(text.data(), text.size(), pugi::parse_default, pugi::encoding_auto);
  if (!res) {
    return make_error(
        "capture.smi_xml",
        std::string("expected well-formed nvidia-smi -q -x XML: ") + res.description(),
        std::string(origin) + ":" + std::to_string(line_of_offset(text, res.offset)));
  }
  const auto log = doc.child("nvidia_smi_log");
  if (!log) {
    return make_error("capture.smi_xml", "expected root element <nvidia_smi_log>",
                      std::string(origin) + ":1");
  }
  Snapshot snap;
  snap.source = "smi-xml:" + std::string(origin);
  if (auto t = text::parse_ctime_ms(txt(log.child("timestamp")))) snap.time_ms = *t;
  auto drv = txt(log.child("driver_version"));
  if (drv.empty() || text::is_na(drv)) drv = txt(log.child("kmd_version"));
  if (!drv.empty() && !text::is_na(drv)) snap.driver_version = smi::clean_version(drv);
  snap.cuda_driver_version =
      smi::parse_cuda_version(smi::clean_version(txt(log.child("cuda_version"))));
  for (auto g : log.children("gpu")) {
    GpuState gs;
    gs.info.index = static_cast<unsigned>(snap.gpus.size());
    read_identity(g, gs);
    read_pci(g.child("pci"), gs);
    read_reasons(g, gs.sample);
    read_memory_util(g, gs);
    read_ecc(g, gs.sample);
    read_temps_power(g, gs);
    read_clocks(g, gs);
    read_processes(g, gs.sample);
    read_fabric_reset(g, gs);
    smi::derive_capabilities(gs);
    snap.gpus.push_back(std::move(gs));
  }
  if (snap.gpus.empty()) {
    return make_error("capture.smi_xml", "expected at least one <gpu> element in <nvidia_smi_log>",
                      std::string(origin) + ":1");
  }
  return snap;
}

}  // namespace gw
