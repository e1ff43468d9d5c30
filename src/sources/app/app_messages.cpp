// Application/tool error lines -> AppMessage. Each message is known by the wording its tool
// prints (the phrases below are the tools' own), never by where it stands in the file.
#include "sources/app/app_messages.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>

#include "core/event.h"
#include "sources/app/cuda_errors.h"
#include "sources/app/hami_core.h"
#include "sources/app/nccl_watchdog.h"
#include "sources/kmsg/kernel_log.h"
#include "sources/smi/phrase_set.h"
#include "sources/smi/text_util.h"

namespace gw {

namespace {

using text::has;
using text::is_digit;

using text::ascii_lower;

// ASCII case-insensitive find. Both sides are lowered once and searched with the library's
// memchr/memcmp-based find: a 20 MB line of one letter must not cost length x needle steps.
size_t find_ci(std::string_view hay, std::string_view needle, size_t from = 0) {
  if (needle.empty() || from > hay.size() || hay.size() - from < needle.size())
    return std::string_view::npos;
  const size_t p = ascii_lower(hay.substr(from)).find(ascii_lower(needle));
  return p == std::string::npos ? std::string_view::npos : p + from;
}

bool has_ci(std::string_view hay, std::string_view needle) {
  return find_ci(hay, needle) != std::string_view::npos;
}

// The amount right after `key` ("Tried to allocate 22.00 MiB") or right before it
// ("17.20 GiB already allocated"), searched from `from`.
std::optional<uint64_t> bytes_after(std::string_view s, std::string_view key, size_t from = 0) {
  const size_t p = find_ci(s, key, from);
  if (p == std::string_view::npos) return std::nullopt;
  return parse_app_bytes(s.substr(p + key.size()));
}

std::optional<uint64_t> bytes_before(std::string_view s, std::string_view key) {
  const size_t p = find_ci(s, key);
  if (p == std::string_view::npos) return std::nullopt;
  // Walk back over "<num> <unit>".
  size_t b = p;
  while (b > 0 && s[b - 1] == ' ') --b;
  while (b > 0 && std::isalpha(static_cast<unsigned char>(s[b - 1]))) --b;
  while (b > 0 && s[b - 1] == ' ') --b;
  while (b > 0 && (is_digit(s[b - 1]) || s[b - 1] == '.' || s[b - 1] == ',')) --b;
  return parse_app_bytes(s.substr(b, p - b));
}

std::string framework_of(std::string_view s) {
  if (has_ci(s, "torch") || has(s, "PyTorch") || has(s, "PYTORCH_CUDA_ALLOC_CONF"))
    return "pytorch";
  if (has_ci(s, "tensorflow") || has(s, "_bfc") || has(s, "ResourceExhaustedError"))
    return "tensorflow";
  if (has_ci(s, "jax") || has(s, "XlaRuntimeError") || has(s, "RESOURCE_EXHAUSTED") ||
      has(s, "xla"))
    return "jax";
  if (has(s, "NCCL") || has(s, "nccl")) return "nccl";
  if (has(s, "nvidia-container-cli") || has_ci(s, "docker") || has(s, "OCI runtime"))
    return "docker";
  if (has(s, "NVIDIA-SMI") || has(s, "nvidia-smi")) return "nvidia-smi";
  if (has(s, "NVML")) return "nvml";
  return "cuda";
}

// GPU index from "GPU 0", "GPU_0_bfc", "device:GPU:0", "cuda:0", "device ordinal 0".
std::optional<unsigned> gpu_index_of(std::string_view s) {
  for (std::string_view key : {"device:GPU:", "GPU_", "cuda:", "device ordinal ", "GPU ", "GPU="}) {
    size_t p = 0;
    while ((p = s.find(key, p)) != std::string_view::npos) {
      p += key.size();
      size_t used = 0;
      const uint64_t n = text::leading_digits(s.substr(p), used);
      if (used > 0 && used < 4) return static_cast<unsigned>(n);
    }
  }
  return std::nullopt;
}

// TensorFlow's "OOM when allocating tensor with shape[16,1,892800,8] and type float": the
// tensor's size, elements times the type's width (nullopt for a type not listed).
std::optional<uint64_t> tensor_bytes(std::string_view s) {
  const size_t at = s.find("tensor with shape[");
  if (at == std::string_view::npos) return std::nullopt;
  const size_t open = at + 18, close = s.find(']', open);
  const size_t type_at = s.find(" and type ", close);
  if (close == std::string_view::npos || type_at == std::string_view::npos) return std::nullopt;
  uint64_t elements = 1;
  for (size_t i = open; i < close;) {
    size_t used = 0;
    const uint64_t d = text::leading_digits(s.substr(i, close - i), used);
    if (used == 0 || used > 12 || (d > 0 && elements > UINT64_MAX / d)) return std::nullopt;
    elements *= d;
    i += used;
    if (i < close && s[i] != ',') return std::nullopt;
    ++i;
  }
  const std::string_view rest = s.substr(type_at + 10);
  const std::string_view type = rest.substr(0, rest.find(' '));
  static constexpr std::array<std::pair<std::string_view, unsigned>, 14> kWidth = {{
      {"float", 4},
      {"float32", 4},
      {"half", 2},
      {"float16", 2},
      {"bfloat16", 2},
      {"double", 8},
      {"float64", 8},
      {"int32", 4},
      {"int64", 8},
      {"int16", 2},
      {"int8", 1},
      {"uint8", 1},
      {"bool", 1},
      {"complex64", 8},
  }};
  for (const auto& [name, width] : kWidth)
    if (type == name)
      return elements > UINT64_MAX / width ? std::nullopt
                                           : std::optional<uint64_t>(elements * width);
  return std::nullopt;
}

void oom_figures(std::string_view s, AppMessage& m) {
  m.tried_bytes = tensor_bytes(s);
  if (!m.tried_bytes) m.tried_bytes = bytes_after(s, "Tried to allocate ");
  if (!m.tried_bytes) m.tried_bytes = bytes_after(s, "trying to allocate ");
  if (!m.tried_bytes) m.tried_bytes = bytes_after(s, "while trying to allocate ");
  if (!m.tried_bytes) m.tried_bytes = bytes_after(s, "Out of memory allocating ");
  if (!m.tried_bytes) m.tried_bytes = bytes_after(s, "Failed to allocate request for ");
  if (!m.tried_bytes) m.tried_bytes = bytes_after(s, "Failed to CUDA calloc ");
  if (!m.tried_bytes) m.tried_bytes = bytes_after(s, "Failed to CUDA malloc ");
  // ggml: "allocating 24289.03 MiB on device 0: cudaMalloc failed: out of memory".
  if (!m.tried_bytes) m.tried_bytes = bytes_after(s, "allocating ");
  // PyTorch >= 2.2: "GPU 0 has a total capacity of 23.65 GiB of which 11.06 MiB is free.
  // Including non-PyTorch memory, this process has 23.60 GiB memory in use. Of the allocated
  // memory 22.90 GiB is allocated by PyTorch, and 194.87 MiB is reserved by PyTorch but
  // unallocated."
  m.total_bytes = bytes_after(s, "total capacity of ");
  // PyTorch 2.1 printed the same sentence as "a total capacty of".
  if (!m.total_bytes) m.total_bytes = bytes_after(s, "total capacty of ");
  if (m.total_bytes) {
    m.free_bytes = bytes_after(s, " of which ");
    m.process_bytes = bytes_after(s, "this process has ");
    m.allocated_bytes = bytes_after(s, "Of the allocated memory ");
    m.reserved_unallocated_bytes = bytes_before(s, "is reserved by PyTorch but unallocated");
    if (m.allocated_bytes && m.reserved_unallocated_bytes)
      m.reserved_bytes = *m.allocated_bytes + *m.reserved_unallocated_bytes;
    // "Process 1234 has 20.00 GiB memory in use" (other processes, newest wording).
    size_t p = 0;
    while ((p = s.find("Process ", p)) != std::string_view::npos) {
      p += 8;
      size_t used = 0;
      const uint64_t pid = text::leading_digits(s.substr(p), used);
      if (used == 0 || used > 9 || s.substr(p + used, 5) != " has ") continue;
      if (auto b = parse_app_bytes(s.substr(p + used + 5)))
        m.other_processes.push_back({static_cast<uint32_t>(pid), *b});
    }
    return;
  }
  // PyTorch <= 2.1: "(GPU 0; 8.00 GiB total capacity; 17.20 GiB already allocated; 0 bytes
  // free; 19.15 GiB reserved in total by PyTorch)"; 1.x: "... 1.05 GiB cached)".
  m.total_bytes = bytes_before(s, "total capacity");
  m.allocated_bytes = bytes_before(s, "already allocated");
  m.free_bytes = bytes_before(s, "free;");
  if (!m.free_bytes) m.free_bytes = bytes_before(s, "free)");
  m.reserved_bytes = bytes_before(s, "reserved in total");
  if (!m.reserved_bytes) m.reserved_bytes = bytes_before(s, "cached)");
  // TensorFlow BFC stats line: "Limit: 15701463040 InUse: ..." is on its own line; JAX/XLA
  // "Out of memory while trying to allocate 17179869184 bytes." gives only the request.
}

struct Phrase {
  std::string_view text;
  AppMessageKind kind;
  bool ci;
};

// Order matters: the more specific phrase first.
constexpr std::array kPhrases = {
    Phrase{"peer access is not supported", AppMessageKind::kPeerAccessUnsupported, true},
    Phrase{"CUDA driver version is insufficient", AppMessageKind::kDriverInsufficient, true},
    Phrase{"cudaErrorInsufficientDriver", AppMessageKind::kDriverInsufficient, false},
    Phrase{"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", AppMessageKind::kDriverInsufficient, false},
    // PyTorch's wording of error 35 (a RuntimeError, or a UserWarning at CUDA initialization).
    Phrase{"NVIDIA driver on your system is too old", AppMessageKind::kDriverInsufficient, false},
    Phrase{"no CUDA-capable device is detected", AppMessageKind::kNoCudaDevice, true},
    Phrase{"CUDA_ERROR_NO_DEVICE", AppMessageKind::kNoCudaDevice, false},
    Phrase{"cudaErrorNoDevice", AppMessageKind::kNoCudaDevice, false},
    Phrase{"Driver/library version mismatch", AppMessageKind::kNvmlVersionMismatch, true},
    // The NVML status by name ("NV_ERR_GPU_IS_LOST" is the kernel module's, read there).
    Phrase{"ERROR_GPU_IS_LOST", AppMessageKind::kNvmlGpuLost, false},
    Phrase{"GPUIsLost", AppMessageKind::kNvmlGpuLost, false},
    Phrase{"kernel driver does not appear to be running on this host",
           AppMessageKind::kDriverNotLoaded, false},
    // TensorFlow's diagnostics: the loaded module and libcuda differ.
    Phrase{"does not match DSO version", AppMessageKind::kNvmlVersionMismatch, false},
    Phrase{"Failed to initialize NVML", AppMessageKind::kNvmlInitFailed, true},
    Phrase{"Error starting nv-hostengine: DCGM initialization error",
           AppMessageKind::kNvmlInitFailed, false},
    Phrase{"couldn't communicate with the NVIDIA driver", AppMessageKind::kSmiCannotTalkToDriver,
           true},
    Phrase{"Unable to determine the device handle for", AppMessageKind::kNoDeviceHandle, true},
    Phrase{"could not select device driver", AppMessageKind::kDockerNoGpuDriver, true},
    Phrase{"unspecified launch failure", AppMessageKind::kLaunchFailure, true},
    Phrase{"CUDA_ERROR_LAUNCH_FAILED", AppMessageKind::kLaunchFailure, false},
    Phrase{"illegal memory access was encountered", AppMessageKind::kIllegalAddress, true},
    Phrase{"CUDA_ERROR_ILLEGAL_ADDRESS", AppMessageKind::kIllegalAddress, false},
    Phrase{"uncorrectable ECC error encountered", AppMessageKind::kUncorrectableEcc, true},
    Phrase{"CUDA_ERROR_ECC_UNCORRECTABLE", AppMessageKind::kUncorrectableEcc, false},
    Phrase{"Watchdog caught collective operation timeout", AppMessageKind::kNcclTimeout, true},
    Phrase{"NCCL timeout", AppMessageKind::kNcclTimeout, true},
    Phrase{"NCCL communicator was aborted", AppMessageKind::kNcclTimeout, true},
    // PyTorch >= 2.2 flight-recorder, blocking-wait, heartbeat and desync-debug wordings.
    Phrase{"detected by watchdog at work", AppMessageKind::kNcclTimeout, false},
    Phrase{"Timeout at NCCL work", AppMessageKind::kNcclTimeout, false},
    Phrase{"timed out in blocking wait", AppMessageKind::kNcclTimeout, false},
    Phrase{"watchdog got stuck", AppMessageKind::kNcclTimeout, true},
    Phrase{"Desync debugging", AppMessageKind::kNcclTimeout, false},
    Phrase{"joined but didn't finish collective", AppMessageKind::kNcclTimeout, false},
    // ProcessGroupNCCL's own summary and its heartbeat monitor (PyTorch 1.x-2.x).
    Phrase{"Some NCCL operations have failed or timed out", AppMessageKind::kNcclTimeout, true},
    Phrase{"Heartbeat monitor timed out", AppMessageKind::kNcclTimeout, true},
    Phrase{"CUDA out of memory", AppMessageKind::kCudaOutOfMemory, true},
    Phrase{"OutOfMemoryError", AppMessageKind::kCudaOutOfMemory, false},
    Phrase{"CUDA error: out of memory", AppMessageKind::kCudaOutOfMemory, true},
    Phrase{"CUDA_ERROR_OUT_OF_MEMORY", AppMessageKind::kCudaOutOfMemory, false},
    Phrase{"cudaErrorMemoryAllocation", AppMessageKind::kCudaOutOfMemory, false},
    Phrase{"OOM when allocating tensor", AppMessageKind::kCudaOutOfMemory, false},
    Phrase{"ran out of memory trying to allocate", AppMessageKind::kCudaOutOfMemory, false},
    Phrase{"RESOURCE_EXHAUSTED: Out of memory", AppMessageKind::kCudaOutOfMemory, false},
    Phrase{"Out of memory while trying to allocate", AppMessageKind::kCudaOutOfMemory, false},
    Phrase{"NCCL error", AppMessageKind::kNcclError, true},
    // NCCL's own check of a CUDA call: "NCCL WARN Cuda failure 1 'invalid argument'" (the CUDA
    // error is kept as the message's code).
    Phrase{"NCCL WARN Cuda failure", AppMessageKind::kNcclError, false},
    Phrase{"ncclUnhandledCudaError", AppMessageKind::kNcclError, false},
    Phrase{"ncclSystemError", AppMessageKind::kNcclError, false},
    Phrase{"ncclInternalError", AppMessageKind::kNcclError, false},
    Phrase{"ncclInvalidUsage", AppMessageKind::kNcclError, false},
    Phrase{"ncclRemoteError", AppMessageKind::kNcclError, false},
    // nccl-tests' own check: "host: Test NCCL failure common.cu:777 'unhandled system error'".
    Phrase{"Test NCCL failure ", AppMessageKind::kNcclError, false},
    Phrase{"device-side assert triggered", AppMessageKind::kOther, true},
    Phrase{"CUDA-capable device(s) is/are busy or unavailable", AppMessageKind::kOther, true},
    Phrase{"forward compatibility was attempted on non supported HW", AppMessageKind::kOther, true},
    Phrase{"system has unsupported display driver / cuda driver combination",
           AppMessageKind::kOther, true},
};

// The errors with a message kind of their own; the rest stay kOther with their code.
AppMessageKind kind_of(const CudaErrorInfo& e) {
  switch (e.code) {
    case 2:
      return AppMessageKind::kCudaOutOfMemory;
    case 35:
      return AppMessageKind::kDriverInsufficient;
    case 100:
      return AppMessageKind::kNoCudaDevice;
    case 214:
      return AppMessageKind::kUncorrectableEcc;
    case 217:
      return AppMessageKind::kPeerAccessUnsupported;
    case 700:
      return AppMessageKind::kIllegalAddress;
    case 719:
      return AppMessageKind::kLaunchFailure;
    default:
      return AppMessageKind::kOther;
  }
}

// PyTorch's "driver ... is too old (found version 11040)": the driver's CUDA version as the
// driver API states it (1000 x major + 10 x minor) -> "11.4".
std::optional<std::string> found_cuda_version(std::string_view s) {
  const size_t p = s.find("(found version ");
  if (p == std::string_view::npos) return std::nullopt;
  const size_t close = s.find(')', p);
  if (close == std::string_view::npos) return std::nullopt;
  return text::cuda_int_version(s.substr(p + 15, close - p - 15));
}

// deviceQuery and friends: "cudaGetDeviceCount returned 35".
std::optional<AppMessage> cuda_call_returned(std::string_view s) {
  if (!text::starts_with(text::trim(s), "cuda")) return std::nullopt;  // the cheap test first
  const size_t p = text::find(s, " returned ");
  if (p == std::string_view::npos) return std::nullopt;
  size_t used = 0;
  const uint64_t code = text::leading_digits(s.substr(p + 10), used);
  if (used == 0 || used > 4) return std::nullopt;
  AppMessage m;
  m.framework = "cuda";
  m.cuda_error_code = static_cast<int>(code);
  switch (code) {
    case 35:
      m.kind = AppMessageKind::kDriverInsufficient;
      break;
    case 100:
      m.kind = AppMessageKind::kNoCudaDevice;
      break;
    case 2:
      m.kind = AppMessageKind::kCudaOutOfMemory;
      break;
    default:
      m.kind = AppMessageKind::kOther;
  }
  return m;
}

// "CUDA error 217" / "handle : 217 peer access ..." / "CUDA error: ... (217)".
std::optional<int> cuda_code_in(std::string_view s) {
  for (std::string_view key : {"CUDA error ", "handle : ", "cuda error "}) {
    const size_t p = s.find(key);
    if (p == std::string_view::npos) continue;
    size_t used = 0;
    const uint64_t n = text::leading_digits(s.substr(p + key.size()), used);
    if (used > 0 && used < 5) return static_cast<int>(n);
  }
  return std::nullopt;
}

// The verbs completion statuses (enum ibv_wc_status) NCCL's IB transport prints as "status=N".
std::string_view ib_completion_status(uint64_t n) {
  static constexpr std::array<std::string_view, 22> kNames = {
      "success",
      "local length error",
      "local QP operation error",
      "local EEC operation error",
      "local protection error",
      "work request flushed (the queue pair was already in error)",
      "memory window bind error",
      "bad response",
      "local access error",
      "remote invalid request",
      "remote access error",
      "remote operation error",
      "transport retry counter exceeded (the peer stopped acknowledging: link, switch or "
      "lossless-fabric trouble)",
      "receiver-not-ready retry counter exceeded",
      "local RDD violation",
      "remote invalid RD request",
      "remote aborted",
      "invalid EE context number",
      "invalid EE context state",
      "fatal error",
      "response timeout",
      "general error"};
  return n < kNames.size() ? kNames[n] : std::string_view();
}

// cuBLAS's status in a failed call: "CUBLAS failure 13: CUBLAS_STATUS_EXECUTION_FAILED ; GPU=1",
// PyTorch's "CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( ... )`".
// Its own enum, not CUDA's: the status goes to `detail`, never to cuda_error_code.
struct CublasStatus {
  std::string_view name;
  int code;
  std::string_view meaning;
};
constexpr std::array kCublasStatuses = {
    CublasStatus{"NOT_INITIALIZED", 1,
                 "cuBLAS could not initialize (most often the GPU's memory was already full when "
                 "it created its handle, or CUDA itself failed to start)"},
    CublasStatus{"ALLOC_FAILED", 3, "cuBLAS could not allocate GPU memory"},
    CublasStatus{"INVALID_VALUE", 7,
                 "an invalid argument reached cuBLAS (a shape, stride or "
                 "leading dimension the program passed)"},
    CublasStatus{"ARCH_MISMATCH", 8,
                 "the GPU lacks a feature the routine needs (its "
                 "architecture is older than the library's build wants)"},
    CublasStatus{"MAPPING_ERROR", 11, "cuBLAS could not access GPU memory"},
    CublasStatus{"EXECUTION_FAILED", 13,
                 "a cuBLAS kernel failed to launch or run on the GPU (often a fault of a kernel "
                 "before it, or a library built for another GPU architecture)"},
    CublasStatus{"INTERNAL_ERROR", 14,
                 "an operation inside cuBLAS failed (a memory copy or "
                 "kernel beneath it)"},
    CublasStatus{"NOT_SUPPORTED", 15,
                 "the operation or data type is not supported (on this "
                 "GPU)"},
    CublasStatus{"LICENSE_ERROR", 16, "cuBLAS's license check failed"},
};

std::optional<AppMessage> cublas_failure(std::string_view s) {
  const size_t p = s.find("CUBLAS_STATUS_");
  if (p == std::string_view::npos) return std::nullopt;
  std::string_view name = s.substr(p + 14);
  size_t n = 0;
  while (n < name.size() && ((name[n] >= 'A' && name[n] <= 'Z') || name[n] == '_')) ++n;
  name = name.substr(0, n);
  for (const CublasStatus& st : kCublasStatuses) {
    if (st.name != name) continue;
    AppMessage m;
    m.kind = st.code == 3 ? AppMessageKind::kCudaOutOfMemory : AppMessageKind::kOther;
    m.framework = "cublas";
    m.detail = fmt::format("cuBLAS status CUBLAS_STATUS_{} ({}): {}", st.name, st.code, st.meaning);
    return m;
  }
  return std::nullopt;
}

// vLLM's memory profile at start: "the current vLLM instance can use total_gpu_memory (8.00GiB)
// x gpu_memory_utilization (0.70) = 5.60GiB", "model weights take 5.20GiB; ...; the rest of the
// memory reserved for KV Cache is -1.05GiB.", "# cuda blocks: 0, # CPU blocks: 4681",
// "Maximum concurrency for 4096 tokens per request: 0.00x". Read; a KV cache of zero or less is
// the model not fitting its budget, an out-of-memory message.
bool vllm_memory_line(std::string_view s, std::optional<AppMessage>& oom) {
  constexpr std::string_view kRest = "the rest of the memory reserved for KV Cache is ";
  if (const size_t p = s.find(kRest); p != std::string_view::npos) {
    std::string_view v = s.substr(p + kRest.size());
    const bool negative = text::starts_with(v, "-");
    if (negative) v.remove_prefix(1);
    double gib = 0;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), gib);
    if (r.ec != std::errc()) return false;
    if (negative || gib <= 0.0) {
      AppMessage m;
      m.kind = AppMessageKind::kCudaOutOfMemory;
      m.framework = "vllm";
      m.detail = fmt::format(
          "vLLM's memory budget leaves {}{:.2f} GiB for the KV cache: the model's weights and "
          "activations take the whole budget",
          negative ? "-" : "", gib);
      oom = std::move(m);
    }
    return true;
  }
  if ((has(s, "the current vLLM instance can use total_gpu_memory") &&
       has(s, "gpu_memory_utilization")) ||
      has(s, "Memory profiling takes ") || has(s, "Loading model weights took ") ||
      (has(s, "# cuda blocks: ") && has(s, "# CPU blocks: ")) ||
      (has(s, "# GPU blocks: ") && has(s, "# CPU blocks: ")) ||
      (has(s, "Maximum concurrency for ") && has(s, " tokens per request: ")))
    return true;
  return false;
}

