#include "sources/nvml/nvml_source.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <vector>

#include "sources/nvml/deadline_runner.h"
#include "sources/nvml/gpu_reader.h"
#include "sources/nvml/nvml_library.h"
#include "sources/nvml/xid_events.h"

namespace gw::nvml {
namespace {

// What init and enumeration found; filled by the worker.
struct InitResult {
  nvmlReturn_t init = kUnknown;
  nvmlReturn_t count_ret = kUnknown;
  unsigned count = 0;
  std::vector<nvmlDevice_t> handles;
  std::vector<nvmlReturn_t> handle_rets;
  std::vector<std::string> handle_hung;  // per GPU: the lookup call that overran, or ""
  std::optional<std::string> driver_version, nvml_version;
  std::optional<int> cuda_version;
};

// One GPU as the source tracks it between samples.
struct Slot {
  std::shared_ptr<const GpuPlan> plan;
  GpuAccess fixed_access = GpuAccess::kOk;  // kNoPermission/kError from enumeration, kHung
  std::string fixed_error;
};

// A sample's work for the worker; owned jointly so an abandoned worker never dangles.
struct Job {
  std::shared_ptr<const NvmlLibrary> lib;
  std::vector<std::shared_ptr<const GpuPlan>> plans;
  std::vector<GpuState> states;
  std::vector<std::shared_ptr<GpuPlan>> probed;  // new plans from probes
  std::atomic<size_t> done{0};
  std::atomic<bool> cancelled{false};
  // Identity of a GPU being probed, published before the rest of its probe: a GPU that
  // hangs mid-probe is still reported by name. One slot per GPU, so nothing is overwritten.
  std::vector<DeviceInfo> identity;
  std::unique_ptr<std::atomic<bool>[]> identity_ready;

  explicit Job(size_t n)
      : states(n), probed(n), identity(n), identity_ready(new std::atomic<bool>[n]) {
    for (size_t k = 0; k < n; ++k) identity_ready[k].store(false);
  }

  void run(CallTracker& t) {
    for (size_t k = done.load(); k < plans.size(); ++k) {
      if (cancelled.load(std::memory_order_relaxed)) return;
      if (!plans[k]->probed) {
        auto p = std::make_shared<GpuPlan>(*plans[k]);
        probe_gpu(*lib, t, *p, states[k], [this, k](const DeviceInfo& info) {
          identity[k] = info;
          identity_ready[k].store(true, std::memory_order_release);
        });
        probed[k] = std::move(p);
      } else {
        sample_gpu(*lib, t, *plans[k], states[k]);
      }
      done.store(k + 1, std::memory_order_release);
    }
  }
};

std::optional<std::string> read_string(const Sym<nvmlReturn_t (*)(char*, Uint)>& s,
                                       CallTracker& t) {
  if (!s) return std::nullopt;
  std::array<char, kVersionBufferSize> buf{};
  t.begin(s.name);
  const nvmlReturn_t r = s.fn(buf.data(), kVersionBufferSize);
  t.end();
  buf.back() = 0;
  return r == kSuccess ? std::optional<std::string>(buf.data()) : std::nullopt;
}

void run_init(const NvmlLibrary& lib, CallTracker& t, InitResult& r) {
  const NvmlApi& a = lib.api();
  t.begin(a.init.name);
  r.init = a.init.fn();
  t.end();
  if (r.init != kSuccess) return;
  r.driver_version = read_string(a.driver_version, t);
  r.nvml_version = read_string(a.nvml_version, t);
  if (a.cuda_driver_version) {
    int v = 0;
    t.begin(a.cuda_driver_version.name);
    if (a.cuda_driver_version.fn(&v) == kSuccess) r.cuda_version = v;
    t.end();
  }
  t.begin(a.device_count.name);
  r.count_ret = a.device_count.fn(&r.count);
  t.end();
}

// Handle lookups, one GPU per runner, all at once: a GPU whose lookup hangs is hidden alone,
// and eight wedged GPUs cost one deadline, not eight.
struct HandleLookup {
  std::vector<nvmlDevice_t> handles;
  std::vector<nvmlReturn_t> rets;
};

void look_up_handles(const std::shared_ptr<const NvmlLibrary>& lib,
                     const std::vector<std::shared_ptr<DeadlineRunner>>& runners, InitResult& r) {
  auto h = std::make_shared<HandleLookup>();
  h->handles.assign(r.count, nullptr);
  h->rets.assign(r.count, kUnknown);
  for (unsigned i = 0; i < r.count; ++i)
    runners[i]->submit([lib, h, i](CallTracker& t) {
      t.begin(lib->api().handle_by_index.name);
      const nvmlReturn_t ret = lib->api().handle_by_index.fn(i, &h->handles[i]);
      t.end();
      h->rets[i] = ret;
    });
  r.handles.assign(r.count, nullptr);
  r.handle_rets.assign(r.count, kUnknown);
  r.handle_hung.assign(r.count, std::string());
  for (unsigned i = 0; i < r.count; ++i) {
    const auto out = runners[i]->await();
    if (!out.finished) {
      r.handle_hung[i] = out.hung_call;
      continue;
    }
    r.handles[i] = h->handles[i];
    r.handle_rets[i] = h->rets[i];
  }
}

class NvmlSource final : public GpuSource {
 public:
  NvmlSource(std::shared_ptr<const NvmlLibrary> lib, NvmlSourceOptions opts, const InitResult& init,
             std::shared_ptr<DeadlineRunner> runner,
             std::vector<std::shared_ptr<DeadlineRunner>> gpu_runners,
             std::optional<std::string> hostname)
      : lib_(std::move(lib)),
        opts_(std::move(opts)),
        runner_(std::move(runner)),
        gpu_runners_(std::move(gpu_runners)) {
    base_.source = opts_.label;
    base_.hostname = std::move(hostname);
    base_.driver_version = init.driver_version;
    base_.nvml_version = init.nvml_version;
    base_.cuda_driver_version = init.cuda_version;
    for (unsigned i = 0; i < init.count; ++i) slots_.push_back(make_slot(i, init));
  }

