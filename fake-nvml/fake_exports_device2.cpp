// Device exports, part 2: memory, PCIe, ECC and row remapping, modes, processes, NVLink.
#include <vector>

#include "fake-nvml/fake_exports.h"
#include "sources/nvml/fabric_health.h"

using namespace gwfake;  // NOLINT

namespace {

struct Mem {
  unsigned long long total, reserved, used, free;
};

// Fills what a scenario leaves out: free = total - used - reserved.
std::optional<Mem> memory_of(const GpuRuntime& g) {
  const auto& s = smp(g);
  if (!has(g, C::kMemory) || !s.mem_total_bytes) return std::nullopt;
  Mem m{*s.mem_total_bytes, s.mem_reserved_bytes.value_or(0), s.mem_used_bytes.value_or(0), 0};
  const unsigned long long taken = m.reserved + m.used;
  m.free = s.mem_free_bytes.value_or(taken < m.total ? m.total - taken : 0);
  return m;
}

template <class Info>
nvmlReturn_t processes(nvmlDevice_t d, unsigned* count, Info* infos, bool graphics,
                       const char* call) {
  return fake().device(d, call, [&](GpuRuntime& g) -> nvmlReturn_t {
    if (!has(g, C::kProcesses) || !smp(g).processes) return kNotSupported;
    if (count == nullptr) return kInvalidArgument;
    std::vector<const gw::ProcessInfo*> list;
    for (const auto& p : *smp(g).processes)
      if (p.graphics == graphics) list.push_back(&p);
    if (*count < list.size()) {
      *count = static_cast<unsigned>(list.size());
      return kInsufficientSize;
    }
    *count = static_cast<unsigned>(list.size());
    if (!list.empty() && infos == nullptr) return kInvalidArgument;
    for (size_t i = 0; i < list.size(); ++i) {
      infos[i] = Info{};
      infos[i].pid = list[i]->pid;
      infos[i].usedGpuMemory = list[i]->used_mem_bytes.value_or(kValueNotAvailable);
      if constexpr (sizeof(Info) == sizeof(nvmlProcessInfo_t)) {
        infos[i].gpuInstanceId = 0xFFFFFFFFu;
        infos[i].computeInstanceId = 0xFFFFFFFFu;
      }
    }
    return kSuccess;
  });
}

const gw::NvLinkInfo* find_link(const GpuRuntime& g, unsigned link) {
  for (const auto& l : smp(g).nvlinks)
    if (l.link == link) return &l;
  return nullptr;
}

// NOT_SUPPORTED for a GPU without NVLink, INVALID_ARGUMENT past its links (as NVML does).
template <class F>
nvmlReturn_t nvlink(nvmlDevice_t d, unsigned link, const char* call, F&& f) {
  return fake().device(d, call, [&](GpuRuntime& g) -> nvmlReturn_t {
    if (!has(g, C::kNvLink) || smp(g).nvlinks.empty()) return kNotSupported;
    const gw::NvLinkInfo* l = find_link(g, link);
    return l == nullptr ? kInvalidArgument : f(*l);
  });
}

}  // namespace

#ifndef GWFAKE_OLD_DRIVER
GWFAKE_API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t* m) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    if (m == nullptr) return kInvalidArgument;
    if (m->version != kMemoryV2Version) return kArgumentVersionMismatch;
    const auto mem = memory_of(g);
    if (!mem || !has(g, C::kMemoryReserved)) return kNotSupported;
    m->total = mem->total;
    m->reserved = mem->reserved;
    m->used = mem->used;
    m->free = mem->free;
    return kSuccess;
  });
}
#endif
GWFAKE_API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    const auto mem = memory_of(g);
    if (!mem) return kNotSupported;
    if (m == nullptr) return kInvalidArgument;
    m->total = mem->total;
    m->used = mem->used + mem->reserved;  // v1's used includes what the driver reserves
    m->free = mem->free;
    return kSuccess;
  });
}

