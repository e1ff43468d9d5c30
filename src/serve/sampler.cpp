#include "serve/sampler.h"

#include <array>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "sources/nvml/deadline_runner.h"
#include "sources/nvml/gpm.h"
#include "sources/nvml/gpu_reader.h"
#include "sources/nvml/nvml_source.h"

namespace gw::serve {

using nvml::CallTracker;

namespace {

struct Worker {
  unsigned index = 0;
  nvml::GpuPlan plan;   // owned by the worker thread
  nvml::GpmReader gpm;  // owned by the worker thread
  CallTracker tracker;
  // Everything below is guarded by Shared::m.
  std::optional<DeviceInfo> identity;  // published as soon as the probe read it
  std::optional<GpuState> latest;
  GpuFreshness fresh;
  uint64_t done_gen = 0;
  bool busy = false;
  bool was_busy = false;                  // busy when the current round began
  int64_t counted_hang_ns = 0;            // the stuck call already counted in fresh.hangs
  std::optional<GpuAccess> fixed_access;  // the handle could not be opened
  std::string fixed_error;
  std::thread thread;
};

struct InitResult {
  nvmlReturn_t init = nvml::kUnknown, count_ret = nvml::kUnknown;
  unsigned count = 0;
  std::vector<nvmlDevice_t> handles;
  std::vector<nvmlReturn_t> handle_rets;
  std::optional<std::string> driver_version, nvml_version;
  std::optional<int> cuda_version;
};

std::optional<std::string> read_text(const Sym<nvmlReturn_t (*)(char*, unsigned)>& s,
                                     CallTracker& t) {
  if (!s) return std::nullopt;
  std::array<char, nvml::kVersionBufferSize> buf{};
  t.begin(s.name);
  const nvmlReturn_t r = s.fn(buf.data(), nvml::kVersionBufferSize);
  t.end();
  buf.back() = 0;
  return r == nvml::kSuccess ? std::optional<std::string>(buf.data()) : std::nullopt;
}

void run_init(const nvml::NvmlLibrary& lib, CallTracker& t, InitResult& r) {
  const nvml::NvmlApi& a = lib.api();
  t.begin(a.init.name);
  r.init = a.init.fn();
  t.end();
  if (r.init != nvml::kSuccess) return;
  r.driver_version = read_text(a.driver_version, t);
  r.nvml_version = read_text(a.nvml_version, t);
  if (a.cuda_driver_version) {
    int v = 0;
    t.begin(a.cuda_driver_version.name);
    if (a.cuda_driver_version.fn(&v) == nvml::kSuccess) r.cuda_version = v;
    t.end();
  }
  t.begin(a.device_count.name);
  r.count_ret = a.device_count.fn(&r.count);
  t.end();
  if (r.count_ret != nvml::kSuccess) return;
  r.handles.assign(r.count, nullptr);
  r.handle_rets.assign(r.count, nvml::kUnknown);
  for (unsigned i = 0; i < r.count; ++i) {
    t.begin(a.handle_by_index.name);
    r.handle_rets[i] = a.handle_by_index.fn(i, &r.handles[i]);
    t.end();
  }
}

GpuAccess access_of(nvmlReturn_t r) {
  return r == nvml::kNoPermission    ? GpuAccess::kNoPermission
         : r == nvml::kGpuIsLost     ? GpuAccess::kLost
         : r == nvml::kResetRequired ? GpuAccess::kResetRequired
                                     : GpuAccess::kError;
}

}  // namespace

struct Sampler::Shared {
  std::shared_ptr<const nvml::NvmlLibrary> lib;
  std::chrono::milliseconds deadline{2000};
  Snapshot base;
  std::mutex m;
  std::condition_variable work_cv, done_cv;
  uint64_t gen = 0;
  int64_t gen_time_ms = 0;
  bool stopping = false;
  bool stopped = false;
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<nvmlDevice_t> handles;
};

namespace {

void worker_loop(const std::shared_ptr<Sampler::Shared>& sh, Worker& w) {
  std::unique_lock lk(sh->m);
  for (;;) {
    sh->work_cv.wait(lk, [&] { return sh->stopping || sh->gen > w.done_gen; });
    if (sh->stopping) {
      // The GPM buffers go back before nvmlShutdown; busy, so stop() does not wait on a
      // driver that hangs even here.
      w.busy = true;
      lk.unlock();
      w.gpm.release(*sh->lib, w.tracker);
      lk.lock();
      w.busy = false;
      sh->done_cv.notify_all();
      return;
    }
    const uint64_t gen = sh->gen;
    w.busy = true;
    lk.unlock();
    GpuState out;
    if (!w.plan.probed) {
      nvml::probe_gpu(*sh->lib, w.tracker, w.plan, out, [&](const DeviceInfo& info) {
        std::lock_guard g(sh->m);
        w.identity = info;
      });
    } else {
      nvml::sample_gpu(*sh->lib, w.tracker, w.plan, out);
    }
    if (w.plan.probed) w.gpm.read(*sh->lib, w.tracker, w.plan.handle, out);
    out.info.index = w.index;
    lk.lock();
    w.busy = false;
    w.identity = out.info;
    // A reading that finished after its round still counts, stamped with the round it served
    // at the earliest; a later round will restamp it when it is fresh again.
    const int64_t t = sh->gen_time_ms;
    w.fresh.last_sample_ms = t;
    if (out.access == GpuAccess::kOk) w.fresh.last_ok_ms = t;
    ++w.fresh.samples;
    w.latest = std::move(out);
    w.done_gen = gen;
    sh->done_cv.notify_all();
  }
}

}  // namespace

Result<std::unique_ptr<Sampler>> Sampler::open(const SamplerOptions& options) {
  auto lib = nvml::NvmlLibrary::open(options.library_path);
  if (!lib) return lib.error();
  std::optional<std::string> hostname;
  if (options.scenario_path) {
    auto h = nvml::load_fake_scenario(**lib, *options.scenario_path);
    if (!h) return h.error();
    hostname = *h;
  }
  if (!hostname) hostname = nvml::local_hostname();
  std::shared_ptr<const nvml::NvmlLibrary> l = *lib;
  auto init = std::make_shared<InitResult>();
  nvml::DeadlineRunner runner(options.deadline);
  const auto out = runner.run([l, init](CallTracker& t) { run_init(*l, t, *init); });
  if (!out.finished)
    return make_error("nvml.init_hung",
                      out.hung_call + " did not return within " +
                          std::to_string(options.deadline.count()) +
                          " ms; the driver may be wedged (look for Xid errors in dmesg)",
                      options.library_path);
  if (init->init != nvml::kSuccess)
    return nvml::init_error(init->init, l->describe(init->init), l->path());
  if (init->count_ret != nvml::kSuccess || init->count == 0) {
    (void)runner.run([l](CallTracker& t) {
      t.begin(l->api().shutdown.name);
      l->api().shutdown.fn();
      t.end();
    });
    if (init->count_ret != nvml::kSuccess)
      return make_error(
          "nvml.init_failed",
          std::string(l->api().device_count.name) + " failed: " + l->describe(init->count_ret),
          l->path());
    return make_error("nvml.no_devices", "NVML is working but reports no GPUs", l->path());
  }
  std::unique_ptr<Sampler> s(new Sampler());
  auto sh = std::make_shared<Shared>();
  sh->lib = l;
  sh->deadline = options.deadline;
  sh->base.source = options.label;
  sh->base.hostname = hostname;
  sh->base.driver_version = init->driver_version;
  sh->base.nvml_version = init->nvml_version;
  sh->base.cuda_driver_version = init->cuda_version;
  sh->handles = init->handles;
  for (unsigned i = 0; i < init->count; ++i) {
    auto w = std::make_unique<Worker>();
    w->index = i;
    w->fresh.index = i;
    w->plan.info.index = i;
    w->plan.handle = init->handles[i];
    if (init->handle_rets[i] != nvml::kSuccess) {
      w->fixed_access = access_of(init->handle_rets[i]);
      w->fixed_error =
          std::string(l->api().handle_by_index.name) + ": " + l->describe(init->handle_rets[i]);
      sh->handles[i] = nullptr;
    }
    sh->workers.push_back(std::move(w));
  }
  for (auto& w : sh->workers)
    if (!w->fixed_access) w->thread = std::thread([sh, wp = w.get()] { worker_loop(sh, *wp); });
  s->shared_ = std::move(sh);
  return s;
}

Sampler::~Sampler() {
  stop();
}

Round Sampler::sample(int64_t now_ms, std::chrono::milliseconds wait) {
  Shared& sh = *shared_;
  std::unique_lock lk(sh.m);
  ++sh.gen;
  sh.gen_time_ms = now_ms;
  for (auto& w : sh.workers) w->was_busy = w->busy;
  sh.work_cv.notify_all();
  sh.done_cv.wait_for(lk, wait, [&] {
    for (const auto& w : sh.workers)
      if (!w->fixed_access && !w->was_busy && w->done_gen < sh.gen) return false;
    return true;
  });
  Round r;
  r.snapshot = sh.base;
  r.snapshot.time_ms = now_ms;
  const int64_t now_ns = CallTracker::now_ns();
  const int64_t deadline_ns = std::chrono::nanoseconds(sh.deadline).count();
  for (auto& w : sh.workers) {
    GpuState g;
    if (w->latest) g = *w->latest;
    if (w->identity) g.info = *w->identity;
    g.info.index = w->index;
    if (w->fixed_access) {
      g.access = *w->fixed_access;
      g.errors = {w->fixed_error};
    } else if (w->busy) {
      const int64_t start = w->tracker.start_ns();
      if (start != 0 && now_ns - start >= deadline_ns) {
        if (w->counted_hang_ns != start) {
          ++w->fresh.hangs;
          w->counted_hang_ns = start;
        }
        g.sample = GpuSample{};
        g.access = GpuAccess::kHung;
        g.errors = {std::string(w->tracker.call()) + " did not return within " +
                    std::to_string(sh.deadline.count()) + " ms"};
      } else if (!w->latest) {
        g.access = GpuAccess::kError;
        g.errors = {"no reading yet"};
      }
    } else if (!w->latest) {
      g.access = GpuAccess::kError;
      g.errors = {"no reading yet"};
    }
    r.snapshot.gpus.push_back(std::move(g));
    r.fresh.push_back(w->fresh);
  }
  return r;
}

size_t Sampler::gpu_count() const {
  return shared_->workers.size();
}

std::shared_ptr<const nvml::NvmlLibrary> Sampler::library() const {
  return shared_->lib;
}

std::vector<nvmlDevice_t> Sampler::handles() const {
  return shared_->handles;
}

void Sampler::stop() {
  if (!shared_) return;
  Shared& sh = *shared_;
  {
    std::unique_lock lk(sh.m);
    if (sh.stopped) return;
    sh.stopped = true;
    sh.stopping = true;
    sh.work_cv.notify_all();
    // A reading in progress gets a moment to finish; a stuck call does not hold shutdown.
    sh.done_cv.wait_for(lk, std::chrono::milliseconds(300), [&] {
      for (const auto& w : sh.workers)
        if (w->busy) return false;
      return true;
    });
  }
  bool stuck = false;
  for (auto& w : sh.workers) {
    if (!w->thread.joinable()) continue;
    bool busy = false;
    {
      std::lock_guard lk(sh.m);
      busy = w->busy;
    }
    if (busy) {
      w->thread.detach();  // it owns a reference to Shared and exits when its call returns
      stuck = true;
    } else {
      w->thread.join();
    }
  }
  if (!stuck) {
    auto lib = sh.lib;
    nvml::DeadlineRunner runner(sh.deadline);
    (void)runner.run([lib](CallTracker& t) {
      t.begin(lib->api().shutdown.name);
      lib->api().shutdown.fn();
      t.end();
    });
  }
}

}  // namespace gw::serve