// "NCCL WARN <text>" that reports a failure: NCCL warns of benign things too (a real path it
// could not find, a missing libibverbs it falls back from), so the text must say so.
// Event Viewer's text of an nvlddmkm event: "The description for Event ID 153 from source
// nvlddmkm cannot be found. ...", or the Display source's 4101 "Display driver nvlddmkm stopped
// responding and has successfully recovered."
std::optional<AppMessage> windows_driver_event(std::string_view s) {
  std::string id;
  if (!has(s, "nvlddmkm")) return std::nullopt;  // one search on the common path
  if (has(s, "stopped responding and has successfully recovered")) {
    id = "4101";
  } else if (const size_t src = text::find(s, " from source nvlddmkm");
             src != std::string_view::npos) {
    const size_t e = s.rfind("Event ID ", src);
    if (e == std::string_view::npos) return std::nullopt;
    id = std::string(text::trim(s.substr(e + 9, src - e - 9)));
    if (id.empty() || id.size() > 5 || id.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  AppMessage m;
  m.kind = AppMessageKind::kWindowsDriverEvent;
  m.framework = "windows";
  m.detail = id;
  return m;
}

std::optional<AppMessage> nccl_warn_failure(std::string_view s) {
  const size_t w = s.find("NCCL WARN ");
  if (w == std::string_view::npos) return std::nullopt;
  const std::string_view body = text::trim(s.substr(w + 10));
  const std::string low = ascii_lower(body);
  if (has(low, "libibverbs")) return std::nullopt;
  bool failure = false;
  for (std::string_view k : {"fail", "error", "status=", "wrong type", "closed", "timeout",
                             "timed out", "abort", "refused", "unreachable", "retcode", "couldn't"})
    failure = failure || has(low, k);
  if (!failure) return std::nullopt;
  AppMessage m;
  m.kind = AppMessageKind::kNcclError;
  m.framework = "nccl";
  m.detail = std::string(body);
  // "NET/IB : Got completion from peer 10.0.0.2<54862> with status=12 ... vendor err 129"
  if (const size_t st = body.find("status="); st != std::string_view::npos && has(body, "NET/IB")) {
    size_t used = 0;
    const uint64_t code = text::leading_digits(body.substr(st + 7), used);
    if (used > 0 && !ib_completion_status(code).empty()) {
      std::string peer;
      if (const size_t p = body.find("from peer "); p != std::string_view::npos)
        peer = " from peer " + std::string(body.substr(p + 10, body.find(' ', p + 10) - p - 10));
      m.detail = fmt::format("IB/RoCE work completion status {} ({}){}", code,
                             ib_completion_status(code), peer);
    }
  }
  return m;
}

// NCCL's own check of a CUDA call or allocation that ran out of GPU memory: "NCCL WARN Cuda
// failure 'out of memory'", "NCCL WARN Failed to CUDA calloc 6291456 bytes". The GPU's memory is
// what failed, not the transport.
bool nccl_out_of_memory(std::string_view s, const CudaErrorInfo* ce) {
  if (!has(s, "NCCL WARN ")) return false;
  if (ce && ce->code == 2) return true;  // cudaErrorMemoryAllocation
  for (std::string_view k : {"Failed to CUDA calloc", "Failed to CUDA malloc",
                             "Failed to CUDA host alloc", "Cuda failure 'out of memory'"})
    if (has(s, k)) return true;
  return false;
}

}  // namespace

std::optional<uint64_t> parse_app_bytes(std::string_view s) {
  s = text::trim(s);
  size_t i = 0;
  while (i < s.size() && (is_digit(s[i]) || s[i] == '.')) ++i;
  if (i == 0) return std::nullopt;
  const auto num = text::parse_double(s.substr(0, i));
  if (!num || !std::isfinite(*num) || *num < 0 || *num > 1e19) return std::nullopt;
  std::string_view unit = s.substr(i);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  double mul = 0;
  auto unit_is = [&](std::string_view u) {
    return unit.size() >= u.size() && text::iequals(unit.substr(0, u.size()), u) &&
           (unit.size() == u.size() || !std::isalpha(static_cast<unsigned char>(unit[u.size()])));
  };
  if (unit_is("GiB"))
    mul = 1024.0 * 1024 * 1024;
  else if (unit_is("MiB"))
    mul = 1024.0 * 1024;
  else if (unit_is("KiB"))
    mul = 1024.0;
  else if (unit_is("TiB"))
    mul = 1024.0 * 1024 * 1024 * 1024;
  else if (unit_is("GB"))
    mul = 1e9;
  else if (unit_is("MB"))
    mul = 1e6;
  else if (unit_is("KB") || unit_is("kB"))
    mul = 1e3;
  else if (unit_is("bytes") || unit_is("byte") || unit_is("B"))
    mul = 1;
  if (mul == 0) return std::nullopt;
  const double v = *num * mul;
  if (v > 1.8e19) return std::nullopt;
  return static_cast<uint64_t>(std::llround(v));
}

std::optional<AppMessage> parse_app_message_line(std::string_view line, std::string_view origin) {
  const std::string_view s = text::trim(line);
  if (s.size() < 8) return std::nullopt;
  std::optional<AppMessage> out = cuda_call_returned(s);
  if (!out) {
    // All the phrases in one pass over the line; the first of them in kPhrases' order wins.
    static const text::PhraseSet set = [] {
      std::vector<text::Phrase> v;
      for (const Phrase& ph : kPhrases) v.push_back({ph.text, ph.ci});
      return text::PhraseSet(v);
    }();
    static_assert(kPhrases.size() <= text::PhraseSet::kMaxPhrases);
    if (const size_t i = set.first(s); i != text::PhraseSet::npos) {
      out.emplace();
      out->kind = kPhrases[i].kind;
    }
  }
  if (!out) out = windows_driver_event(s);
  if (!out) out = nccl_warn_failure(s);
  if (!out) out = cublas_failure(s);
  // Any other error of the CUDA enum, by name, code or text (sources/app/cuda_errors.h).
  const CudaErrorInfo* ce = cuda_error_in_line(s);
  if (out && out->kind == AppMessageKind::kNcclError && nccl_out_of_memory(s, ce))
    out->kind = AppMessageKind::kCudaOutOfMemory;
  if (!out && ce) {
    out.emplace();
    out->kind = kind_of(*ce);
  }
  if (!out) return std::nullopt;
  AppMessage& m = *out;
  if (ce && !m.cuda_error_code) m.cuda_error_code = ce->code;
  if (m.framework.empty()) m.framework = framework_of(s);
  m.text = std::string(s);
  m.origin = std::string(origin);
  if (!m.cuda_error_code) m.cuda_error_code = cuda_code_in(s);
  switch (m.kind) {
    case AppMessageKind::kCudaOutOfMemory:
      oom_figures(s, m);
      m.gpu_index = gpu_index_of(s);
      break;
    case AppMessageKind::kNoDeviceHandle: {
      // "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error"
      const size_t p = find_ci(s, "handle for ");
      std::string_view rest = s.substr(p + 11);
      if (text::starts_with(rest, "GPU")) rest.remove_prefix(3);
      while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
      const size_t colon = rest.find(": ");
      m.pci_bus_id = normalize_pci_bus_id(rest.substr(0, colon));
      if (colon != std::string_view::npos) m.detail = std::string(rest.substr(colon + 2));
      break;
    }
    case AppMessageKind::kNcclError:
    case AppMessageKind::kNcclTimeout:
      m.framework = "nccl";
      if (const size_t v = s.find("NCCL version "); v != std::string_view::npos)
        m.detail = std::string(s.substr(v));
      if (m.kind == AppMessageKind::kNcclTimeout) m.watchdog = parse_nccl_watchdog_line(s);
      break;
    case AppMessageKind::kPeerAccessUnsupported:
      if (has(s, "NCCL")) m.framework = "nccl";
      break;
    case AppMessageKind::kDriverInsufficient:
      m.driver_cuda_version = found_cuda_version(s);
      if (m.driver_cuda_version) m.framework = "pytorch";
      break;
    default:
      m.gpu_index = gpu_index_of(s);
      break;
  }
  return out;
}

// NCCL_DEBUG=INFO lines whose content is known and says nothing wrong (ring and tree layout,
// thresholds, affinity, init done, the error-return trace "transport.cc:68 -> 1"). The prefix
// "NCCL INFO" alone is not understanding: transport choices (via NET/Socket, SHM, P2P) are read
// by AppScanner::take_nccl_transport; every other INFO/WARN line stays unread until a reader
// judges it.
namespace {

// The known message starts (after "NCCL INFO "), each a routine report of NCCL's set-up.
constexpr std::array<std::string_view, 33> kRoutineNccl = {
    "threadThresholds", "Trees [", "Connected all rings", "Connected all trees", "Setting affinity",
    "Init COMPLETE", "NET/Plugin : No plugin found", "comm 0x", "Launch mode", "Using network",
    "NCCL_", "cudaDriverVersion",
    // 2.2x: init and set-up reports of a healthy communicator
    "ncclCommInitRank", "ncclCommInitAll", "ncclCommSplit", "Bootstrap: Using ",
    "Bootstrap timings total", "Init timings - ", "Comm config ", "RAS client listening",
    "ncclTopoGetCpuAffinity: Affinity for GPU", "P2P Chunksize set to", "Check P2P Type ",
    "[Proxy Service] Device ", "[Proxy Service UDS] Device ", "[Proxy Progress] Device ",
    "Initialized NET plugin ", "Assigned NET plugin ", "Using non-device net plugin version",
    "Enabled NCCL Func/Proto/Algo Matrix", "NVLS multicast support is not available",
    "CC Off, workFifoBytes", "NCCL version "};

bool is_routine_nccl_info(std::string_view s) {
  const size_t at = s.find("NCCL INFO ");
  if (at == std::string_view::npos) return false;
  const auto m = s.substr(at + 10);
  for (std::string_view k : kRoutineNccl)
    if (text::starts_with(m, k)) return true;
  // "ENV/Plugin: Could not find: libnccl-env.so" (a plugin NCCL would load if installed: the
  // built-in one is used), "ENV/Plugin: Closing env plugin ncclEnvDefault".
  if (const size_t p = m.find("/Plugin: "); p != std::string_view::npos && p < 12)
    return has(m, "Could not find: ") || has(m, "Closing ");
  // "64 coll channels, 64 collnet channels, 0 nvls channels, ...": the channel counts.
  if (!m.empty() && m.front() >= '0' && m.front() <= '9' && has(m, " coll channels, ")) return true;
  // "Channel 00/02 :    0   1": the ring order (a channel line with "via" is a transport).
  return text::starts_with(m, "Channel ") && !has(m, " via ");
}

// NCCL's error-return trace, "transport.cc:68 -> 1", "init.cc:904 -> 1": an error passed up
// the stack. Context of the WARN or error that caused it, never routine.
bool is_nccl_return_trace(std::string_view s) {
  const size_t at = s.find("NCCL INFO ");
  if (at == std::string_view::npos) return false;
  const auto m = s.substr(at + 10);
  const size_t cc = m.find(".cc:");
  return cc != std::string_view::npos && has(m, " -> ") && cc < m.find(" -> ");
}

// A line of rich's boxed Python traceback: its top or bottom border ("╭──── Traceback (most
// recent call last) ────╮", "╰────╯": nothing but the rule, the corners and that title) or a
// frame row that shows a source line by its right-aligned number ("│    989 │   return x"), marks
// the failing one ("│ ❱ 989 │") or names a frame ("│ /x/module.py:989 in _apply │"). Other rows
// drawn in "│" (a model summary table, a GPU panel) are no traceback.
bool is_rich_traceback_line(std::string_view s) {
  constexpr std::string_view kBar = "\xE2\x94\x82", kTop = "\xE2\x95\xAD", kBottom = "\xE2\x95\xB0",
                             kRule = "\xE2\x94\x80", kMarker = "\xE2\x9D\xB1";
  if (text::starts_with(s, kTop) || text::starts_with(s, kBottom)) {
    std::string rest(s.substr(3));
    constexpr std::string_view kTitle = " Traceback (most recent call last) ";
    if (const size_t t = rest.find(kTitle); t != std::string::npos) rest.erase(t, kTitle.size());
    for (size_t i = 0; i < rest.size();) {
      const std::string_view c = std::string_view(rest).substr(i, 3);
      if (rest[i] == ' ')
        ++i;
      else if (c == kRule || c == "\xE2\x95\xAE" || c == "\xE2\x95\xAF")  // ─ ╮ ╯
        i += 3;
      else
        return false;
    }
    return true;
  }
  if (!text::starts_with(s, kBar)) return false;
  const std::string_view row = s.substr(3);
  if (has(row, kMarker)) return true;
  if (const size_t py = row.find(".py:"); py != std::string_view::npos && has(row, " in "))
    return py + 4 < row.size() && is_digit(row[py + 4]);
  size_t i = 0;
  while (i < row.size() && row[i] == ' ') ++i;
  size_t d = i;
  while (d < row.size() && is_digit(row[d])) ++d;
  return i >= 2 && d > i && d < row.size() && row[d] == ' ';
}

// "path/file.cc:93": one word, a C++ source file and a line number, nothing else.
bool is_source_location(std::string_view s) {
  const size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || colon + 1 >= s.size() ||
      s.find(' ') != std::string_view::npos || s.find('/') == std::string_view::npos)
    return false;
  if (s.substr(colon + 1).find_first_not_of("0123456789") != std::string_view::npos) return false;
  const std::string_view file = s.substr(0, colon);
  return text::ends_with(file, ".cc") || text::ends_with(file, ".cpp") ||
         text::ends_with(file, ".h") || text::ends_with(file, ".cu");
}

// A line that carries one of the known phrases around an application error.
bool is_context_phrase(std::string_view s) {
  static constexpr std::array<std::string_view, 29> kContext = {
      "Traceback (most recent call last)",
      "During handling of the above exception",
      "The above exception was the direct cause",
      "CUDA kernel errors might be asynchronously reported",
      "For debugging consider passing CUDA_LAUNCH_BLOCKING",
      "Compile with `TORCH_USE_CUDA_DSA`",
      "Result = FAIL",
      "Result = PASS",
      "deviceQuery Starting",
      "CUDA Device Query (Runtime API)",
      "Detected 0 CUDA Capable device",
      "OCI runtime create",
      "runc create failed",
      "error running hook",
      "nvidia-container-cli",
      "Encountered errors while bringing up the project",
      "Error response from daemon",
      "NVML library version",
      "Make sure that the latest NVIDIA driver is installed and running",
      "torch.cuda.OutOfMemoryError",
      "ProcessGroupNCCL",
      "See documentation for Memory Management",
      "Stats:",
      "Exception raised from",
      // XLA (JAX) around its out-of-memory error: the scheduler's estimate, the allocator's
      // advice, the device list a script printed, the status's source trace.
      "exceeds the base limit (",
      "TF_GPU_ALLOCATOR=cuda_malloc_async' may improve",
      "=== Source Location Trace:",
      "[CudaDevice(id=",
      "Current allocation summary follows",
  };
  static const text::PhraseSet set(kContext, false);
  static_assert(kContext.size() <= text::PhraseSet::kMaxPhrases);
  return set.any(s);
}

// The native side of an error: ggml's report, a kernel's assertion, C++ and XLA traces.
bool is_native_trace_line(std::string_view s) {
  // ggml's report after its "CUDA error: ...": "current device: 0, in function
  // ggml_backend_cuda_synchronize at .../ggml-cuda.cu:2530", the failing call on a line of its
  // own ("cudaStreamSynchronize(cuda_ctx->stream())"), ".../ggml-cuda.cu:106: CUDA error".
  if (has(s, "current device: ") && has(s, ", in function ")) return true;
  if (const size_t call = s.rfind("  cuda"); call != std::string_view::npos &&
                                             text::ends_with(s, ")") &&
                                             s.find(' ', call + 2) == std::string_view::npos)
    return true;
  if (text::ends_with(s, ": CUDA error") && is_source_location(s.substr(0, s.size() - 12)))
    return true;
  // A kernel's failed assertion behind "device-side assert triggered":
  // "IndexKernel.cu:111: operator(): block: [0,0,0], thread: [0,0,0] Assertion `...` failed."
  if (has(s, ": block: [") && has(s, ", thread: [") && has(s, "Assertion `")) return true;
  // A C++ status trace's frames, "external/xla+/xla/.../redzone_allocator.cc:93".
  if (is_source_location(s)) return true;
  // Python 3.11+ marks the failing expression under a frame's source line: "^^^^^~~~~".
  if (s.find_first_not_of("^~") == std::string_view::npos) return true;
  // XLA's HLO dump inside its error ("%param_0.5 = f32[...] parameter(0)", "ROOT %reduce.5 =").
  if ((text::starts_with(s, "%") || text::starts_with(s, "ROOT %")) && has(s, " = ")) return true;
  return false;
}

// What a launcher says about the ranks an error ended (srun, torchrun).
bool is_launcher_line(std::string_view s) {
  // Slurm's account of the tasks an error ended: "srun: error: node-0: tasks 2-7: Exited with
  // exit code 1".
  if (text::starts_with(s, "srun: error: ") && has(s, ": Exited with exit code ")) return true;
  // torchrun's agent stopping the other ranks after one failed.
  if (has(s, "Sending process ") && has(s, " closing signal SIG")) return true;
  return false;
}

// Event Viewer's text around an nvlddmkm event.
bool is_windows_event_context(std::string_view s) {
  // Event Viewer's boilerplate around an nvlddmkm event without its message resources, the
  // event's data ("\Device\Video3", "Error occurred on GPUID: 100").
  if (text::starts_with(s, "Either the component that raises this event") ||
      text::starts_with(s, "If the event originated on another computer") ||
      text::starts_with(s, "The following information was included with the event") ||
      text::starts_with(s, "The message resource is present but") ||
      (text::starts_with(s, "\\Device\\Video") && s.size() < 24) ||
      text::starts_with(s, "Error occurred on GPUID:") ||
      text::starts_with(s, "Restarting TDR occurred on GPUID:"))
    return true;
  return false;
}

// TensorFlow's CUDA diagnostics block and its DMA header.
bool is_tensorflow_diagnostics(std::string_view s) {
  // TensorFlow's CUDA diagnostics around a failed cuInit (cuda_diagnostics.cc), and its DMA
  // matrix's header ("gpu_init.cc:112] DMA: ").
  if (has(s, "cuda_diagnostics.cc") &&
      (has(s, "retrieving CUDA diagnostic information") || has(s, "] hostname: ") ||
       has(s, "reported version is: ") || has(s, "kernel version seems to match DSO")))
    return true;
  if (has(s, "gpu_init.cc") && text::ends_with(s, "] DMA:")) return true;
  return false;
}

// A torch device a session printed.
bool is_printed_torch_device(std::string_view s) {
  // A session's printed torch device ("cuda:0", "device(type='cuda', index=0)") beside an error.
  if (text::starts_with(s, "device(type='cuda'")) return true;
  if (text::starts_with(s, "cuda:") && s.size() <= 8 &&
      s.find_first_not_of("0123456789", 5) == std::string_view::npos)
    return true;
  return false;
}

// .NET, JVM and Python stack frames.
bool is_stack_frame(std::string_view s) {
  // .NET and JVM frames: "at NS.Class.Method() in D:\src\X.cs:line 175", "at
  // com.x.Y.run(Y.java:42)".
  if (text::starts_with(s, "at ") && s.find('(') != std::string_view::npos) {
    const std::string_view name = s.substr(3, s.find('(') - 3);
    if (name.find('.') != std::string_view::npos && name.find(' ') == std::string_view::npos)
      return true;
  }
  // Python frames: '  File "train.py", line 12, in <module>'.
  return text::starts_with(s, "File \"") && has(s, "\", line ");
}

}  // namespace

