// CUDA runtime and driver errors no specific rule covers, judged from the catalog of the whole
// enum (core/cuda_errors.h): rules as data, one row per error or group of errors, with
// the finding it gives and the next step. Tied to the GPU state the capture shows: an Xid or a
// GPU fallen off the bus explains a kernel fault, an unknown error or a lost device.
#include "core/cuda_errors.h"

#include <fmt/format.h>

#include <array>
#include <map>

#include "diagnose/context.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

struct CudaRule {
  std::array<int, 6> codes;  // 0 pads
  std::string_view finding;
  Severity severity;
  std::string_view title;
  std::string_view next;
};

constexpr std::array kCudaRules = {
    CudaRule{{802},
             "cuda.system_not_ready",
             Severity::kCritical,
             "CUDA cannot start: the system is not ready",
             "On NVSwitch systems (HGX/DGX A100, H100, H200, B200) CUDA waits for the fabric: "
             "install and start nvidia-fabricmanager of exactly the driver's version (systemctl "
             "status nvidia-fabricmanager; its log says why it stopped), then retry."},
    CudaRule{{803, 804, 34, 36},
             "cuda.driver_setup",
             Severity::kCritical,
             "The CUDA user-mode driver does not suit the kernel driver or the GPU",
             "803: libcuda and the kernel module are different versions (a half-applied update, "
             "or a container's forward-compatibility libcuda): reinstall one driver and reboot. "
             "804: forward compatibility (cuda-compat) is supported on data-center GPUs only: "
             "remove the compat package from the library path or upgrade the driver. 34: the "
             "process loaded the toolkit's stub libcuda: put the driver's library first. 36: "
             "upgrade the driver."},
    CudaRule{{3, 304, 221, 102, 103, 127},
             "cuda.init_failed",
             Severity::kWarning,
             "CUDA could not initialize",
             "Check that the driver is loaded and matches (nvidia-smi), that the container was "
             "started with the NVIDIA runtime, and that CUDA is not first used in a process "
             "forked after the parent initialized it (use the spawn start method)."},
    CudaRule{{46, 216, 805, 807},
             "cuda.device_unavailable",
             Severity::kWarning,
             "The GPU is busy, exclusive or behind an MPS server that refused the client",
             "nvidia-smi -q: Compute Mode (Exclusive_Process or Prohibited refuses a second "
             "process) and the processes holding the GPU; with MPS, check the control daemon "
             "and its server log."},
    CudaRule{{222, 218, 223, 98, 200},
             "cuda.ptx_unsupported",
             Severity::kWarning,
             "The program's GPU code does not run on this driver: PTX or kernel image unusable",
             "222: the PTX came from a newer toolkit than the driver can compile: upgrade the "
             "driver or build for this GPU's sm directly. 218/223: the driver's JIT failed or is "
             "disabled (CUDA_DISABLE_PTX_JIT). 98/200: rebuild for this GPU's architecture."},
    CudaRule{{101},
             "cuda.invalid_device",
             Severity::kWarning,
             "The program asked for a GPU it cannot see (invalid device ordinal)",
             "Compare the device number with CUDA_VISIBLE_DEVICES (a process sees only those, "
             "renumbered from 0) and with the GPUs the container was given."},
    CudaRule{{220},
             "cuda.nvlink_uncorrectable",
             Severity::kCritical,
             "The GPU reported an uncorrectable NVLink error to the application",
             "Check the NVLink state and error counters (nvidia-smi nvlink -s / -e, dcgmi "
             "nvlink) and the kernel log's Xid 74; a link that keeps failing needs service."},
    CudaRule{{999},
             "cuda.unknown_error",
             Severity::kWarning,
             "CUDA failed with an unknown error",
             "Without an Xid it is most often the driver's state after suspend/resume or a GPU "
             "reset: reload nvidia_uvm (rmmod nvidia_uvm; modprobe nvidia_uvm) or reboot; with an "
             "Xid, follow the Xid's action."},
    CudaRule{{702, 714, 715, 716, 718},
             "cuda.kernel_fault",
             Severity::kWarning,
             "A CUDA kernel faulted (timeout, stack, instruction or address error)",
             "Rerun with CUDA_LAUNCH_BLOCKING=1 and compute-sanitizer to find the kernel; a fault "
             "that moves between kernels or follows one GPU points at the GPU (see its Xids)."},
};

const CudaRule* rule_for(int code) {
  for (const CudaRule& r : kCudaRules)
    for (int x : r.codes)
      if (x != 0 && x == code) return &r;
  return nullptr;
}

// Xids that explain an error the application saw: the GPU fell off the bus, lost its memory
// contents, or reset.
bool explains(const EventGroup& g) {
  if (g.kind == EventKind::kFallenOffBus || g.kind == EventKind::kGpuLost) return true;
  if (g.kind != EventKind::kXid) return false;
  switch (g.code) {
    case 48:
    case 63:
    case 64:
    case 74:
    case 79:
    case 92:
    case 94:
    case 95:
    case 119:
    case 120:
      return true;
    default:
      return false;
  }
}