  ~NvmlSource() override {
    auto lib = lib_;
    (void)runner_->run([lib](CallTracker& t) {
      t.begin(lib->api().shutdown.name);
      lib->api().shutdown.fn();
      t.end();
    });
  }

  Result<Snapshot> sample() override;

  std::optional<std::string> pcie_path(unsigned a, unsigned b) override {
    const auto& call = lib_->api().topology_common_ancestor;
    if (!call || a >= slots_.size() || b >= slots_.size()) return std::nullopt;
    if (slots_[a].fixed_access != GpuAccess::kOk || slots_[b].fixed_access != GpuAccess::kOk)
      return std::nullopt;
    auto level = std::make_shared<std::optional<int>>();
    const nvmlDevice_t ha = slots_[a].plan->handle, hb = slots_[b].plan->handle;
    // The task holds the library: a call past its deadline may outlive this source.
    const auto out = runner_->run([lib = lib_, ha, hb, level](CallTracker& t) {
      const auto& f = lib->api().topology_common_ancestor;
      int l = -1;
      t.begin(f.name);
      const nvmlReturn_t r = f.fn(ha, hb, &l);
      t.end();
      if (r == kSuccess) *level = l;
    });
    if (!out.finished || !*level) return std::nullopt;
    const char* word = topology_word(**level);
    return word ? std::optional<std::string>(word) : std::nullopt;
  }

  Result<std::unique_ptr<EventWatch>> watch_events(std::function<void(Event&&)> sink) override {
    std::vector<nvmlDevice_t> handles;
    std::vector<std::string> pci;
    for (const Slot& s : slots_) {  // a GPU that is hung or never opened is not registered
      handles.push_back(s.fixed_access == GpuAccess::kOk ? s.plan->handle : nullptr);
      pci.push_back(s.plan->info.pci_bus_id);
    }
    auto w = NvmlEventWatcher::start(lib_, std::move(handles), std::move(pci), std::move(sink));
    if (!w) return w.error();
    return std::unique_ptr<EventWatch>(std::move(*w));
  }