bool is_app_context_line(std::string_view line) {
  const std::string_view s = text::trim(line);
  if (s.size() < 6) return false;  // shorter than every key below ("Stats:")
  if (is_routine_nccl_info(s) || is_nccl_return_trace(s)) return true;
  if (is_context_phrase(s) || is_native_trace_line(s) || is_launcher_line(s)) return true;
  // rich's boxed traceback ("╭─── Traceback (most recent call last) ───╮", "│ 989 │ return
  // self._apply(convert) │", "╰───╯"): its frames, unless a line names the GPU stack (then a
  // reader must judge it).
  if (is_rich_traceback_line(s)) return !names_gpu_stack(s);
  return is_windows_event_context(s) || is_tensorflow_diagnostics(s) ||
         is_printed_torch_device(s) || is_stack_frame(s);
}

namespace {

// "NET/Socket/3" -> "NET/Socket", "NET/IB/0/GDRDMA" -> "NET/IB", "P2P/IPC/read" -> "P2P",
// "SHM/direct/direct" -> "SHM": the transport, without its device and mode.
std::string transport_of(std::string_view via) {
  const size_t sp = via.find(' ');
  const std::string_view word = via.substr(0, sp);
  const size_t slash = word.find('/');
  if (text::starts_with(word, "NET/") || text::starts_with(word, "COLLNET/")) {
    const size_t second = word.find('/', slash + 1);
    return std::string(word.substr(0, second));
  }
  return std::string(word.substr(0, slash));
}

}  // namespace

