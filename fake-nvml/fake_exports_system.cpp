// Init, enumeration, system queries, nvmlErrorString and the gwfake_* controls.
#include <array>

#include "fake-nvml/fake_exports.h"

using namespace gwfake;  // NOLINT

namespace {

struct ErrorText {
  int code;
  const char* text;
};
constexpr std::array<ErrorText, 16> kErrorTexts = {{{0, "Success"},
                                                    {1, "Uninitialized"},
                                                    {2, "Invalid Argument"},
                                                    {3, "Not Supported"},
                                                    {4, "Insufficient Permissions"},
                                                    {6, "Not Found"},
                                                    {7, "Insufficient Size"},
                                                    {9, "Driver Not Loaded"},
                                                    {10, "Timeout"},
                                                    {12, "Library Not Found"},
                                                    {13, "Function Not Found"},
                                                    {15, "GPU is lost"},
                                                    {16, "GPU requires reset"},
                                                    {18, "Driver/library version mismatch"},
                                                    {25, "Argument version mismatch"},
                                                    {999, "Unknown Error"}}};

}  // namespace

GWFAKE_API int gwfake_load_scenario(const char* path) {
  return fake().load(path);
}
GWFAKE_API const char* gwfake_last_error() {
  return fake().last_error();
}
GWFAKE_API const char* gwfake_hostname() {
  return fake().hostname();
}
GWFAKE_API void gwfake_set_time(double seconds) {
  fake().set_time(seconds);
}
GWFAKE_API int gwfake_set_device(unsigned index, const char* fields_json) {
  return fake().set_device(index, fields_json);
}
GWFAKE_API unsigned long long gwfake_device_calls() {
  return fake().device_calls();
}

GWFAKE_API const char* nvmlErrorString(nvmlReturn_t r) {
  for (const auto& e : kErrorTexts)
    if (e.code == r) return e.text;
  return "Unknown Error";
}

GWFAKE_API nvmlReturn_t nvmlInit() {
  return fake().init();
}
GWFAKE_API nvmlReturn_t nvmlShutdown() {
  return fake().shutdown();
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetCount(unsigned* n) {
  return fake().count(n);
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned i, nvmlDevice_t* d) {
  return fake().handle(i, d, __func__);
}
#ifndef GWFAKE_OLD_DRIVER
GWFAKE_API nvmlReturn_t nvmlInit_v2() {
  return fake().init();
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* n) {
  return fake().count(n);
}
GWFAKE_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t* d) {
  return fake().handle(i, d, __func__);
}
#endif

GWFAKE_API nvmlReturn_t nvmlSystemGetDriverVersion(char* out, unsigned len) {
  return fake().system([&](FakeNvml& f) -> nvmlReturn_t {
    return put_string(f.scenario().driver_version, out, len);
  });
}
GWFAKE_API nvmlReturn_t nvmlSystemGetNVMLVersion(char* out, unsigned len) {
  return fake().system(
      [&](FakeNvml& f) -> nvmlReturn_t { return put_string(f.scenario().nvml_version, out, len); });
}

namespace {
nvmlReturn_t cuda_version(int* v) {
  return fake().system([&](FakeNvml& f) -> nvmlReturn_t {
    if (!f.scenario().cuda_driver_version) return kNotSupported;
    if (v == nullptr) return kInvalidArgument;
    *v = *f.scenario().cuda_driver_version;
    return kSuccess;
  });
}
}  // namespace

GWFAKE_API nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* v) {
  return cuda_version(v);
}
#ifndef GWFAKE_OLD_DRIVER
GWFAKE_API nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) {
  return cuda_version(v);
}
#endif

GWFAKE_API nvmlReturn_t nvmlSystemGetProcessName(unsigned pid, char* out, unsigned len) {
  return fake().system([&](FakeNvml& f) -> nvmlReturn_t {
    for (const GpuRuntime& g : f.gpus()) {
      if (!smp(g).processes) continue;
      for (const auto& p : *smp(g).processes)
        if (p.pid == pid) return p.name ? put_string(p.name, out, len) : kNotFound;
    }
    return kNotFound;
  });
}

// Hooks for the fake CUDA driver (fake-cuda/), looked up with dlsym on this library.
GWFAKE_API double gwfake_now() {
  return fake().scenario_now();
}
GWFAKE_API void gwfake_load_started(unsigned gpu) {
  fake().load_started(gpu);
}
GWFAKE_API int gwfake_link(unsigned gpu, unsigned* gen, unsigned* width) {
  return fake().link(gpu, gen, width);
}