GWFAKE_API nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kPcieLink, smp(g).pcie_gen, out);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kPcieLink, smp(g).pcie_width, out);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kPcieLink, info(g).pcie_max_gen, out);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kPcieLink, info(g).pcie_max_width, out);
  });
}
#ifndef GWFAKE_OLD_DRIVER
GWFAKE_API nvmlReturn_t nvmlDeviceGetGpuMaxPcieLinkGeneration(nvmlDevice_t d, unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kPcieGpuMax, info(g).pcie_gpu_max_gen, out);
  });
}
#endif
GWFAKE_API nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kPcieThroughput,
               counter == kPcieTx ? smp(g).pcie_tx_kb_s : smp(g).pcie_rx_kb_s, out);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetPcieReplayCounter(nvmlDevice_t d, unsigned* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kPcieReplay, smp(g).pcie_replays, out);
  });
}

GWFAKE_API nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, int* cur, int* pending) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    const nvmlReturn_t r = put(g, C::kEcc, smp(g).ecc_enabled, cur);
    return r != kSuccess
               ? r
               : put(g, C::kEcc,
                     std::optional<bool>(smp(g).ecc_pending_enabled.value_or(*smp(g).ecc_enabled)),
                     pending);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter,
                                                    unsigned long long* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    const auto& s = smp(g);
    if (!s.ecc_enabled.value_or(false)) return kNotSupported;  // counters need ECC on
    const bool unc = type == kUncorrected;
    const auto& v = counter == kVolatile ? (unc ? s.ecc_dbe_volatile : s.ecc_sbe_volatile)
                                         : (unc ? s.ecc_dbe_aggregate : s.ecc_sbe_aggregate);
    return put(g, C::kEcc, v, out);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t d, int cause, unsigned* count,
                                                  unsigned long long* addresses) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    const auto n = cause == kDbe ? smp(g).retired_pages_dbe : smp(g).retired_pages_sbe;
    if (!has(g, C::kRetiredPages) || !n) return kNotSupported;
    if (count == nullptr) return kInvalidArgument;
    const bool fits = *count >= *n;
    if (fits && addresses != nullptr)
      for (unsigned i = 0; i < *n; ++i) addresses[i] = 0x1000ull * (i + 1);
    *count = *n;
    return fits || *n == 0 ? kSuccess : kInsufficientSize;
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kRetiredPages, smp(g).retired_pages_pending, out);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned* cor, unsigned* unc,
                                                  unsigned* pending, unsigned* failure) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    const auto& s = smp(g);
    if (!has(g, C::kRemappedRows) || !s.remapped_rows_correctable) return kNotSupported;
    if (!cor || !unc || !pending || !failure) return kInvalidArgument;
    *cor = *s.remapped_rows_correctable;
    *unc = s.remapped_rows_uncorrectable.value_or(0);
    *pending = s.remapped_rows_pending.value_or(false) ? 1 : 0;
    *failure = s.remapped_rows_failure.value_or(false) ? 1 : 0;
    return kSuccess;
  });
}

GWFAKE_API nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t d, int* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kPerformanceState, smp(g).pstate, out);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kPersistenceMode, smp(g).persistence_mode, out);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t d, int* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    return put(g, C::kComputeMode, smp(g).compute_mode, out);
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned* cur, unsigned* pending) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    const nvmlReturn_t r = put(g, C::kMigMode, smp(g).mig_enabled, cur);
    return r != kSuccess
               ? r
               : put(g, C::kMigMode,
                     std::optional<bool>(smp(g).mig_pending.value_or(*smp(g).mig_enabled)),
                     pending);
  });
}