void AppScanner::moved(const MessageMoves& to) {
  for (auto* seen : {&transports_, &settings_})
    for (auto& [fact, i] : *seen) i = to(i);
  arch_.moved(to);
  k8s_.moved(to);
}

void AppScanner::add_counted(std::vector<std::pair<std::string, size_t>>& seen, AppMessageKind kind,
                             std::string fact, std::string_view s, std::string_view origin,
                             size_t line_no, std::vector<AppMessage>& out) {
  for (auto& [name, i] : seen) {
    if (name != fact || i >= out.size()) continue;
    ++out[i].steps;
    return;
  }
  AppMessage m;
  m.kind = kind;
  m.framework = "nccl";
  m.text = std::string(s.substr(0, 240));
  m.origin = std::string(origin) + ":" + std::to_string(line_no);
  m.detail = fact;
  m.steps = 1;
  seen.emplace_back(std::move(fact), out.size());
  out.push_back(std::move(m));
}

// "NCCL INFO Channel 03/0 : 15[7] -> 6[6] [send] via NET/Socket/3" (older NCCL: "Ring 00 :
// ..."): the transport NCCL chose for a channel; summed per transport and input (a job prints
// one line per channel and rank).
bool AppScanner::take_nccl_transport(std::string_view s, std::string_view origin, size_t line_no,
                                     std::vector<AppMessage>& out) {
  size_t info = s.find("NCCL INFO Channel ");
  if (info == std::string_view::npos) info = s.find("NCCL INFO Ring ");
  if (info == std::string_view::npos) return false;
  const size_t via = s.find(" via ", info);
  if (via == std::string_view::npos) return false;
  std::string t = transport_of(s.substr(via + 5));
  if (t.empty()) return false;
  add_counted(transports_, AppMessageKind::kNcclTransport, std::move(t), s, origin, line_no, out);
  return true;
}