  std::string describe() const override {
    std::string d = opts_.label == "nvml" ? "NVML" : opts_.label;
    if (base_.nvml_version) d += " " + *base_.nvml_version;
    return d + " via " + lib_->path();
  }

 private:
  Slot make_slot(unsigned i, const InitResult& init) const {
    Slot s;
    auto plan = std::make_shared<GpuPlan>();
    plan->info.index = i;
    plan->handle = init.handles[i];
    const nvmlReturn_t r = init.handle_rets[i];
    if (!init.handle_hung[i].empty()) {
      s.fixed_access = GpuAccess::kHung;
      s.fixed_error = init.handle_hung[i] + " did not return within " +
                      std::to_string(runner_->deadline().count()) + " ms";
    } else if (r != kSuccess) {
      s.fixed_access = r == kNoPermission    ? GpuAccess::kNoPermission
                       : r == kGpuIsLost     ? GpuAccess::kLost
                       : r == kResetRequired ? GpuAccess::kResetRequired
                                             : GpuAccess::kError;
      s.fixed_error = std::string(lib_->api().handle_by_index.name) + ": " + lib_->describe(r);
    }
    s.plan = std::move(plan);
    return s;
  }

  std::shared_ptr<const NvmlLibrary> lib_;
  NvmlSourceOptions opts_;
  std::shared_ptr<DeadlineRunner> runner_;                    // init and shutdown
  std::vector<std::shared_ptr<DeadlineRunner>> gpu_runners_;  // one per GPU, run in parallel
  Snapshot base_;
  std::vector<Slot> slots_;
};

Result<Snapshot> NvmlSource::sample() {
  Snapshot snap = base_;
  snap.time_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  snap.gpus.resize(slots_.size());
  std::vector<size_t> todo;
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (s.fixed_access == GpuAccess::kOk) {
      todo.push_back(i);
      continue;
    }
    GpuState& g = snap.gpus[i];  // hung or never opened: report, don't call
    g.info = s.plan->info;
    g.access = s.fixed_access;
    g.errors.push_back(s.fixed_error);
  }
  // Every GPU on its own worker at once, then wait for all: hung GPUs overrun together.
  std::vector<std::shared_ptr<Job>> jobs;
  for (size_t i : todo) {
    auto job = std::make_shared<Job>(1);
    job->lib = lib_;
    job->plans.push_back(slots_[i].plan);
    gpu_runners_[i]->submit([job](CallTracker& t) { job->run(t); });
    jobs.push_back(std::move(job));
  }
  for (size_t k = 0; k < todo.size(); ++k) {
    Job& job = *jobs[k];
    Slot& slot = slots_[todo[k]];
    const auto out = gpu_runners_[todo[k]]->await();
    if (out.finished) {
      if (job.probed[0]) slot.plan = job.probed[0];
      snap.gpus[todo[k]] = std::move(job.states[0]);
      continue;
    }
    // That GPU is hung from now on: it is reported, never called again.
    job.cancelled.store(true);
    if (job.identity_ready[0].load(std::memory_order_acquire)) {
      auto known = std::make_shared<GpuPlan>(*slot.plan);
      known->info = job.identity[0];
      slot.plan = std::move(known);
    }
    slot.fixed_access = GpuAccess::kHung;
    slot.fixed_error = out.hung_call + " did not return within " +
                       std::to_string(runner_->deadline().count()) + " ms";
    GpuState& g = snap.gpus[todo[k]];
    g.info = slot.plan->info;
    g.access = GpuAccess::kHung;
    g.errors = {slot.fixed_error};
  }
  return snap;
}

}  // namespace

Error init_error(int code, const std::string& text, const std::string& library_path) {
  switch (code) {
    case kDriverNotLoaded:
      return make_error("nvml.driver_not_loaded",
                        "the NVIDIA kernel driver is not loaded (" + text +
                            "); load it (modprobe nvidia) or reinstall the driver, and check "
                            "dmesg for why it failed",
                        library_path);
    case kLibRmVersionMismatch:
      return make_error("nvml.lib_rm_version_mismatch",
                        "the NVML library and the loaded kernel driver are different versions (" +
                            text +
                            "): the driver was upgraded without a reboot; reboot, or unload and "
                            "reload the nvidia kernel modules",
                        library_path);
    case kNoPermission:
      return make_error("nvml.no_permission",
                        "not allowed to open the NVIDIA devices (" + text +
                            "); check permissions on /dev/nvidia* or run as a user in the right "
                            "group",
                        library_path);
    default:
      return make_error("nvml.init_failed", "nvmlInit failed: " + text, library_path);
  }
}

