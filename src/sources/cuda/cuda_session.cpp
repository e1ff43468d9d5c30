#include "sources/cuda/cuda_session.h"

#include <fmt/format.h>

#include "core/event.h"

namespace gw::cuda {
namespace {

Status attach_fake(const CudaLibrary& lib, const CudaSessionOptions& o) {
  using Attach = int (*)(const char*, const char*);
  using LastError = const char* (*)();
  auto attach = reinterpret_cast<Attach>(lib.extra_symbol("gwfake_cuda_attach"));
  auto last = reinterpret_cast<LastError>(lib.extra_symbol("gwfake_cuda_last_error"));
  if (attach == nullptr)
    return make_error("cuda.not_fake", "a scenario needs the fake CUDA driver, and " + lib.path() +
                                           " is not it (no gwfake_cuda_attach)");
  if (attach(o.fake_nvml_path->c_str(), o.scenario_path->c_str()) != 0)
    return make_error("scenario.invalid", last != nullptr ? last() : "the fake CUDA refused it",
                      *o.scenario_path);
  return {};
}

// cuInit, then every device's name, PCI address and primary context; on the caller's runner.
// The task owns what it touches (the library, its results): an abandoned task outlives us.
Result<std::vector<CudaDevice>> enumerate(const std::shared_ptr<const CudaLibrary>& lib,
                                          nvml::DeadlineRunner& runner, int& driver_version) {
  auto out = std::make_shared<Result<std::vector<CudaDevice>>>(std::vector<CudaDevice>{});
  auto version = std::make_shared<int>(0);
  const auto outcome = runner.run([out, version, lib](nvml::CallTracker& t) {
    const CudaApi& api = lib->api();
    Calls call(*lib, t);
    if (CUresult r = call(api.init, 0u); r != kSuccess) {
      *out = make_error("cuda.init_failed", "cuInit failed: " + lib->describe(r));
      return;
    }
    (void)call(api.driver_version, version.get());
    int n = 0;
    if (CUresult r = call(api.device_count, &n); r != kSuccess || n <= 0) {
      *out = make_error("cuda.no_devices", "the CUDA driver lists no device");
      return;
    }
    for (int i = 0; i < n; ++i) {
      CudaDevice d;
      d.ordinal = i;
      char buf[256] = {};
      if (call(api.device_name, buf, static_cast<int>(sizeof buf), i) == kSuccess) d.name = buf;
      char bus[32] = {};
      if (call(api.device_pci_bus_id, bus, static_cast<int>(sizeof bus), i) == kSuccess)
        d.pci_bus_id = normalize_pci_bus_id(bus).value_or("");
      (*out)->push_back(std::move(d));  // no context yet: only GPUs that are tested get one
    }
  });
  if (!outcome.finished)
    return make_error("cuda.init_hung", outcome.hung_call + " did not return: the driver is stuck");
  driver_version = *version;
  return *out;
}

}  // namespace

Result<std::unique_ptr<CudaSession>> CudaSession::open(const CudaSessionOptions& o) {
  auto lib = CudaLibrary::open(o.library_path);
  if (!lib) return lib.error();
  if (o.scenario_path && o.fake_nvml_path)
    if (Status st = attach_fake(**lib, o); !st) return st.error();
  std::unique_ptr<CudaSession> s(new CudaSession());
  s->lib_ = *lib;
  s->deadline_ = o.call_deadline;
  nvml::DeadlineRunner init_runner(o.call_deadline);
  auto devs = enumerate(*lib, init_runner, s->driver_version_);
  if (!devs) return devs.error();
  s->devices_ = std::move(*devs);
  for (size_t i = 0; i < s->devices_.size(); ++i) {
    s->runners_.push_back(std::make_unique<nvml::DeadlineRunner>(o.call_deadline));
    s->hung_.push_back(0);
  }
  return s;
}

std::string CudaSession::describe() const {
  return fmt::format("CUDA driver {}.{} via {}", driver_version_ / 1000,
                     driver_version_ % 1000 / 10, lib_->path());
}

std::optional<std::string> CudaSession::run(size_t device, Task task) {
  if (hung_.at(device)) return "the device's earlier CUDA call never returned";
  auto result = std::make_shared<std::optional<std::string>>();
  // The primary context is retained on first use, so a GPU the check refused (someone else's
  // work) never gets a context from us.
  auto ctx = std::make_shared<CUcontext>(devices_[device].ctx);
  const int ordinal = devices_[device].ordinal;
  auto lib = lib_;
  const auto outcome =
      runners_[device]->run([result, ctx, ordinal, lib, task](nvml::CallTracker& t) {
        Calls call(*lib, t);
        const CudaApi& api = lib->api();
        if (*ctx == nullptr) {
          if (CUresult r = call(api.primary_ctx_retain, ctx.get(), ordinal); r != kSuccess) {
            *result = call.fail(api.primary_ctx_retain, r);
            return;
          }
        }
        if (CUresult r = call(api.ctx_set_current, *ctx); r != kSuccess) {
          *result = call.fail(api.ctx_set_current, r);
          return;
        }
        *result = task(call);
      });
  if (!outcome.finished) {
    hung_[device] = 1;
    return fmt::format("{} did not return within {} s", outcome.hung_call,
                       std::chrono::duration_cast<std::chrono::seconds>(deadline_).count());
  }
  devices_[device].ctx = *ctx;
  return *result;
}

}  // namespace gw::cuda