namespace {

// "[0]ens3:172.31.7.247<0> [1]ib0:10.0.0.1<0>" -> "ens3, ib0": the interfaces, not the
// addresses (every host prints its own).
std::string socket_interfaces(std::string_view list) {
  std::string out;
  for (size_t p = list.find(']'); p != std::string_view::npos; p = list.find(']', p + 1)) {
    const size_t colon = list.find(':', p);
    if (colon == std::string_view::npos || colon - p > 32) break;
    out += (out.empty() ? "" : ", ") + std::string(list.substr(p + 1, colon - p - 1));
  }
  return out;
}

// The fact an NCCL INFO configuration line states, or "" when it states none.
std::string nccl_setting_of(std::string_view m) {
  if (const size_t env = m.find(" set by environment to ");
      text::starts_with(m, "NCCL_") && env != std::string_view::npos) {
    std::string_view v = text::trim(m.substr(env + 23));
    if (!v.empty() && v.back() == '.') v.remove_suffix(1);
    return std::string(m.substr(0, env)) + "=" + std::string(v);
  }
  if (text::starts_with(m, "Using network "))
    return "network=" + std::string(text::trim(m.substr(14)));
  if (text::starts_with(m, "NET/IB : No device found")) return "NET/IB: no device";
  // "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ib0:..." (an empty list, only the
  // relaxed-ordering flag "[RO]", is no device).
  if (text::starts_with(m, "NET/IB : Using ")) {
    const std::string_view list = m.substr(15, m.find(';') - std::min(m.find(';'), size_t{15}));
    const std::string devs = socket_interfaces(list);
    return devs.empty() ? "NET/IB: no device" : "IB devices=" + devs;
  }
  if (text::starts_with(m, "Failed to initialize NET plugin "))
    return "NET plugin " + std::string(text::trim(m.substr(32))) + ": not initialised";
  if (text::starts_with(m, "NET/Socket : Using ")) {
    const std::string ifs = socket_interfaces(m.substr(19));
    return ifs.empty() ? "" : "socket interface=" + ifs;
  }
  return {};
}

}  // namespace

