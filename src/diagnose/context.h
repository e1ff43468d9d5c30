// What every rule reads: the Observation regrouped per GPU (one series of samples each), the
// kernel-log events grouped per GPU and Xid, and small helpers for evidence text.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/finding.h"
#include "core/observation.h"
#include "diagnose/catalogs.h"
#include "diagnose/diagnose.h"

namespace gw {

// One GPU across the window.
struct GpuSeries {
  unsigned index = 0;
  const DeviceInfo* info = nullptr;          // from the newest snapshot that has it
  std::vector<const GpuSample*> samples;     // oldest first, only samples read while kOk
  std::vector<int64_t> times_ms;             // parallel to samples
  std::vector<GpuAccess> accesses;           // every state seen, oldest first
  std::vector<std::string> errors;           // per-call errors, de-duplicated
  std::vector<std::string> failed_readings;  // "fan.speed: [Unknown Error]", de-duplicated
  size_t samples_with_failures = 0;          // snapshots in which any reading failed
  GpuAccess last_access = GpuAccess::kOk;

  const GpuSample* last() const { return samples.empty() ? nullptr : samples.back(); }
  const std::string& pci() const { return info->pci_bus_id; }
};

// All kernel-log events of one kind/code about one GPU (or one unresolved PCI address).
struct EventGroup {
  EventKind kind = EventKind::kXid;
  unsigned code = 0;
  std::optional<unsigned> gpu;
  std::optional<std::string> pci_bus_id;
  std::vector<const Event*> events;  // oldest first (big logs keep only the first few)
  // Exact count from Observation::event_counts when the loader kept fewer lines than it saw.
  uint64_t total = 0;
  std::optional<int64_t> last_time_ms;
  std::optional<double> last_uptime_s;
};

struct DiagnoseContext {
  const Observation& obs;
  std::vector<GpuSeries> gpus;     // sorted by index
  std::vector<EventGroup> groups;  // Xid / SXid / fallen-off-bus / lost, by (kind, gpu, code)
  std::map<std::string, unsigned> pci_to_gpu;  // normalised PCI address -> GPU index
  // gpu_key (kernel_events.h) by an event's PCI address as written: the rules ask it of every
  // event, several times each, and a big log's thousands of events name a few addresses.
  mutable std::unordered_map<std::string, std::string> gpu_key_of_pci;

  explicit DiagnoseContext(const Observation& o);
  const GpuSeries* gpu(unsigned index) const;
  // The GPU a PCI address belongs to, when a snapshot lists it.
  std::optional<unsigned> gpu_by_pci(const std::string& normalised) const;

 private:
  void attach_counts();
};

// ---- helpers shared by the rule files -------------------------------------------------

// Whether a sample shows real work: compute, memory traffic or a busy video engine.
bool is_loaded(const GpuSample& s);
// Whether a sample is affirmatively idle: utilization known and under 5 % (or, with utilization
// unknown, the driver's Idle clock reason active), video engines quiet.
bool is_idle(const GpuSample& s);
// Whether nothing in the sample tells the load: no utilization, no Idle reason, no power vs limit.
bool load_unknown(const GpuSample& s);
bool video_busy(const GpuSample& s);

// Share (0..1) of the series' samples where pred holds; 0 when there are none.
double share(const GpuSeries& g, const std::function<bool(const GpuSample&)>& pred);
size_t count_if(const GpuSeries& g, const std::function<bool(const GpuSample&)>& pred);
// Samples whose clock_reasons carry `bit`.
size_t count_bit(const GpuSeries& g, uint64_t bit);
// Share (0..1) of the window a cumulative violation counter grew by, from the first to the last
// sample; nullopt for one sample or when the counter is missing.
std::optional<double> counter_share(const GpuSeries& g,
                                    std::optional<uint64_t> ViolationCounters::*counter);
// Seconds between the first and last sample; 0 for a single snapshot or unknown times.
double window_s(const GpuSeries& g);

std::optional<uint64_t> mem_total(const GpuSeries& g, const GpuSample& s);
std::optional<unsigned> max_clock(const GpuSeries& g);  // SM, else graphics
std::optional<unsigned> clock_of(const GpuSample& s);   // SM, else graphics

// Per-lane, per-direction PCIe payload bandwidth in GB/s for Gen1..Gen6 (0 when unknown).
double pcie_lane_gb_s(unsigned gen);

// "GPU 3 (00000000:81:00.0)"
std::string gpu_label(const GpuSeries& g);
// "18 of 20 samples (90%)" or "in the snapshot" when n == 1.
std::string share_text(size_t hits, size_t n);
std::string pct(double ratio);            // 0.897 -> "89.7%"
std::string gib(uint64_t bytes);          // "22.4 GiB"
std::string mib(uint64_t bytes);          // "22437 MiB"
std::string watts(uint32_t mw);           // "445.4 W"
std::string reasons_text(uint64_t bits);  // "SW power cap, HW power brake"

// The running driver's version (snapshots first, then the kernel module version in host facts)
// and the newest CUDA it supports as nvidia-smi/NVML state it (12040 = 12.4); driver.cpp.
std::optional<DriverVersion> running_driver(const DiagnoseContext& c);
std::optional<int> driver_max_cuda(const DiagnoseContext& c);

// The application messages of one kind, in input order.
std::vector<const AppMessage*> app_messages_of(const DiagnoseContext& c, AppMessageKind k);
// How many times the input holds these messages: repeats are folded into one (AppMessage::copies).
size_t copies_of(const std::vector<const AppMessage*>& ms);

// The DCGM parts of the capture that said all was well (a health report "Healthy", a diag table
// without a failure), added to `f` as evidence beside its fault, each ending in `wins`. With
// `gpu` set, another GPU's all-clear is left out. The first few are named, the rest counted.
void all_clear_evidence(const Observation& obs, std::optional<unsigned> gpu, std::string_view wins,
                        Finding& f);
// "the same result is in the input N times" for a record that repeats (DcgmResult::copies, ...).
std::optional<std::string> copies_text(size_t copies, std::string_view what);

Finding make_finding(std::string_view code, Severity sev, const GpuSeries* g, std::string title,
                     std::vector<std::string> evidence, std::string remedy = {});

}  // namespace gw
