// The fake CUDA driver's one state object: the scenario's "cuda" section, the devices of the
// scenario, allocations, streams and events, and the link to the fake NVML in the same
// process. Copies and kernels take scenario time: each stream has a cursor (scenario seconds)
// that an operation advances by bytes / bandwidth (or the kernel's time); synchronising waits,
// in real time, until scenario time reaches the cursor. Events read the cursor, so measured
// bandwidth is the scripted one whatever GPUWARDEN_FAKE_TIME_SCALE is.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sources/cuda/cuda_types.h"
#include "sources/nvml/scenario.h"

namespace gwfakecuda {

using namespace gw::cuda;  // NOLINT: CUresult values and handle types

struct Stream {
  int dev = 0;
  double cursor = 0;  // scenario seconds when the last queued operation ends
};
struct Event {
  double at = -1;  // scenario seconds; -1 = never recorded
};
struct Device {
  gw::nvml::ScenarioGpu gpu;
  gw::nvml::CudaDeviceScript script;
  double busy_until[2] = {0, 0};  // per copy direction (0 = to device, 1 = to host)
  size_t allocated = 0;
  std::vector<int> peers_enabled;
  bool loaded = false;
};

class FakeCuda {
 public:
  static FakeCuda& instance();

  // gwfake_cuda_attach: the fake NVML library (same path as loaded) and the scenario.
  int attach(const char* nvml_path, const char* scenario_path);
  const char* last_error() const { return last_error_.c_str(); }

  CUresult init();
  CUresult count(int* n);
  CUresult check_device(int dev);  // INVALID_DEVICE, or the GPU's NVML error as a CUDA one
  const Device& device(int dev) const { return devs_.at(static_cast<size_t>(dev)); }
  CUresult bus_id(int dev, char* out, int len);
  CUresult by_bus_id(int* dev, const char* bus);

  CUresult alloc(CUdeviceptr* p, size_t n);
  CUresult free(CUdeviceptr p);
  CUresult mem_info(size_t* free_b, size_t* total_b);
  CUresult copy(CUdeviceptr dptr, size_t n, CUstream s, int dir);
  CUresult peer_copy(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s);
  CUresult can_access(int* out, int a, int b);
  CUresult enable_peer(CUcontext peer);
  CUresult launch(CUstream s);
  CUresult stream_create(CUstream* s);
  CUresult stream_destroy(CUstream s);
  CUresult sync(CUstream s);
  CUresult event_create(CUevent* e);
  CUresult event_destroy(CUevent e);
  CUresult record(CUevent e, CUstream s);
  CUresult event_sync(CUevent e);
  CUresult elapsed(float* ms, CUevent a, CUevent b);

  static CUcontext ctx_of(int dev);
  static int dev_of(CUcontext c);
  static int& current();  // this thread's current device (-1 = none)

 private:
  FakeCuda() = default;
  double now();
  double link_gb_s(int dev, int dir);
  double pair_gb_s(int a, int b);
  void wait_until(double t);
  Stream* stream(CUstream s);
  int owner(CUdeviceptr p) const;

  std::mutex m_;
  bool attached_ = false;
  bool initialised_ = false;
  gw::nvml::CudaScript script_;
  std::vector<Device> devs_;
  std::map<CUdeviceptr, size_t> allocs_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<std::unique_ptr<Event>> events_;
  CUdeviceptr next_ptr_ = 0x10000;
  double scale_ = 1;
  double (*nvml_now_)() = nullptr;
  void (*nvml_load_started_)(unsigned) = nullptr;
  int (*nvml_link_)(unsigned, unsigned*, unsigned*) = nullptr;
  std::string last_error_;
};

}  // namespace gwfakecuda