// NCCL_DEBUG=INFO lines that state its configuration: "NCCL_P2P_DISABLE set by environment to
// 1.", "Using network Socket", "NET/IB : No device found.", "NET/Socket : Using [0]eth0:...".
bool AppScanner::take_nccl_setting(std::string_view s, std::string_view origin, size_t line_no,
                                   std::vector<AppMessage>& out) {
  const size_t info = s.find("NCCL INFO ");
  if (info == std::string_view::npos) return false;
  std::string fact = nccl_setting_of(text::trim(s.substr(info + 10)));
  if (fact.empty()) return false;
  add_counted(settings_, AppMessageKind::kNcclSetting, std::move(fact), s, origin, line_no, out);
  return true;
}

bool AppScanner::take_hook_cause(std::string_view s, std::string_view origin, size_t line_no,
                                 std::vector<AppMessage>& out) {
  if (hook_line_ == 0 || line_no != hook_line_ + 1 || s.empty()) return false;
  const auto cause = container_cli_cause(hook_text_);
  if (!cause || !cause->empty()) return false;  // the hook line carried its own cause
  AppMessage m;
  m.kind = AppMessageKind::kContainerHookFailed;
  m.framework = "nvidia-container-toolkit";
  m.text = hook_text_ + " " + std::string(s.substr(0, 200));
  m.origin = std::string(origin) + ":" + std::to_string(line_no);
  m.detail = std::string(trim_hook_cause(s).substr(0, 200));
  out.push_back(std::move(m));
  return true;
}

