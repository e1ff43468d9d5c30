#include "serve/metrics.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>

#include "diagnose/catalogs.h"

namespace gw::serve {
namespace {

using Get = std::function<std::optional<double>(const GpuSample&)>;

template <class T>
std::optional<double> num(const std::optional<T>& v) {
  return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

std::string value_text(double v, bool fixed6) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (fixed6) return fmt::format("{:f}", v);  // dcgm-exporter writes doubles as %f
  if (v == std::floor(v) && std::fabs(v) < 9.0e15)
    return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

class Writer {
 public:
  void family(std::string_view name, std::string_view type, std::string_view help) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void sample(std::string_view name, const std::string& labels, double v, bool fixed6 = false) {
    out_ += name;
    if (!labels.empty()) {
      out_ += '{';
      out_ += labels;
      out_ += '}';
    }
    out_ += ' ';
    out_ += value_text(v, fixed6);
    out_ += '\n';
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

struct DcgmField {
  const char* name;
  const char* type;
  const char* help;  // dcgm-exporter's help text
  Get get;
  bool fixed6 = false;
};

uint64_t sum_links(const GpuSample& s, std::optional<uint64_t> NvLinkInfo::*m, bool& any) {
  uint64_t n = 0;
  for (const NvLinkInfo& l : s.nvlinks)
    if (l.*m) {
      n += *(l.*m);
      any = true;
    }
  return n;
}

Get links(std::optional<uint64_t> NvLinkInfo::*m) {
  return [m](const GpuSample& s) -> std::optional<double> {
    bool any = false;
    const uint64_t n = sum_links(s, m, any);
    return any ? std::optional<double>(static_cast<double>(n)) : std::nullopt;
  };
}

std::optional<double> mib(const std::optional<uint64_t>& b) {
  return b ? std::optional<double>(static_cast<double>(*b / (1024 * 1024))) : std::nullopt;
}

// GPM reports percent; DCGM's profiling fields are ratios 0..1 (dcgm-exporter divides too).
Get gpm_ratio(std::optional<double> GpmMetrics::*m) {
  return [m](const GpuSample& s) -> std::optional<double> {
    const auto& v = s.gpm.*m;
    return v ? std::optional<double>(*v / 100.0) : std::nullopt;
  };
}

const std::vector<DcgmField>& dcgm_fields() {
  static const std::vector<DcgmField> f = {
      {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).",
       [](const GpuSample& s) { return num(s.sm_clock_mhz); }},
      {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).",
       [](const GpuSample& s) { return num(s.mem_clock_mhz); }},
      {"DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).",
       [](const GpuSample& s) { return num(s.mem_temp_c); }},
      {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).",
       [](const GpuSample& s) { return num(s.temp_c); }},
      {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).",
       [](const GpuSample& s) {
         return s.power_mw ? std::optional<double>(*s.power_mw / 1000.0) : std::nullopt;
       },
       true},
      {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
       "Total energy consumption since boot (in mJ).",
       [](const GpuSample& s) { return num(s.energy_mj); }},
      {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.",
       [](const GpuSample& s) { return num(s.pcie_replays); }},
      {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).",
       [](const GpuSample& s) { return num(s.util_gpu_pct); }},
      {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).",
       [](const GpuSample& s) { return num(s.util_mem_pct); }},
      {"DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %).",
       [](const GpuSample& s) { return num(s.util_enc_pct); }},
      {"DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %).",
       [](const GpuSample& s) { return num(s.util_dec_pct); }},
      {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).",
       [](const GpuSample& s) { return mib(s.mem_free_bytes); }},
      {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).",
       [](const GpuSample& s) { return mib(s.mem_used_bytes); }},
      {"DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB).",
       [](const GpuSample& s) { return mib(s.mem_reserved_bytes); }},
      {"DCGM_FI_DEV_POWER_VIOLATION", "counter",
       "Throttling duration due to power constraints (in ns).",
       [](const GpuSample& s) { return num(s.violations.power_ns); }},
      {"DCGM_FI_DEV_THERMAL_VIOLATION", "counter",
       "Throttling duration due to thermal constraints (in ns).",
       [](const GpuSample& s) { return num(s.violations.thermal_ns); }},
      {"DCGM_FI_DEV_SYNC_BOOST_VIOLATION", "counter",
       "Throttling duration due to sync-boost constraints (in ns).",
       [](const GpuSample& s) { return num(s.violations.sync_boost_ns); }},
      {"DCGM_FI_DEV_BOARD_LIMIT_VIOLATION", "counter",
       "Throttling duration due to board limit constraints (in ns).",
       [](const GpuSample& s) { return num(s.violations.board_limit_ns); }},
      {"DCGM_FI_DEV_RELIABILITY_VIOLATION", "counter",
       "Throttling duration due to reliability constraints (in ns).",
       [](const GpuSample& s) { return num(s.violations.reliability_ns); }},
      {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter",
       "Total number of single-bit volatile ECC errors.",
       [](const GpuSample& s) { return num(s.ecc_sbe_volatile); }},
      {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter",
       "Total number of double-bit volatile ECC errors.",
       [](const GpuSample& s) { return num(s.ecc_dbe_volatile); }},
      {"DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "counter",
       "Total number of single-bit persistent ECC errors.",
       [](const GpuSample& s) { return num(s.ecc_sbe_aggregate); }},
      {"DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "counter",
       "Total number of double-bit persistent ECC errors.",
       [](const GpuSample& s) { return num(s.ecc_dbe_aggregate); }},
      {"DCGM_FI_DEV_RETIRED_SBE", "counter",
       "Total number of retired pages due to single-bit errors.",
       [](const GpuSample& s) { return num(s.retired_pages_sbe); }},
      {"DCGM_FI_DEV_RETIRED_DBE", "counter",
       "Total number of retired pages due to double-bit errors.",
       [](const GpuSample& s) { return num(s.retired_pages_dbe); }},
      {"DCGM_FI_DEV_RETIRED_PENDING", "counter", "Total number of pages pending retirement.",
       [](const GpuSample& s) { return num(s.retired_pages_pending); }},
      {"DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter",
       "Total number of NVLink flow-control CRC errors.", links(&NvLinkInfo::crc_flit_errors)},
      {"DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "counter",
       "Total number of NVLink data CRC errors.", links(&NvLinkInfo::crc_data_errors)},
      {"DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink retries.",
       links(&NvLinkInfo::replay_errors)},
      {"DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "counter",
       "Total number of NVLink recovery errors.", links(&NvLinkInfo::recovery_errors)},
      {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter",
       "Number of remapped rows for uncorrectable errors",
       [](const GpuSample& s) { return num(s.remapped_rows_uncorrectable); }},
      {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter",
       "Number of remapped rows for correctable errors",
       [](const GpuSample& s) { return num(s.remapped_rows_correctable); }},
      {"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed",
       [](const GpuSample& s) { return num(s.remapped_rows_failure); }},
      // NVML's PCIe throughput is KB/s over a 20 ms window; dcgm-exporter's are bytes/s.
      {"DCGM_FI_PROF_PCIE_TX_BYTES", "gauge",
       "The rate of data transmitted over the PCIe bus - including both protocol headers and "
       "data payloads - in bytes per second.",
       [](const GpuSample& s) {
         return s.pcie_tx_kb_s ? std::optional<double>(static_cast<double>(*s.pcie_tx_kb_s) * 1024)
                               : std::nullopt;
       }},
      {"DCGM_FI_PROF_PCIE_RX_BYTES", "gauge",
       "The rate of data received over the PCIe bus - including both protocol headers and data "
       "payloads - in bytes per second.",
       [](const GpuSample& s) {
         return s.pcie_rx_kb_s ? std::optional<double>(static_cast<double>(*s.pcie_rx_kb_s) * 1024)
                               : std::nullopt;
       }},
      // From GPM (Hopper and later); absent, never 0, on GPUs without it.
      {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active.",
       gpm_ratio(&GpmMetrics::graphics_util_pct), true},
      {"DCGM_FI_PROF_SM_ACTIVE", "gauge", "The ratio of cycles an SM has at least 1 warp assigned.",
       gpm_ratio(&GpmMetrics::sm_util_pct), true},
      {"DCGM_FI_PROF_SM_OCCUPANCY", "gauge", "The ratio of number of warps resident on an SM.",
       gpm_ratio(&GpmMetrics::sm_occupancy_pct), true},
      {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge",
       "Ratio of cycles the tensor (HMMA) pipe is active.", gpm_ratio(&GpmMetrics::tensor_util_pct),
       true},
      {"DCGM_FI_PROF_DRAM_ACTIVE", "gauge",
       "Ratio of cycles the device memory interface is active sending or receiving data.",
       gpm_ratio(&GpmMetrics::dram_bw_util_pct), true},
      {"DCGM_FI_PROF_PIPE_FP64_ACTIVE", "gauge", "Ratio of cycles the fp64 pipes are active.",
       gpm_ratio(&GpmMetrics::fp64_util_pct), true},
      {"DCGM_FI_PROF_PIPE_FP32_ACTIVE", "gauge", "Ratio of cycles the fp32 pipes are active.",
       gpm_ratio(&GpmMetrics::fp32_util_pct), true},
      {"DCGM_FI_PROF_PIPE_FP16_ACTIVE", "gauge", "Ratio of cycles the fp16 pipes are active.",
       gpm_ratio(&GpmMetrics::fp16_util_pct), true},
  };
  return f;
}

