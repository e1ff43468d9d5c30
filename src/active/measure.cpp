#include "active/measure.h"

#include <algorithm>
#include <vector>

#include "active/ptx_kernel.h"

namespace gw::active {
namespace {

using namespace gw::cuda;  // NOLINT: CUresult values

// What one measurement allocated; released in reverse on every path out.
struct Scope {
  Calls& c;
  std::vector<CUdeviceptr> dev;
  std::vector<void*> host;
  std::vector<CUstream> streams;
  std::vector<CUevent> events;
  explicit Scope(Calls& calls) : c(calls) {}
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  ~Scope() {
    const CudaApi& a = c.api();
    for (CUevent e : events) (void)c(a.event_destroy, e);
    for (CUstream s : streams) (void)c(a.stream_destroy, s);
    for (void* h : host) (void)c(a.mem_free_host, h);
    for (CUdeviceptr d : dev) (void)c(a.mem_free, d);
  }
};

#define GW_TRY(sym, ...)                                                           \
  do {                                                                             \
    if (CUresult r_ = c(sym, __VA_ARGS__); r_ != kSuccess) return c.fail(sym, r_); \
  } while (0)

Failure alloc_all(Scope& s, size_t bytes, int dev_bufs, int host_bufs, int streams, int events) {
  Calls& c = s.c;
  const CudaApi& a = c.api();
  for (int i = 0; i < dev_bufs; ++i) {
    CUdeviceptr p = 0;
    GW_TRY(a.mem_alloc, &p, bytes);
    s.dev.push_back(p);
  }
  for (int i = 0; i < host_bufs; ++i) {
    void* p = nullptr;
    GW_TRY(a.mem_host_alloc, &p, bytes, kMemHostAllocPortable);
    s.host.push_back(p);
  }
  for (int i = 0; i < streams; ++i) {
    CUstream st = nullptr;
    GW_TRY(a.stream_create, &st, kStreamNonBlocking);
    s.streams.push_back(st);
  }
  for (int i = 0; i < events; ++i) {
    CUevent e = nullptr;
    GW_TRY(a.event_create, &e, kEventDefault);
    s.events.push_back(e);
  }
  return std::nullopt;
}

// Milliseconds from event a to event b, after b completed.
Failure elapsed(Calls& c, CUevent a, CUevent b, float& ms) {
  GW_TRY(c.api().event_synchronize, b);
  GW_TRY(c.api().event_elapsed, &ms, a, b);
  return std::nullopt;
}

double gb_s(double bytes, float ms) {
  return ms > 0 ? bytes / (static_cast<double>(ms) * 1e6) : 0;
}

// `reps` copies in one direction on stream 0, between events 0 and 1.
Failure one_way(Scope& s, size_t bytes, int reps, bool to_device, std::optional<double>& out) {
  Calls& c = s.c;
  const CudaApi& a = c.api();
  GW_TRY(a.event_record, s.events[0], s.streams[0]);
  for (int i = 0; i < reps; ++i) {
    if (to_device)
      GW_TRY(a.memcpy_htod_async, s.dev[0], s.host[0], bytes, s.streams[0]);
    else
      GW_TRY(a.memcpy_dtoh_async, s.host[0], s.dev[0], bytes, s.streams[0]);
  }
  GW_TRY(a.event_record, s.events[1], s.streams[0]);
  float ms = 0;
  if (Failure f = elapsed(c, s.events[0], s.events[1], ms)) return f;
  out = gb_s(static_cast<double>(bytes) * reps, ms);
  return std::nullopt;
}

// Both directions at once: to the device on stream 0, to the host on stream 1, interleaved.
Failure both_ways(Scope& s, size_t bytes, int reps, std::optional<double>& out) {
  Calls& c = s.c;
  const CudaApi& a = c.api();
  GW_TRY(a.event_record, s.events[0], s.streams[0]);
  GW_TRY(a.event_record, s.events[2], s.streams[1]);
  for (int i = 0; i < reps; ++i) {
    GW_TRY(a.memcpy_htod_async, s.dev[0], s.host[0], bytes, s.streams[0]);
    GW_TRY(a.memcpy_dtoh_async, s.host[1], s.dev[1], bytes, s.streams[1]);
  }
  GW_TRY(a.event_record, s.events[1], s.streams[0]);
  GW_TRY(a.event_record, s.events[3], s.streams[1]);
  float end0 = 0, end1 = 0, start1 = 0;
  if (Failure f = elapsed(c, s.events[0], s.events[1], end0)) return f;
  if (Failure f = elapsed(c, s.events[0], s.events[3], end1)) return f;
  if (Failure f = elapsed(c, s.events[0], s.events[2], start1)) return f;
  const float span = std::max(end0, end1) - std::min(0.0f, start1);
  out = gb_s(2.0 * static_cast<double>(bytes) * reps, span);
  return std::nullopt;
}

}  // namespace

Failure measure_copies(Calls& c, size_t bytes, int reps, CopyFigures& out) {
  Scope s(c);
  if (Failure f = alloc_all(s, bytes, 2, 2, 2, 4)) return f;
  if (Failure f = one_way(s, bytes, reps, true, out.h2d_gb_s)) return f;
  if (Failure f = one_way(s, bytes, reps, false, out.d2h_gb_s)) return f;
  return both_ways(s, bytes, reps, out.bidir_gb_s);
}

Failure measure_peer(Calls& c, const CudaDevice& from, const CudaDevice& to, size_t bytes, int reps,
                     PeerFigures& out) {
  const CudaApi& a = c.api();
  // The destination buffer lives in the other device's context.
  CUdeviceptr dst = 0;
  GW_TRY(a.ctx_set_current, to.ctx);
  const CUresult ra = c(a.mem_alloc, &dst, bytes);
  GW_TRY(a.ctx_set_current, from.ctx);
  if (ra != kSuccess) return c.fail(a.mem_alloc, ra);
  Scope s(c);
  struct FreeOther {
    Calls& c;
    CUcontext ctx, back;
    CUdeviceptr p;
    ~FreeOther() {
      (void)c(c.api().ctx_set_current, ctx);
      (void)c(c.api().mem_free, p);
      (void)c(c.api().ctx_set_current, back);
    }
  } free_other{c, to.ctx, from.ctx, dst};
  if (Failure f = alloc_all(s, bytes, 1, 0, 1, 2)) return f;
  int can = 0;
  if (a.can_access_peer && c(a.can_access_peer, &can, from.ordinal, to.ordinal) == kSuccess &&
      can != 0) {
    const CUresult r = c(a.ctx_enable_peer_access, to.ctx, 0u);
    out.access = r == kSuccess || r == kPeerAccessAlreadyEnabled;
  }
  GW_TRY(a.event_record, s.events[0], s.streams[0]);
  for (int i = 0; i < reps; ++i)
    GW_TRY(a.memcpy_peer_async, dst, to.ctx, s.dev[0], from.ctx, bytes, s.streams[0]);
  GW_TRY(a.event_record, s.events[1], s.streams[0]);
  float ms = 0;
  if (Failure f = elapsed(c, s.events[0], s.events[1], ms)) return f;
  out.gb_s = gb_s(static_cast<double>(bytes) * reps, ms);
  return std::nullopt;
}

Failure load_setup(Calls& c, int ordinal, double share, size_t cap, LoadState& s) {
  const CudaApi& a = c.api();
  size_t free_b = 0, total_b = 0;
  GW_TRY(a.mem_get_info, &free_b, &total_b);
  // Bounded: a share of what is free, a whole number of floats, within 32-bit indexing.
  size_t bytes = std::min(static_cast<size_t>(static_cast<double>(free_b) * share), cap);
  bytes = std::min<size_t>(bytes, size_t{4} * 0x7FFFFFFF) & ~size_t{3};
  if (bytes < 4096)
    return std::string("too little free device memory for the load (") + std::to_string(free_b) +
           " bytes free)";
  GW_TRY(a.module_load_data, &s.module, static_cast<const void*>(load_kernel_ptx()));
  GW_TRY(a.module_get_function, &s.fn, s.module, kLoadKernelName);
  GW_TRY(a.stream_create, &s.stream, kStreamNonBlocking);
  GW_TRY(a.mem_alloc, &s.buf, bytes);
  if (a.memset_d32) GW_TRY(a.memset_d32, s.buf, 0x3F800000u, bytes / 4);
  s.elements = static_cast<unsigned>(bytes / 4);
  int sms = 0;
  if (c(a.device_attribute, &sms, kAttrMultiprocessorCount, ordinal) != kSuccess || sms <= 0)
    sms = 16;
  s.blocks = static_cast<unsigned>(sms) * 4;
  return std::nullopt;
}

Failure load_chunk(Calls& c, const LoadState& s, int launches) {
  const CudaApi& a = c.api();
  CUdeviceptr buf = s.buf;
  unsigned n = s.elements;
  unsigned iters = 64;
  void* params[] = {&buf, &n, &iters};
  for (int i = 0; i < launches; ++i)
    GW_TRY(a.launch_kernel, s.fn, s.blocks, 1u, 1u, 256u, 1u, 1u, 0u, s.stream, params, nullptr);
  GW_TRY(a.stream_synchronize, s.stream);
  return std::nullopt;
}

void load_teardown(Calls& c, const LoadState& s) {
  const CudaApi& a = c.api();
  if (s.buf != 0) (void)c(a.mem_free, s.buf);
  if (s.stream != nullptr) (void)c(a.stream_destroy, s.stream);
  if (s.module != nullptr) (void)c(a.module_unload, s.module);
}

}  // namespace gw::active