// TensorFlow's BFC allocator prints "bfc_allocator.cc:680] Stats:" and then one figure a line
// ("Limit:        10625279591", "InUse:  7350513920", ...), around its OOM message: the limit
// and what is in use are that message's total and allocated memory.
bool AppScanner::take_bfc_stats(std::string_view s, std::vector<AppMessage>& out) {
  if (text::ends_with(s, "] Stats:") && s.find("bfc_allocator") != std::string_view::npos) {
    in_bfc_stats_ = true;
    bfc_limit_.reset();
    bfc_in_use_.reset();
    return true;
  }
  if (!in_bfc_stats_) return false;
  const size_t colon = s.find(':');
  const std::string_view key = s.substr(0, colon == std::string_view::npos ? 0 : colon);
  size_t used = 0;
  const std::string_view value =
      colon == std::string_view::npos ? "" : text::trim(s.substr(colon + 1));
  const uint64_t n = text::leading_digits(value, used);
  if (key.empty() || used == 0 || used != value.size() || key.find(' ') != std::string_view::npos) {
    in_bfc_stats_ = false;
    return false;
  }
  if (key == "Limit") bfc_limit_ = n;
  if (key == "InUse") bfc_in_use_ = n;
  if (bfc_limit_ && bfc_in_use_)
    for (auto it = out.rbegin(); it != out.rend(); ++it)
      if (it->kind == AppMessageKind::kCudaOutOfMemory && it->framework == "tensorflow") {
        give_bfc_stats(*it);
        break;
      }
  return true;
}

void AppScanner::give_bfc_stats(AppMessage& m) const {
  if (!bfc_limit_ || !bfc_in_use_ || m.total_bytes || *bfc_in_use_ > *bfc_limit_) return;
  m.total_bytes = bfc_limit_;
  m.allocated_bytes = bfc_in_use_;
  m.free_bytes = *bfc_limit_ - *bfc_in_use_;
}

