#include "fake-cuda/fake_cuda.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/event.h"
#include "sources/input_file.h"
#include "sources/nvml/nvml_types.h"

namespace gwfakecuda {
namespace {

constexpr int kToDevice = 0;
constexpr int kToHost = 1;

// Per-lane, per-direction PCIe payload GB/s by generation (encoding overhead included), the
// same public figures gpuwarden's report uses.
double lane_gb_s(unsigned gen) {
  static constexpr double kLane[] = {0.0, 0.25, 0.5, 0.9846, 1.969, 3.938, 7.56};
  return gen < std::size(kLane) ? kLane[gen] : 0.0;
}

bool has_active_nvlink(const gw::nvml::ScenarioGpu& g) {
  const auto& links = g.state.sample.nvlinks;
  return std::any_of(links.begin(), links.end(), [](const gw::NvLinkInfo& l) { return l.active; });
}

}  // namespace

FakeCuda& FakeCuda::instance() {
  static FakeCuda* fake = new FakeCuda();  // never destroyed, like a driver's state
  return *fake;
}

int& FakeCuda::current() {
  thread_local int dev = -1;
  return dev;
}

// Context handles are tags: device index + 1, never dereferenced.
CUcontext FakeCuda::ctx_of(int dev) {
  return reinterpret_cast<CUcontext>(static_cast<uintptr_t>(dev + 1) << 4);
}
int FakeCuda::dev_of(CUcontext c) {
  return static_cast<int>(reinterpret_cast<uintptr_t>(c) >> 4) - 1;
}

int FakeCuda::attach(const char* nvml_path, const char* scenario_path) {
  std::lock_guard lk(m_);
  // The same path as the loader used: dlopen hands back the copy already loaded, so both
  // fakes share one scenario clock.
  void* nvml = dlopen(nvml_path != nullptr ? nvml_path : "", RTLD_NOW | RTLD_LOCAL);
  if (nvml == nullptr) {
    last_error_ = std::string("cannot open the fake NVML: ") + dlerror();
    return 1;
  }
  nvml_now_ = reinterpret_cast<double (*)()>(dlsym(nvml, "gwfake_now"));
  nvml_load_started_ = reinterpret_cast<void (*)(unsigned)>(dlsym(nvml, "gwfake_load_started"));
  nvml_link_ =
      reinterpret_cast<int (*)(unsigned, unsigned*, unsigned*)>(dlsym(nvml, "gwfake_link"));
  if (!nvml_now_ || !nvml_load_started_ || !nvml_link_) {
    last_error_ = std::string(nvml_path) + " is not the fake NVML (no gwfake_now/_link hooks)";
    return 1;
  }
  auto text = gw::read_input(scenario_path != nullptr ? scenario_path : "");
  if (!text) {
    last_error_ = "cannot read scenario file " + text.error().to_string();
    return 1;
  }
  auto sc = gw::nvml::parse_scenario(text->text(), scenario_path);
  if (!sc) {
    last_error_ = sc.error().to_string();
    return 1;
  }
  auto cs = gw::nvml::parse_cuda_script(*sc, scenario_path);
  if (!cs) {
    last_error_ = cs.error().to_string();
    return 1;
  }
  script_ = *cs;
  devs_.clear();
  for (size_t i = 0; i < sc->gpus.size(); ++i) {
    Device d;
    d.gpu = sc->gpus[i];
    d.script.gpu = static_cast<unsigned>(i);
    for (const auto& s : script_.devices)
      if (s.gpu == i) d.script = s;
    devs_.push_back(std::move(d));
  }
  const char* scale = std::getenv("GPUWARDEN_FAKE_TIME_SCALE");
  scale_ = scale != nullptr ? std::strtod(scale, nullptr) : 1.0;
  if (!(scale_ > 0)) scale_ = 1.0;
  attached_ = true;
  initialised_ = false;
  return 0;
}

CUresult FakeCuda::init() {
  std::lock_guard lk(m_);
  if (!attached_) return kNoDevice;  // nothing to play: like a machine without GPUs
  if (script_.init_error) return *script_.init_error;
  initialised_ = true;
  return kSuccess;
}

CUresult FakeCuda::count(int* n) {
  std::lock_guard lk(m_);
  if (!initialised_) return kNotInitialized;
  if (n == nullptr) return kInvalidValue;
  *n = static_cast<int>(devs_.size());
  return kSuccess;
}

CUresult FakeCuda::check_device(int dev) {
  std::lock_guard lk(m_);
  if (!initialised_) return kNotInitialized;
  if (dev < 0 || static_cast<size_t>(dev) >= devs_.size()) return kInvalidDevice;
  unsigned gen = 0, width = 0;
  return nvml_link_(static_cast<unsigned>(dev), &gen, &width) == 0 ? kSuccess : kUnknown;
}

CUresult FakeCuda::bus_id(int dev, char* out, int len) {
  if (CUresult r = check_device(dev); r != kSuccess) return r;
  // CUDA writes a 4-digit domain: "0000:18:00.0".
  std::string id = devs_[static_cast<size_t>(dev)].gpu.state.info.pci_bus_id;
  if (id.size() > 12) id = id.substr(id.size() - 12);
  if (out == nullptr || len <= 0 || id.size() + 1 > static_cast<size_t>(len)) return kInvalidValue;
  std::memcpy(out, id.c_str(), id.size() + 1);
  return kSuccess;
}

CUresult FakeCuda::by_bus_id(int* dev, const char* bus) {
  const auto want = gw::normalize_pci_bus_id(bus != nullptr ? bus : "");
  std::lock_guard lk(m_);
  if (!initialised_) return kNotInitialized;
  for (size_t i = 0; want && i < devs_.size(); ++i) {
    if (gw::normalize_pci_bus_id(devs_[i].gpu.state.info.pci_bus_id) == want) {
      *dev = static_cast<int>(i);
      return kSuccess;
    }
  }
  return kInvalidDevice;
}

double FakeCuda::now() {
  return nvml_now_();
}

// Waits (real time) until scenario time reaches `t`; bounded in real time, so a clock that
// stands still (NVML shut down, a pinned test clock) cannot hang the caller.
void FakeCuda::wait_until(double t) {
  const double first = t - now();
  const auto bound = std::chrono::steady_clock::now() +
                     std::chrono::duration<double>(std::max(first, 0.0) / scale_ + 2.0);
  for (;;) {
    const double left = t - now();
    if (left <= 0 || std::chrono::steady_clock::now() > bound) return;
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(left / scale_, 0.05)));
  }
}