std::string gpu_labels(const Snapshot& snap, const GpuState& g, const std::string& host_label,
                       bool dcgm) {
  const DeviceInfo& d = g.info;
  std::string l = fmt::format(R"(gpu="{}",UUID="{}",pci_bus_id="{}",device="nvidia{}")", d.index,
                              escape_label(d.uuid), escape_label(d.pci_bus_id), d.index);
  // gpuwarden_* series keep to snake_case labels; the model is on gpuwarden_gpu_info.
  if (dcgm) l += fmt::format(R"(,modelName="{}")", escape_label(d.name));
  if (snap.hostname) l += fmt::format(R"(,{}="{}")", host_label, escape_label(*snap.hostname));
  if (dcgm && snap.driver_version)
    l += fmt::format(R"(,DCGM_FI_DRIVER_VERSION="{}")", escape_label(*snap.driver_version));
  return l;
}

}  // namespace

std::string escape_label(std::string_view v) {
  std::string o;
  o.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      o += "\\\\";
    else if (c == '"')
      o += "\\\"";
    else if (c == '\n')
      o += "\\n";
    else
      o += c;
  }
  return o;
}

namespace {

// Each GPU's label sets: dcgm-exporter's, gpuwarden's own, and the DCGM set once per job on the
// GPU (dcgm-exporter's HPC mapping: one copy of each DCGM series per job).
struct GpuLabels {
  std::vector<std::string> dcgm, own;
  std::vector<std::vector<std::string>> dcgm_jobs;
};

GpuLabels gpu_label_sets(const MetricsInput& in) {
  const Snapshot& snap = *in.snapshot;
  GpuLabels L;
  auto& dl = L.dcgm;
  auto& gl = L.own;
  auto& djl = L.dcgm_jobs;
  for (const GpuState& g : snap.gpus) {
    dl.push_back(gpu_labels(snap, g, in.hostname_label, true));
    gl.push_back(gpu_labels(snap, g, in.hostname_label, false));
  }
  djl.resize(snap.gpus.size());
  for (size_t i = 0; i < snap.gpus.size(); ++i) {
    const std::vector<std::string>* ids = nullptr;
    if (in.jobs != nullptr)
      if (auto it = in.jobs->find(std::to_string(snap.gpus[i].info.index)); it != in.jobs->end())
        ids = &it->second;
    if (ids == nullptr)
      djl[i].push_back(dl[i]);
    else
      for (const std::string& id : *ids)
        djl[i].push_back(dl[i] + fmt::format(R"(,hpc_job="{}")", escape_label(id)));
  }
  return L;
}

// The DCGM_FI_* gauges of every GPU that answered.
void write_dcgm_fields(Writer& w, const MetricsInput& in, const GpuLabels& L) {
  const Snapshot& snap = *in.snapshot;
  const auto& djl = L.dcgm_jobs;
  auto ok = [&](size_t i) { return snap.gpus[i].access == GpuAccess::kOk; };
  for (const DcgmField& f : dcgm_fields()) {
    bool header = false;
    for (size_t i = 0; i < snap.gpus.size(); ++i) {
      if (!ok(i)) continue;  // no stale values: a lost or hung GPU has no readings
      const auto v = f.get(snap.gpus[i].sample);
      if (!v) continue;
      if (!header) w.family(f.name, f.type, f.help);
      header = true;
      for (const std::string& l : djl[i]) w.sample(f.name, l, *v, f.fixed6);
    }
  }
}

// dcgm-exporter's DCGM_FI_DEV_XID_ERRORS.
void write_xid_gauge(Writer& w, const MetricsInput& in, const GpuLabels& L) {
  const Snapshot& snap = *in.snapshot;
  const auto& dl = L.dcgm;
  // The last Xid inside the event window, 0 once the window has passed (not sticky).
  w.family("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.");
  for (size_t i = 0; i < snap.gpus.size(); ++i) {
    const auto x = (*in.counters)[i].last_xid_in_window;
    const XidInfo* info = x ? lookup_xid(*x) : nullptr;
    const std::string msg = !x                ? "No Error"
                            : info != nullptr ? std::string(info->short_name)
                                              : "Unknown Error";
    w.sample(
        "DCGM_FI_DEV_XID_ERRORS",
        dl[i] + fmt::format(R"(,err_code="{}",err_msg="{}")", x.value_or(0), escape_label(msg)),
        x.value_or(0));
  }
}

// Job mapping, identity, up, sample age and hangs per GPU.
void write_gpu_state(Writer& w, const MetricsInput& in, const GpuLabels& L) {
  const Snapshot& snap = *in.snapshot;
  const auto& dl = L.dcgm;
  const auto& gl = L.own;
  auto ok = [&](size_t i) { return snap.gpus[i].access == GpuAccess::kOk; };
  w.family("gpuwarden_job_gpu", "gauge", "1 for each (GPU, job) pair of the job mapping.");
  for (size_t i = 0; i < snap.gpus.size(); ++i)
    if (in.jobs != nullptr)
      if (auto it = in.jobs->find(std::to_string(snap.gpus[i].info.index)); it != in.jobs->end())
        for (const std::string& id : it->second)
          w.sample("gpuwarden_job_gpu", gl[i] + fmt::format(R"(,hpc_job="{}")", escape_label(id)),
                   1);
  w.family("gpuwarden_gpu_info", "gauge", "GPU identity (value 1).");
  for (size_t i = 0; i < snap.gpus.size(); ++i) w.sample("gpuwarden_gpu_info", dl[i], 1);
  w.family("gpuwarden_gpu_up", "gauge", "1 when the GPU answered its last sample, else 0.");
  for (size_t i = 0; i < snap.gpus.size(); ++i)
    w.sample("gpuwarden_gpu_up",
             gl[i] + fmt::format(R"(,state="{}")", gpu_access_name(snap.gpus[i].access)),
             ok(i) ? 1 : 0);
  w.family("gpuwarden_gpu_sample_age_seconds", "gauge",
           "Seconds since the GPU last answered a sample (+Inf: never).");
  for (size_t i = 0; i < snap.gpus.size(); ++i) {
    const auto& f = (*in.fresh)[i];
    const double age =
        f.last_ok_ms ? static_cast<double>(in.now_ms - *f.last_ok_ms) / 1000.0 : HUGE_VAL;
    w.sample("gpuwarden_gpu_sample_age_seconds", gl[i], age);
  }
  w.family("gpuwarden_gpu_hangs_total", "counter", "NVML calls that overran their deadline.");
  for (size_t i = 0; i < snap.gpus.size(); ++i)
    w.sample("gpuwarden_gpu_hangs_total", gl[i], static_cast<double>((*in.fresh)[i].hangs));
}

// Xid totals, throttled seconds by reason and the reasons set now.
void write_gpu_counters(Writer& w, const MetricsInput& in, const GpuLabels& L) {
  const Snapshot& snap = *in.snapshot;
  const auto& gl = L.own;
  auto ok = [&](size_t i) { return snap.gpus[i].access == GpuAccess::kOk; };
  w.family("gpuwarden_xid_errors_total", "counter",
           "Xid errors in the history (counted again from the database after a restart).");
  for (size_t i = 0; i < snap.gpus.size(); ++i)
    for (const auto& [xid, n] : (*in.counters)[i].xids)
      w.sample("gpuwarden_xid_errors_total", gl[i] + fmt::format(R"(,xid="{}")", xid),
               static_cast<double>(n));
  w.family("gpuwarden_clock_throttled_seconds_total", "counter",
           "Seconds the GPU ran with each clock event reason set.");
  for (size_t i = 0; i < snap.gpus.size(); ++i)
    for (size_t r = 0; r < kClockReasons.size(); ++r)
      w.sample("gpuwarden_clock_throttled_seconds_total",
               gl[i] + fmt::format(R"(,reason="{}")", kClockReasons[r].label),
               (*in.counters)[i].throttled_s[r]);
  w.family("gpuwarden_clock_event_active", "gauge", "1 while the clock event reason is set.");
  for (size_t i = 0; i < snap.gpus.size(); ++i) {
    const auto bits = snap.gpus[i].sample.clock_reasons;
    if (!ok(i) || !bits) continue;
    for (const auto& r : kClockReasons)
      w.sample("gpuwarden_clock_event_active", gl[i] + fmt::format(R"(,reason="{}")", r.label),
               (*bits & r.bit) != 0 ? 1 : 0);
  }
}

// PCIe generation and width, current and maximum.
void write_pcie(Writer& w, const MetricsInput& in, const GpuLabels& L) {
  const Snapshot& snap = *in.snapshot;
  const auto& gl = L.own;
  auto ok = [&](size_t i) { return snap.gpus[i].access == GpuAccess::kOk; };
  struct Pcie {
    const char* name;
    const char* help;
    std::function<std::optional<unsigned>(const GpuState&)> get;
  };
  for (const Pcie& p : std::vector<Pcie>{
           {"gpuwarden_pcie_link_gen", "Current PCIe link generation.",
            [](const GpuState& g) { return g.sample.pcie_gen; }},
           {"gpuwarden_pcie_link_gen_max", "Maximum PCIe generation of GPU and slot together.",
            [](const GpuState& g) { return g.info.pcie_max_gen; }},
           {"gpuwarden_pcie_link_width", "Current PCIe link width (lanes).",
            [](const GpuState& g) { return g.sample.pcie_width; }},
           {"gpuwarden_pcie_link_width_max", "Maximum PCIe link width (lanes).",
            [](const GpuState& g) { return g.info.pcie_max_width; }}}) {
    bool header = false;
    for (size_t i = 0; i < snap.gpus.size(); ++i) {
      const auto v = ok(i) ? p.get(snap.gpus[i]) : std::nullopt;
      if (!v) continue;
      if (!header) w.family(p.name, "gauge", p.help);
      header = true;
      w.sample(p.name, gl[i], *v);
    }
  }
}

// Findings (active 1, cleared 0) and alert instances.
void write_findings(Writer& w, const MetricsInput& in) {
  w.family("gpuwarden_finding_active", "gauge",
           "1 while a diagnosis finding is active; 0 once it cleared.");
  auto finding_labels = [&](const Finding& f) {
    std::string l =
        fmt::format(R"(code="{}",severity="{}")", escape_label(f.code), severity_name(f.severity));
    l += fmt::format(R"(,gpu="{}")", f.gpu ? std::to_string(*f.gpu) : "");
    l += fmt::format(R"(,pci_bus_id="{}")", escape_label(f.pci_bus_id.value_or("")));
    return l;
  };
  for (const auto& r : *in.active)
    w.sample("gpuwarden_finding_active", finding_labels(r.finding), 1);
  for (const Finding& f : *in.cleared) w.sample("gpuwarden_finding_active", finding_labels(f), 0);

  if (in.alerts != nullptr) {
    w.family("gpuwarden_alert_firing", "gauge", "1 while the alert fires, 0 when resolved.");
    for (const AlertSeries& a : *in.alerts)
      w.sample("gpuwarden_alert_firing",
               fmt::format(R"(alert="{}",severity="{}",gpu="{}",instance_key="{}")",
                           escape_label(a.name), escape_label(a.severity),
                           a.gpu ? std::to_string(*a.gpu) : "", escape_label(a.key)),
               a.firing ? 1 : 0);
  }
}

// The daemon's own health: storage, events, rounds, reloads.
void write_daemon_health(Writer& w, const MetricsInput& in) {
  const DaemonHealth& h = *in.health;
  w.family("gpuwarden_storage_ok", "gauge", "1 while the history database accepts writes.");
  w.sample("gpuwarden_storage_ok", "", h.storage_ok ? 1 : 0);
  w.family("gpuwarden_storage_bytes", "gauge", "Size of the history database with its WAL.");
  w.sample("gpuwarden_storage_bytes", "", static_cast<double>(h.storage_bytes));
  w.family("gpuwarden_storage_write_errors_total", "counter", "Failed history writes.");
  w.sample("gpuwarden_storage_write_errors_total", "", static_cast<double>(h.storage_write_errors));
  w.family("gpuwarden_events_total", "counter", "Events received, by source.");
  w.sample("gpuwarden_events_total", R"(source="kmsg")", static_cast<double>(h.events_kmsg));
  w.sample("gpuwarden_events_total", R"(source="nvml")", static_cast<double>(h.events_nvml));
  w.family("gpuwarden_events_deduplicated_total", "counter",
           "Events dropped because the other source already reported them.");
  w.sample("gpuwarden_events_deduplicated_total", "", static_cast<double>(h.events_deduplicated));
  w.family("gpuwarden_sampling_rounds_total", "counter", "Sampling rounds completed.");
  w.sample("gpuwarden_sampling_rounds_total", "", static_cast<double>(h.rounds));
  w.family("gpuwarden_sampling_round_seconds", "gauge", "Duration of the last sampling round.");
  w.sample("gpuwarden_sampling_round_seconds", "", h.last_round_s);
  w.family("gpuwarden_config_reloads_total", "counter", "SIGHUP reloads, by result.");
  w.sample("gpuwarden_config_reloads_total", R"(result="ok")", static_cast<double>(h.reloads));
  w.sample("gpuwarden_config_reloads_total", R"(result="refused")",
           static_cast<double>(h.reload_failures));
  w.family("gpuwarden_start_time_seconds", "gauge", "When the daemon started (Unix time).");
  w.sample("gpuwarden_start_time_seconds", "", static_cast<double>(h.started_ms) / 1000.0);
}

}  // namespace

std::string render_metrics(const MetricsInput& in) {
  Writer w;
  const GpuLabels labels = gpu_label_sets(in);
  write_dcgm_fields(w, in, labels);
  write_xid_gauge(w, in, labels);
  write_gpu_state(w, in, labels);
  write_gpu_counters(w, in, labels);
  write_pcie(w, in, labels);
  write_findings(w, in);
  write_daemon_health(w, in);
  return w.take();
}

}  // namespace gw::serve
