// Observation: everything one diagnosis looks at. Live mode and --from files both build one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/active.h"
#include "core/bench.h"
#include "core/dcgm.h"
#include "core/event.h"
#include "core/host.h"
#include "core/nccl_watchdog.h"
#include "core/result.h"
#include "core/snapshot.h"

namespace gw {

// Exact number of events of one kind/GPU/code seen in the inputs, even when only the first
// few of them are kept in Observation::events (big kernel logs).
struct EventCount {
  EventKind kind = EventKind::kXid;
  std::optional<std::string> pci_bus_id;  // normalised, nullopt when the line named no GPU
  std::optional<unsigned> code;           // Xid / SXid number
  uint64_t count = 0;
  std::optional<int64_t> first_time_ms, last_time_ms;
  std::optional<double> first_uptime_s, last_uptime_s;
};

// An application's or tool's error message found in a capture: PyTorch/TensorFlow/JAX
// out-of-memory, NCCL errors, CUDA runtime errors, nvidia-smi/NVML/Docker failures. Parsed by
// sources/app; judged by the diagnose rules. Byte figures are what the message states.
enum class AppMessageKind {
  kCudaOutOfMemory,        // "CUDA out of memory. Tried to allocate ..." (any framework)
  kNcclError,              // "NCCL error ...", "ncclUnhandledCudaError", ...
  kNcclTimeout,            // NCCL watchdog / collective operation timeout
  kDriverInsufficient,     // "CUDA driver version is insufficient for CUDA runtime version"
  kNoCudaDevice,           // "no CUDA-capable device is detected"
  kNvmlVersionMismatch,    // "Failed to initialize NVML: Driver/library version mismatch"
  kSmiCannotTalkToDriver,  // "NVIDIA-SMI has failed because it couldn't communicate ..."
  kNoDeviceHandle,         // "Unable to determine the device handle for GPU ..."
  kDockerNoGpuDriver,      // "could not select device driver "" with capabilities: [[gpu]]"
  // Slurm drained a node that reported fewer GPUs than configured ("gres/gpu count reported
  // lower than configured (3 < 4)"): gpus_usable found, gpus_total configured, detail the node.
  kSlurmGpuCountLow,
  // slurmd cannot find a GPU device file its gres.conf names ("fatal: can't stat gres.conf file
  // /dev/nvidia0", "error: Waiting for gres.conf file ..."): detail the path.
  kSlurmGresDeviceMissing,
  // The NVIDIA Windows driver's (nvlddmkm) event in Event Viewer's text ("The description for
  // Event ID 153 from source nvlddmkm cannot be found", "Display driver nvlddmkm stopped
  // responding and has successfully recovered" = 4101): detail the event id.
  kWindowsDriverEvent,
  // TensorFlow's CUDA diagnostics after a failed cuInit: "kernel driver does not appear to be
  // running on this host (name): /proc/driver/nvidia/version does not exist".
  kDriverNotLoaded,
  // "Failed to initialize NVML" without the mismatch wording ("Unknown Error", nothing), and
  // the host engine failing on it ("Error starting nv-hostengine: DCGM initialization error").
  kNvmlInitFailed,
  // A program's NVML call answered GPU_IS_LOST ("NVML_ERROR_GPU_IS_LOST", go-nvml's
  // "ERROR_GPU_IS_LOST", pynvml's and .NET wrappers' "GPUIsLost"): the GPU fell off the bus.
  kNvmlGpuLost,
  kLaunchFailure,          // "unspecified launch failure"
  kIllegalAddress,         // "an illegal memory access was encountered"
  kUncorrectableEcc,       // "uncorrectable ECC error encountered"
  kPeerAccessUnsupported,  // "peer access is not supported between these two devices"
  kNcclTransport,  // NCCL_DEBUG=INFO "Channel ... via NET/Socket" (one per transport and file)
  // NCCL_DEBUG=INFO configuration (one per fact and file; `detail` says it: "NCCL_IB_DISABLE=1"
  // from "set by environment", "network=Socket" from "Using network", "NET/IB: no device",
  // "socket interface=ens3" from "NET/Socket : Using [0]ens3:<ip>"; `steps` counts the lines).
  kNcclSetting,
  kStepTiming,  // a training log's step timing, summed over one input (data_time vs time, ...)
  // Container and orchestration (NVIDIA device plugin, container toolkit, Kubernetes):
  kDeviceUnhealthy,      // the device plugin marked a GPU unhealthy (gpu_uuid, xid or detail)
  kPluginNoDevices,      // the device plugin found no NVML / no GPUs (detail: why)
  kNodeGpuResources,     // a node's nvidia.com/gpu Capacity / Allocatable (gpus_total/usable)
  kGpuAdmissionFailed,   // kubelet refused a GPU pod (gpus_total requested, gpus_usable free)
  kContainerHookFailed,  // nvidia-container-cli failed in the runtime hook (detail: its cause)
  // The GPU Operator's components (device plugin, feature discovery, dcgm-exporter, validator,
  // toolkit, driver) whose pods are not ready, from kubectl tables or `describe pod` (detail:
  // the component and its state: "0/9 ready", "Init:0/1", "Pending in init container ...").
  kGpuComponentNotReady,
  // The scheduler placed no node for a pod for want of nvidia.com/gpu (FailedScheduling;
  // gpus_total: nodes considered, gpus_usable: nodes short of GPUs).
  kGpuUnschedulable,
  // A framework/program built without the GPU's architecture (detail: the GPU's name;
  // compute_capability, and the build's min/max when the message lists them).
  kArchUnsupported,
  // NVIDIA Fabric Manager (NVSwitch systems) did not start or stopped: its journal, `systemctl
  // status` or fabricmanager.log (detail: the cause; for a version mismatch, driver_version is
  // the loaded driver's and `detail` names the fabric manager's; `text` the line).
  kFabricManagerFailed,
  // The fabric manager started and configured the NVSwitches ("Successfully configured all the
  // available NVSwitches", "Started NVIDIA fabric manager service"): read, no fault.
  kFabricManagerStarted,
  kOther,  // another CUDA/driver error worth showing
};

// One "Process 1234 has 20.00 GiB memory in use" clause of a PyTorch out-of-memory message.
struct AppProcessMemory {
  uint32_t pid = 0;
  uint64_t bytes = 0;
  bool operator==(const AppProcessMemory&) const = default;
};

struct AppMessage {
  AppMessageKind kind = AppMessageKind::kOther;
  std::string framework;  // "pytorch", "tensorflow", "jax", "nccl", "cuda", "docker", ...
  std::optional<unsigned> gpu_index;  // "GPU 0" / "cuda:0" when the message names it
  std::optional<uint64_t> tried_bytes, total_bytes, allocated_bytes, reserved_bytes, free_bytes,
      process_bytes;  // out-of-memory figures as stated
  std::optional<std::string> cuda_runtime_version, driver_version;  // when the text gives them
  // The newest CUDA the driver supports, when the message says (PyTorch's "found version 11040").
  std::optional<std::string> driver_cuda_version;
  std::string text;    // the message line, trimmed
  std::string origin;  // "file:line"
  // PyTorch >= 2.2 states "X reserved by PyTorch but unallocated" (the cache); reserved_bytes
  // is then allocated + that (the old wording's "reserved in total by PyTorch").
  std::optional<uint64_t> reserved_unallocated_bytes;
  std::vector<AppProcessMemory> other_processes;  // other processes named in an OOM message
  std::optional<std::string> pci_bus_id;          // normalised, when the message names a bus id
  std::optional<int> cuda_error_code;             // "returned 35", "CUDA error 217", ...
  std::optional<WatchdogReport> watchdog;         // kNcclTimeout: where this rank stopped
  std::string detail;  // what else the message says: "NCCL WARN ...", peer transport, ...
  // Container and orchestration messages: the GPU as the device plugin names it, the Xid it
  // acted on, and GPU counts (kNodeGpuResources: Capacity / Allocatable; kGpuAdmissionFailed:
  // Requested / Available).
  std::optional<std::string> gpu_uuid;
  std::optional<unsigned> xid, gpus_total, gpus_usable;
  // kArchUnsupported: compute capabilities as major x 10 + minor (sm_120 -> 120, 3.5 -> 35).
  std::optional<unsigned> compute_capability, min_capability, max_capability;
  // kStepTiming: over `steps` steps, seconds spent waiting for data, seconds of whole steps
  // (waiting included), and the longest single wait with its origin in `origin`; the first
  // step's own figures apart (`first_*`: it carries the loader's start-up).
  // kNcclTransport: `detail` is the transport ("NET/Socket", "NET/IB", "P2P", "SHM"), `steps`
  // the channel lines that chose it, `text` the first of them (with GDRDMA when it says so).
  double data_wait_s = 0, step_s = 0, longest_wait_s = 0;
  double first_wait_s = 0, first_step_s = 0;
  size_t steps = 0;
  // How many times the input holds this message: AppMessageMerge folds a copy (every field
  // equal but the origin, this count and read_at) into the first, which keeps its origin.
  size_t copies = 1;
  // Where its newest copy was read, in the order of all inputs' messages (1 the first read;
  // 0 when no AppMessageMerge saw it): the rules that read the order of messages (a fabric
  // manager started after its last failure) compare this, since copies are folded away.
  size_t read_at = 0;
  bool operator==(const AppMessage&) const = default;
};

// How much of one input was understood: every line is either read by some parser or counted
// here, so the report can say "41 lines not understood, first at line 3".
// A line that names a GPU, its driver, CUDA, NCCL or DCGM and that no reader took anything from.
struct UnreadLine {
  size_t line = 0;      // 1-based
  std::string excerpt;  // the line, shortened
};

struct InputCoverage {
  std::string origin;                // the file name as given
  std::vector<std::string> formats;  // what was found in it, in order: "nvidia-smi -q", ...
  size_t lines = 0;                  // lines in the input
  size_t lines_not_understood = 0;   // non-blank lines no parser took
  std::optional<size_t> first_not_understood_line;  // 1-based
  bool incomplete = false;  // content was recognised but cut short or partly unreadable
  std::vector<std::string> incomplete_reasons;  // "Attached GPUs: 8 but 4 GPU sections read"
  std::vector<std::string> notes;               // e.g. "-q fragment: one GPU of unknown bus id"
  size_t elided_lines = 0;                      // "[...]" marks left by whoever pasted it
  // Of lines_not_understood, those that name a GPU, the NVIDIA driver, CUDA, NCCL or DCGM (or a
  // PCIe error): they always weigh in the verdict. The first kMaxListed are kept with their text.
  size_t gpu_lines_not_read = 0;
  std::vector<UnreadLine> gpu_unread;
  static constexpr size_t kMaxListed = 20;
};

struct Observation {
  std::vector<Snapshot> samples;  // oldest first; one for --quick or a one-shot dump
  std::vector<Event> events;      // kernel log and NVML events, oldest first
  std::optional<HostFacts> host;
  std::optional<Topology> topology;
  std::optional<Error> source_error;  // the GPU source failed as a whole (no driver, mismatch)
  std::vector<Error> input_errors;    // files or lines that could not be read
  // Added by the capture loader: exact per-(kind, GPU, code) counts of every event seen, and
  // notes on what was reduced ("kept 4096 of 3600000 samples ...").
  std::vector<EventCount> event_counts;
  std::vector<std::string> notes;
  std::vector<AppMessage> app_messages;  // application/tool errors found in captures
  // Messages read into app_messages so far, copies folded away included: AppMessage::read_at.
  size_t app_messages_read = 0;
  std::vector<InputCoverage> coverage;        // one per captured input (empty in live mode)
  std::optional<ActiveReport> active;         // doctor --stress: what the controlled load measured
  std::vector<DcgmResult> dcgm;               // DCGM tool output found in captures
  std::vector<BurnRun> burn_runs;             // gpu_burn output found in captures
  std::vector<CollectiveRun> nccl_tests;      // nccl-tests tables found in captures
  std::optional<NcclTopology> nccl_topology;  // NCCL_DEBUG=INFO's paths, the first one printed
  std::vector<BandwidthMatrix> bw_matrices;   // p2pBandwidthLatencyTest / nvbandwidth matrices
};

}  // namespace gw