// A copy's GB/s: the scripted figure, else what the link the NVML reports now carries.
double FakeCuda::link_gb_s(int dev, int dir) {
  const Device& d = devs_[static_cast<size_t>(dev)];
  const auto& scripted = dir == kToDevice ? d.script.h2d_gb_s : d.script.d2h_gb_s;
  if (scripted) return *scripted;
  unsigned gen = 0, width = 0;
  if (nvml_link_(static_cast<unsigned>(dev), &gen, &width) != 0 || gen == 0 || width == 0)
    return 1.0;
  return lane_gb_s(gen) * width * script_.efficiency;
}

double FakeCuda::pair_gb_s(int a, int b) {
  for (const auto& p : script_.peers) {
    if (!((p.a == static_cast<unsigned>(a) && p.b == static_cast<unsigned>(b)) ||
          (p.a == static_cast<unsigned>(b) && p.b == static_cast<unsigned>(a))))
      continue;
    if (p.gb_s) return *p.gb_s;
    // No peer access: the driver stages the copy through host memory.
    if (!p.access) return std::min(link_gb_s(a, kToHost), link_gb_s(b, kToDevice)) / 2;
  }
  if (has_active_nvlink(devs_[static_cast<size_t>(a)].gpu) &&
      has_active_nvlink(devs_[static_cast<size_t>(b)].gpu))
    return script_.nvlink_peer_gb_s;
  if (script_.pcie_peer_gb_s > 0) return script_.pcie_peer_gb_s;
  return std::min(link_gb_s(a, kToHost), link_gb_s(b, kToDevice));
}

}  // namespace gwfakecuda