namespace {
// The scenario's fabric registration as NVML gives it: state 1-3, and the status as a return
// code (its name in the scenario, "INSUFFICIENT_RESOURCES"; other text is UNKNOWN).
nvmlReturn_t fabric(const GpuRuntime& g, unsigned char& state, nvmlReturn_t& status) {
  const auto& s = smp(g);
  if (!has(g, C::kFabric) || !s.fabric_state || *s.fabric_state == gw::FabricState::kNotSupported)
    return kNotSupported;
  state = static_cast<unsigned char>(*s.fabric_state);
  status = s.fabric_status.empty() || s.fabric_status == "Success"
               ? kSuccess
               : nvml_return_from_name(s.fabric_status).value_or(kUnknown);
  return kSuccess;
}
}  // namespace

GWFAKE_API nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t d, nvmlGpuFabricInfo_t* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    if (out == nullptr) return kInvalidArgument;
    return fabric(g, out->state, out->status);
  });
}
#ifndef GWFAKE_OLD_DRIVER  // R550+
GWFAKE_API nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t d, nvmlGpuFabricInfo_v2_t* out) {
  return fake().device(d, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    if (out == nullptr) return kInvalidArgument;
    if (out->version != kFabricInfoV2Version) return kArgumentVersionMismatch;
    out->healthMask = gw::nvml::fabric_health_mask(smp(g));
    return fabric(g, out->state, out->status);
  });
}
#endif

GWFAKE_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t d, unsigned* n,
                                                             nvmlProcessInfo_v1_t* p) {
  return processes(d, n, p, false, __func__);
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned* n,
                                                              nvmlProcessInfo_v1_t* p) {
  return processes(d, n, p, true, __func__);
}
#ifndef GWFAKE_OLD_DRIVER
GWFAKE_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned* n,
                                                                nvmlProcessInfo_t* p) {
  return processes(d, n, p, false, __func__);
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned* n,
                                                                nvmlProcessInfo_t* p) {
  return processes(d, n, p, false, __func__);
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t d, unsigned* n,
                                                                 nvmlProcessInfo_t* p) {
  return processes(d, n, p, true, __func__);
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned* n,
                                                                 nvmlProcessInfo_t* p) {
  return processes(d, n, p, true, __func__);
}
#endif

// The scenario's "pcie_topology" words as NVML's levels; NOT_SUPPORTED without one.
GWFAKE_API nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b,
                                                            int* level) {
  const int j = fake().device_index(b);
  return fake().device(a, __func__, [&](GpuRuntime& g) -> nvmlReturn_t {
    const auto& topo = fake().scenario().pcie_topology;
    if (!topo) return kNotSupported;
    if (level == nullptr || j < 0) return kInvalidArgument;
    const unsigned i = g.gpu.state.info.index;
    if (i >= topo->size() || static_cast<size_t>(j) >= (*topo)[i].size()) return kInvalidArgument;
    *level = gw::nvml::topology_level((*topo)[i][static_cast<size_t>(j)]);
    return kSuccess;
  });
}

GWFAKE_API nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link, int* active) {
  return nvlink(d, link, __func__, [&](const gw::NvLinkInfo& l) -> nvmlReturn_t {
    if (active == nullptr) return kInvalidArgument;
    *active = l.active ? 1 : 0;
    return kSuccess;
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t d, unsigned link,
                                                   unsigned* version) {
  return nvlink(d, link, __func__, [&](const gw::NvLinkInfo& l) -> nvmlReturn_t {
    if (!l.version) return kNotSupported;
    if (version == nullptr) return kInvalidArgument;
    *version = *l.version;
    return kSuccess;
  });
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned link, int counter,
                                                        unsigned long long* out) {
  return nvlink(d, link, __func__, [&](const gw::NvLinkInfo& l) -> nvmlReturn_t {
    const std::optional<uint64_t> v = counter == kDlReplay     ? l.replay_errors
                                      : counter == kDlRecovery ? l.recovery_errors
                                      : counter == kDlCrcFlit  ? l.crc_flit_errors
                                      : counter == kDlCrcData  ? l.crc_data_errors
                                                               : std::nullopt;
    if (!v) return kNotSupported;
    if (out == nullptr) return kInvalidArgument;
    *out = *v;
    return kSuccess;
  });
}