void add_gpu_state(const DiagnoseContext& c, CudaErrorClass cls, std::vector<std::string>& ev) {
  if (cls != CudaErrorClass::kUnknown && cls != CudaErrorClass::kDeviceFault &&
      cls != CudaErrorClass::kNotVisible && cls != CudaErrorClass::kHardware &&
      cls != CudaErrorClass::kSetup)
    return;
  for (const EventGroup& g : c.groups) {
    if (!explains(g)) continue;
    ev.push_back(fmt::format(
        "the kernel log shows {} {} on {} ({} time(s)): the hardware event explains the error",
        g.kind == EventKind::kXid ? "Xid" : "the GPU",
        g.kind == EventKind::kXid ? std::to_string(g.code) : std::string("lost / off the bus"),
        g.gpu ? fmt::format("GPU {}", *g.gpu) : g.pci_bus_id.value_or("a GPU"),
        g.total ? g.total : g.events.size()));
    return;
  }
}

std::string error_name(const CudaErrorInfo& e) {
  return fmt::format("{} ({}): {}", e.runtime_name, e.code, e.text);
}

}  // namespace

void rule_cuda_version_unreadable(const DiagnoseContext& c, Findings& out) {
  std::vector<std::string> ev;
  for (const Snapshot& s : c.obs.samples)
    if (s.cuda_version_failed)
      ev.push_back(fmt::format("nvidia-smi: \"CUDA Version: ERR!\" ({})", s.source));
  if (ev.empty()) return;
  ev.push_back(
      "nvidia-smi reads the GPUs through NVML but asks libcuda.so.1 for the CUDA version: "
      "ERR! means that library could not be loaded or answered with an error, so CUDA "
      "programs here fail to initialise although the GPU itself reads normally");
  out.push_back(make_finding(
      "cuda.driver_setup", Severity::kCritical, nullptr,
      "The CUDA user-mode driver (libcuda) does not work: nvidia-smi shows CUDA Version ERR!",
      std::move(ev),
      "Find which libcuda.so.1 is loaded (ldconfig -p | grep libcuda; LD_LIBRARY_PATH): a "
      "stub, a compat package or another driver version's copy shadows the driver's. On WSL 2 "
      "keep only /usr/lib/wsl/lib's libcuda: remove Linux driver packages (nvidia-driver-*, "
      "cuda-drivers, libnvidia-compute) from the distribution, install the toolkit alone, then "
      "wsl --shutdown and retry."));
}

void rule_cuda_catalog(const DiagnoseContext& c, std::string_view only, Findings& out) {
  std::map<int, std::vector<const AppMessage*>> by_code;  // -1: no code known
  for (const AppMessage* m : app_messages_of(c, AppMessageKind::kOther))
    by_code[m->cuda_error_code.value_or(-1)].push_back(m);
  for (const auto& [code, ms] : by_code) {
    const CudaErrorInfo* e = cuda_error_by_code(code);
    const CudaRule* r = e ? rule_for(code) : nullptr;
    std::vector<std::string> ev;
    for (const AppMessage* m : ms) {
      if (ev.size() == 3) break;
      ev.push_back(fmt::format("\"{}\" ({})", m->text.substr(0, 200), m->origin));
    }
    if (const size_t n = copies_of(ms); n > 3)
      ev.push_back(fmt::format("{} such messages in the input", n));
    if ((r ? r->finding : std::string_view("app.cuda_error")) != only) continue;
    if (e) add_gpu_state(c, e->cls, ev);
    if (!r) {
      std::string title = e ? "The application reported " + error_name(*e)
                            : std::string("The application reported a CUDA or driver error");
      // A CUDA library's own status (cuBLAS) says what failed: the job failed on the GPU (a
      // warning) unless the program passed an invalid value.
      if (!e && ms.front()->framework == "cublas") {
        const std::string& what = ms.front()->detail;
        const bool program = what.find("INVALID_VALUE") != std::string::npos;
        out.push_back(make_finding(
            "app.cuda_error", program ? Severity::kInfo : Severity::kWarning, nullptr,
            "The application reported " + what, std::move(ev),
            "Rerun with CUDA_LAUNCH_BLOCKING=1 to find the failing call; read dmesg for an Xid "
            "at the same time (a GPU fault explains it); check that the CUDA libraries were "
            "built for this GPU's architecture and suit the driver; if it follows one GPU, run "
            "the job on another to tell the GPU from the program."));
        continue;
      }
      out.push_back(make_finding("app.cuda_error", Severity::kInfo, nullptr, std::move(title),
                                 std::move(ev)));
      continue;
    }
    // Beside "the system is not ready" (802), other start failures of the same run (304, 3 on
    // the other GPUs) are its consequence: said, without a verdict of their own.
    const bool behind_802 = r->finding == "cuda.init_failed" && by_code.count(802) > 0;
    if (behind_802)
      ev.push_back(
          "the same input reports cudaErrorSystemNotReady (802): CUDA could not start, "
          "so its other start errors follow from it");
    out.push_back(make_finding(std::string(r->finding), behind_802 ? Severity::kInfo : r->severity,
                               nullptr, fmt::format("{}: {}", r->title, error_name(*e)),
                               std::move(ev), std::string(r->next)));
  }
}

void rule_app_other_error(const DiagnoseContext& c, Findings& out) {
  rule_cuda_catalog(c, "app.cuda_error", out);
}

}  // namespace gw