namespace {

// Python's last line of a traceback: "IndexError: list index out of range", "KeyboardInterrupt",
// "torch.distributed.DistBackendError: ..." (a dotted exception name, then ": " or nothing).
bool ends_traceback(std::string_view s) {
  size_t i = 0;
  while (i < s.size() &&
         (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_' || s[i] == '.'))
    ++i;
  const std::string_view name = s.substr(0, i);
  if (name.empty() || !(i == s.size() || s.substr(i, 2) == ": ")) return false;
  for (std::string_view end : {"Error", "Exception", "Interrupt", "Exit"})
    if (text::ends_with(name, end)) return true;
  return false;
}

}  // namespace

// A context line is read when a message is near it: within kContextReach lines after a
// message (the "CUDA kernel errors might be asynchronously reported" after the error), or
// with one within kContextReach lines after it (a traceback's frames before its error).
bool AppScanner::take(std::string_view line, std::string_view origin, size_t line_no,
                      std::vector<AppMessage>& out) {
  context_only_ = false;
  last_pending_ = false;
  const bool read = take_line(line, origin, line_no, out);
  release_context_before(line_no > kContextReach ? line_no - kContextReach : 0);
  if (!read) {
    // A traceback that ends in an exception no reader knows keeps its frames: they are that
    // exception's, not context of a message further on.
    if (ends_traceback(text::trim(line))) release_context_before(line_no);
    return false;
  }
  if (!context_only_) {
    pending_context_.clear();  // every one left is within reach before this message
    last_backing_line_ = line_no;
    return true;
  }
  // A traceback right after a message is that error's (TensorFlow logs the error, then raises
  // it); one further on begins another error's context, to be backed by what ends it.
  constexpr size_t kTracebackAfter = 5;
  if (line.find("Traceback (most recent call last)") != std::string_view::npos &&
      line_no > last_backing_line_ + kTracebackAfter)
    last_backing_line_ = 0;
  if (last_backing_line_ > 0 && line_no <= last_backing_line_ + kContextReach) return true;
  if (pending_context_.size() >= kMaxPendingContext) {
    const auto& [no, text] = pending_context_.front();
    if (on_unbacked_) on_unbacked_(no, text);
    pending_context_.pop_front();
  }
  constexpr size_t kKept = 512;  // enough to name the GPU stack; the listing shows 160
  pending_context_.emplace_back(line_no, std::string(text::trim(line).substr(0, kKept)));
  last_pending_ = true;
  return true;
}

void AppScanner::release_context_before(size_t line_no) {
  while (!pending_context_.empty() && pending_context_.front().first < line_no) {
    const auto& [no, text] = pending_context_.front();
    if (on_unbacked_) on_unbacked_(no, text);
    pending_context_.pop_front();
  }
}

void AppScanner::finish(std::vector<AppMessage>& out) {
  k8s_.finish(out);
  release_context_before(SIZE_MAX);
}

// A CUDA version named by the program's path ("NVIDIA_CUDA-7.0_Samples", "cuda-12.4/bin"): the
// runtime a later "driver version is insufficient" is about.
void AppScanner::note_cuda_hint(std::string_view s) {
  for (std::string_view key : {"CUDA-", "cuda-"}) {
    const size_t p = s.find(key);
    if (p == std::string_view::npos) continue;
    std::string_view v = s.substr(p + key.size());
    size_t n = 0;
    while (n < v.size() && (is_digit(v[n]) || v[n] == '.')) ++n;
    if (n >= 3 && v.substr(0, n).find('.') != std::string_view::npos)
      cuda_hint_ = std::string(v.substr(0, n));
  }
}

// A program's own report on GPU memory, read whole: vLLM's start-up profile, HAMi-core's lines;
// the out-of-memory message either gives is kept.
bool AppScanner::take_memory_report(std::string_view s, std::string_view origin, size_t line_no,
                                    std::vector<AppMessage>& out) {
  std::optional<AppMessage> m;
  if (!vllm_memory_line(s, m)) {
    auto h = parse_hami_core_line(s);
    if (!h) return false;
    m = std::move(h->message);
  }
  if (m) {
    if (m->text.empty()) m->text = std::string(s.substr(0, 240));
    m->origin = std::string(origin) + ":" + std::to_string(line_no);
    out.push_back(std::move(*m));
  }
  return true;
}

// A message line: joined to the previous one when it explains it, else appended.
void AppScanner::take_message(AppMessage m, std::string_view s, std::string_view origin,
                              size_t line_no, std::vector<AppMessage>& out) {
  // Named here, not before: most lines are not messages and need no string built.
  m.origin = std::string(origin) + ":" + std::to_string(line_no);
  if (m.kind == AppMessageKind::kDriverInsufficient && !m.cuda_runtime_version)
    m.cuda_runtime_version = cuda_hint_;
  if (hook_line_ > 0 && line_no <= hook_line_ + 2 && m.detail.empty()) {
    m.detail = hook_text_;
    m.framework = "docker";
  }
  // deviceQuery prints "returned 35" then "-> CUDA driver version is insufficient ...":
  // one error, not two.
  const bool explains_previous =
      text::starts_with(s, "->") ||
      (!out.empty() && out.back().text.find(" returned ") != std::string::npos);
  if (explains_previous && last_kind_ && *last_kind_ == m.kind && line_no <= last_line_ + 2 &&
      !out.empty()) {
    AppMessage& prev = out.back();
    if (!prev.cuda_error_code) prev.cuda_error_code = m.cuda_error_code;
    if (prev.detail.empty()) prev.detail = m.text;
    // One explanation per message: the next error (another program's, in a paste) is its own.
    last_kind_.reset();
    return;
  }
  last_kind_ = m.kind;
  last_line_ = line_no;
  if (m.kind == AppMessageKind::kCudaOutOfMemory && m.framework == "tensorflow") give_bfc_stats(m);
  out.push_back(std::move(m));
}

bool AppScanner::take_line(std::string_view line, std::string_view origin, size_t line_no,
                           std::vector<AppMessage>& out) {
  const std::string_view s = text::trim(line);
  if (take_bfc_stats(s, out)) return true;
  note_cuda_hint(s);
  // Before the generic phrases: "CUDA error: no kernel image is available ..." is this, not
  // another CUDA error.
  if (arch_.take(s, origin, line_no, out) || fabric_manager_.take(s, origin, line_no, out)) {
    return true;
  }
  if (take_memory_report(s, origin, line_no, out)) return true;
  if (auto m = parse_app_message_line(s, origin)) {
    take_message(std::move(*m), s, origin, line_no, out);
    return true;
  }
  if (take_nccl_transport(s, origin, line_no, out)) return true;
  if (take_nccl_setting(s, origin, line_no, out)) return true;
  if (take_hook_cause(s, origin, line_no, out)) return true;
  if (k8s_.take(s, origin, line_no, out)) return true;
  if (slurm_.take(s, origin, line_no, out)) return true;
  if (is_app_context_line(s)) {
    if (has(s, "nvidia-container-cli") || has(s, "error running hook")) {
      hook_text_ = std::string(s.substr(0, 240));
      hook_line_ = line_no;
    }
    if (text::starts_with(s, "File \"")) frame_line_ = line_no;
    // Routine NCCL INFO lines say on their own that nothing is wrong; the rest is context.
    context_only_ = !is_routine_nccl_info(s);
    return true;
  }
  // The source line under a traceback frame ("    model.cuda()"): part of the traceback. The
  // line comes trimmed, so it is known by following a frame, not by its indent.
  if (frame_line_ > 0 && line_no == frame_line_ + 1 && !s.empty()) {
    context_only_ = true;
    return true;
  }
  // "RuntimeError: ...", "torch.OutOfMemoryError: ..." without a phrase we know: an error
  // line of the program, understood as such (not shown as a finding).
  return false;
}

}  // namespace gw