// Loads the scenario into the fake NVML and returns its hostname, if it names one.
Result<std::optional<std::string>> load_fake_scenario(const NvmlLibrary& lib,
                                                      const std::string& scenario) {
  using LoadFn = int (*)(const char*);
  using TextFn = const char* (*)();
  auto load = reinterpret_cast<LoadFn>(lib.extra_symbol("gwfake_load_scenario"));
  auto last_error = reinterpret_cast<TextFn>(lib.extra_symbol("gwfake_last_error"));
  auto hostname = reinterpret_cast<TextFn>(lib.extra_symbol("gwfake_hostname"));
  if (load == nullptr || last_error == nullptr)
    return make_error("nvml.not_fake",
                      "this library is not the gpuwarden fake NVML, so it cannot play a scenario",
                      lib.path());
  if (load(scenario.c_str()) != 0) {
    const char* why = last_error();
    std::string message = why != nullptr ? why : "the fake NVML refused it";
    // The fake's message already starts with the file: name it once.
    std::string where = message.rfind(scenario, 0) == 0 ? std::string() : scenario;
    return make_error("scenario.invalid", std::move(message), std::move(where));
  }
  const char* h = hostname != nullptr ? hostname() : nullptr;
  return h != nullptr && *h != 0 ? std::optional<std::string>(h) : std::nullopt;
}

std::optional<std::string> local_hostname() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return std::nullopt;
  return std::string(buf.data());
}

Result<std::unique_ptr<GpuSource>> open_nvml_source(const NvmlSourceOptions& options) {
  auto lib = NvmlLibrary::open(options.library_path);
  if (!lib) return lib.error();
  std::optional<std::string> hostname;
  if (options.scenario_path) {
    auto h = load_fake_scenario(**lib, *options.scenario_path);
    if (!h) return h.error();
    hostname = *h;
  }
  if (!hostname) hostname = local_hostname();
  auto runner = std::make_shared<DeadlineRunner>(options.call_deadline);
  auto init = std::make_shared<InitResult>();
  std::shared_ptr<const NvmlLibrary> l = *lib;
  const auto out = runner->run([l, init](CallTracker& t) { run_init(*l, t, *init); });
  if (!out.finished)
    return make_error("nvml.init_hung",
                      out.hung_call + " did not return within " +
                          std::to_string(options.call_deadline.count()) +
                          " ms; the driver may be wedged (look for Xid errors in dmesg)",
                      options.library_path);
  if (init->init != kSuccess) return init_error(init->init, l->describe(init->init), l->path());
  if (init->count_ret != kSuccess || init->count == 0) {
    // Balance the successful init; NVML reference-counts it.
    (void)runner->run([l](CallTracker& t) {
      t.begin(l->api().shutdown.name);
      l->api().shutdown.fn();
      t.end();
    });
  }
  if (init->count_ret != kSuccess)
    return make_error(
        "nvml.init_failed",
        std::string(l->api().device_count.name) + " failed: " + l->describe(init->count_ret),
        l->path());
  if (init->count == 0)
    return make_error("nvml.no_devices",
                      "NVML is working but reports no GPUs: check that the GPUs are visible "
                      "(lspci | grep -i nvidia) and not hidden from this container",
                      l->path());
  std::vector<std::shared_ptr<DeadlineRunner>> gpu_runners;
  for (unsigned i = 0; i < init->count; ++i)
    gpu_runners.push_back(std::make_shared<DeadlineRunner>(options.call_deadline));
  look_up_handles(l, gpu_runners, *init);
  return std::unique_ptr<GpuSource>(new NvmlSource(l, options, *init, std::move(runner),
                                                   std::move(gpu_runners), std::move(hostname)));
}

}  // namespace gw::nvml
