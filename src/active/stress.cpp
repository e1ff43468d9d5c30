#include "active/stress.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "active/measure.h"
#include "core/clock.h"
#include "core/event.h"

namespace gw::active {
namespace {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// One tested GPU: where it is in NVML and in CUDA, and what the load did.
// Shared with the CUDA worker tasks, which may outlive a run whose call never returned.
struct Target {
  size_t report = 0;  // index into ActiveReport::gpus
  size_t cuda = 0;    // CUDA device index
  LoadState load;
  std::atomic<bool> failed{false};  // its load worker hit an error
  std::optional<std::string> error;
  double load_s = 0;
};
using Targets = std::vector<std::shared_ptr<Target>>;

// Xids NVML reports while the check runs (its event API, on the watcher's thread). The first
// one stops the load: a GPU that reports an Xid under a test load is not loaded further.
// Shared: a watcher stuck in a driver call may outlive the run.
struct XidLog {
  std::mutex m;
  std::vector<Event> events;
  std::atomic<bool> seen{false};
  void add(Event&& e) {
    std::lock_guard lk(m);
    events.push_back(std::move(e));
    seen = true;
  }
  std::vector<Event> take() {
    std::lock_guard lk(m);
    return std::move(events);
  }
  std::string first(int64_t load_start_ms) {
    std::lock_guard lk(m);
    const Event& e = events.front();
    std::string where = e.gpu_index ? fmt::format("GPU {}", *e.gpu_index) : "a GPU";
    std::string when;
    if (e.time_ms && load_start_ms > 0 && *e.time_ms >= load_start_ms)
      when = fmt::format(", {:.1f} s into the load",
                         static_cast<double>(*e.time_ms - load_start_ms) / 1000.0);
    return fmt::format("Xid {} on {} (NVML event){}", e.code.value_or(0), where, when);
  }
};

bool has_active_nvlink(const GpuState& g) {
  const auto& l = g.sample.nvlinks;
  return std::any_of(l.begin(), l.end(), [](const NvLinkInfo& x) { return x.active; });
}

std::optional<size_t> cuda_index(const cuda::CudaSession& s, const GpuState& g) {
  const auto want = normalize_pci_bus_id(g.info.pci_bus_id);
  for (size_t i = 0; want && i < s.devices().size(); ++i)
    if (s.devices()[i].pci_bus_id == *want) return i;
  return std::nullopt;
}

bool wanted(const StressOptions& o, unsigned index) {
  return o.gpus.empty() || std::find(o.gpus.begin(), o.gpus.end(), index) != o.gpus.end();
}

// Step 1: the GPUs to report on, refusing busy ones unless forced.
void plan(const Snapshot& base, const StressOptions& o, ActiveReport& r) {
  for (const GpuState& g : base.gpus) {
    if (!wanted(o, g.info.index)) continue;
    ActiveGpu a;
    a.gpu = g.info.index;
    a.name = g.info.name;
    a.max_gen = g.info.pcie_max_gen;
    a.max_width = g.info.pcie_max_width;
    const auto others = foreign_processes(g, o.own_pid);
    if (!others.empty() && !o.force)
      a.refused =
          fmt::format("runs {} other process{}: {}; not loaded (--force loads it anyway)",
                      others.size(), others.size() == 1 ? "" : "es", fmt::join(others, ", "));
    if (g.access != GpuAccess::kOk)
      a.refused = fmt::format("not readable before the test ({})", gpu_access_name(g.access));
    if (o.refuse_all) a.refused = *o.refuse_all;
    r.gpus.push_back(std::move(a));
  }
}

const GpuState* find_gpu(const Snapshot& s, unsigned index) {
  for (const GpuState& g : s.gpus)
    if (g.info.index == index) return &g;
  return nullptr;
}

// Why the load must stop now, from one NVML sample: a tested GPU lost or at its shutdown limit.
std::optional<std::string> stop_reason(const Snapshot& s, const ActiveReport& r,
                                       const Targets& ts) {
  for (const auto& t : ts) {
    const unsigned index = r.gpus[t->report].gpu;
    const GpuState* g = find_gpu(s, index);
    if (g == nullptr) continue;
    if (g->access != GpuAccess::kOk && g->access != GpuAccess::kHung)
      return fmt::format("GPU {} was lost during the load (NVML: {})", index,
                         gpu_access_name(g->access));
    const auto temp = g->sample.temp_c;
    const auto limit = g->info.temp_shutdown_c;
    if (temp && limit && static_cast<int>(*temp) >= *limit)
      return fmt::format("GPU {} reached {} C, its shutdown temperature ({} C)", index, *temp,
                         *limit);
  }
  return std::nullopt;
}

void start_workers(cuda::CudaSession& cu, const StressOptions& o, const Targets& ts,
                   std::atomic<bool>& stop, std::vector<std::thread>& out) {
  for (const auto& t : ts) {
    if (t->failed) continue;
    out.emplace_back([&cu, &stop, t, n = o.launches_per_chunk] {
      const auto t0 = std::chrono::steady_clock::now();
      while (!stop) {
        auto err = cu.run(t->cuda, [t, n](Calls& c) { return load_chunk(c, t->load, n); });
        if (err) {
          t->error = "load: " + *err;
          t->failed = true;
          break;
        }
      }
      t->load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
  }
}

// Waits up to `wait` in slices of at most 100 ms, so an Xid stops the load at once; false
// when interrupted (Ctrl-C) or an Xid arrived.
bool wait_slice(const StressOptions& o, std::chrono::milliseconds wait, XidLog& xids,
                ActiveReport& r) {
  constexpr std::chrono::milliseconds kSlice{100};
  while (wait.count() > 0 && !xids.seen) {
    const auto step = std::min(wait, kSlice);
    if (!o.sleep(step)) {
      r.stopped = "interrupted (Ctrl-C)";
      return false;
    }
    wait -= step;
  }
  if (!xids.seen) return true;
  r.stopped = xids.first(r.load_start_ms);
  return false;
}

// Samples NVML every interval until the duration is over or something says stop.
void watch_load(GpuSource& nvml, const StressOptions& o, const Targets& ts, XidLog& xids,
                Observation& obs, ActiveReport& r) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto dur = std::chrono::duration<double>(o.duration_s);
  for (;;) {
    const std::chrono::duration<double> left = dur - (std::chrono::steady_clock::now() - t0);
    if (left.count() <= 0) return;
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::min(left, std::chrono::duration<double>(o.interval_s)));
    if (!wait_slice(o, wait, xids, r)) return;
    auto s = nvml.sample();
    if (!s) {
      r.stopped = "NVML stopped answering: " + s.error().to_string();
      return;
    }
    obs.samples.push_back(std::move(*s));
    if (auto why = stop_reason(obs.samples.back(), r, ts)) {
      r.stopped = why;
      return;
    }
    if (std::all_of(ts.begin(), ts.end(), [](const auto& t) { return t->failed.load(); })) {
      r.stopped = "the load failed on every GPU";
      return;
    }
  }
}

// Step 2: set up, run and watch the load; every worker is joined before returning.
void load_phase(GpuSource& nvml, cuda::CudaSession& cu, const StressOptions& o, const Targets& ts,
                XidLog& xids, Observation& obs, ActiveReport& r) {
  for (const auto& t : ts) {
    const int ordinal = cu.devices()[t->cuda].ordinal;
    auto err = cu.run(t->cuda, [t, ordinal, share = o.memory_share, cap = o.memory_cap](Calls& c) {
      return load_setup(c, ordinal, share, cap, t->load);
    });
    if (err) {
      t->error = "load setup: " + *err;
      t->failed = true;
    }
  }
  r.load_start_ms = now_ms();
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  start_workers(cu, o, ts, stop, workers);
  watch_load(nvml, o, ts, xids, obs, r);
  stop = true;
  for (auto& w : workers) w.join();
  for (const auto& t : ts)
    if (!cu.hung(t->cuda))
      (void)cu.run(t->cuda, [t](Calls& c) {
        load_teardown(c, t->load);
        return Failure{};
      });
}

// Step 3: copies per GPU, and the link NVML reports right after them.
void copy_phase(GpuSource& nvml, cuda::CudaSession& cu, const StressOptions& o, const Targets& ts,
                XidLog& xids, ActiveReport& r) {
  for (const auto& t : ts) {
    if (xids.seen) return;
    if (t->failed || cu.hung(t->cuda)) continue;
    auto figs = std::make_shared<CopyFigures>();
    auto err = cu.run(t->cuda, [figs, bytes = o.copy_bytes, reps = o.copy_reps](Calls& c) {
      return measure_copies(c, bytes, reps, *figs);
    });
    ActiveGpu& a = r.gpus[t->report];
    if (err) {
      a.error = "copies: " + *err;
      continue;
    }
    a.h2d_gb_s = figs->h2d_gb_s;
    a.d2h_gb_s = figs->d2h_gb_s;
    a.bidir_gb_s = figs->bidir_gb_s;
    auto s = nvml.sample();
    if (const GpuState* g = s ? find_gpu(*s, a.gpu) : nullptr) {
      a.link_gen = g->sample.pcie_gen;
      a.link_width = g->sample.pcie_width;
    }
  }
}

// Step 4: every pair of tested GPUs, copies from the lower index to the higher.
// What the path between two GPUs should be: NVLink when both have active NVLinks, else the
// PCIe topology level NVML reports (PIX, PXB, PHB, NODE, SYS), "PCIe" when it cannot tell.
std::string expected_path(GpuSource& nvml, const GpuState* a, const GpuState* b) {
  if (a == nullptr || b == nullptr) return "PCIe";
  if (has_active_nvlink(*a) && has_active_nvlink(*b)) return "NVLink";
  return nvml.pcie_path(a->info.index, b->info.index).value_or("PCIe");
}

void peer_phase(GpuSource& nvml, const Snapshot& base, cuda::CudaSession& cu,
                const StressOptions& o, const Targets& ts, ActiveReport& r) {
  for (size_t i = 0; i < ts.size(); ++i) {
    for (size_t j = i + 1; j < ts.size(); ++j) {
      const auto& a = ts[i];
      const auto& b = ts[j];
      if (a->failed || b->failed || cu.hung(a->cuda) || cu.hung(b->cuda)) continue;
      ActivePeer p;
      p.a = r.gpus[a->report].gpu;
      p.b = r.gpus[b->report].gpu;
      p.expected = expected_path(nvml, find_gpu(base, p.a), find_gpu(base, p.b));
      auto figs = std::make_shared<PeerFigures>();
      const cuda::CudaDevice from = cu.devices()[a->cuda], to = cu.devices()[b->cuda];
      p.error =
          cu.run(a->cuda, [figs, from, to, bytes = o.peer_bytes, reps = o.peer_reps](Calls& c) {
            return measure_peer(c, from, to, bytes, reps, *figs);
          });
      p.access = figs->access;
      p.gb_s = figs->gb_s;
      r.peers.push_back(std::move(p));
    }
  }
}

Targets targets(const Snapshot& base, const cuda::CudaSession& cu, ActiveReport& r) {
  Targets ts;
  for (size_t i = 0; i < r.gpus.size(); ++i) {
    ActiveGpu& a = r.gpus[i];
    const GpuState* g = find_gpu(base, a.gpu);
    if (a.refused || g == nullptr) continue;
    const auto dev = cuda_index(cu, *g);
    if (!dev) {
      a.error = "the CUDA driver does not list this GPU (PCI " + g->info.pci_bus_id + ")";
      continue;
    }
    auto t = std::make_shared<Target>();
    t->report = i;
    t->cuda = *dev;
    ts.push_back(std::move(t));
  }
  return ts;
}

void say(const StressOptions& o, const std::string& line) {
  if (o.progress) o.progress(line);
}

}  // namespace

void run_stress(GpuSource& nvml, cuda::CudaSession* cuda, const std::string& cuda_error,
                const StressOptions& o, Observation& obs) {
  ActiveReport r;
  r.planned_s = o.duration_s;
  auto base = nvml.sample();
  if (!base) {
    obs.source_error = base.error();
    return;
  }
  obs.samples.push_back(*base);
  plan(*base, o, r);
  if (cuda == nullptr) {
    r.cuda_error = cuda_error;
    obs.active = std::move(r);
    return;
  }
  r.cuda_source = cuda->describe();
  const Targets ts = targets(*base, *cuda, r);
  if (ts.empty()) {  // every GPU refused or unknown to CUDA: the findings say why
    obs.active = std::move(r);
    return;
  }
  auto xids = std::make_shared<XidLog>();
  auto watch = nvml.watch_events([xids](Event&& e) {
    if (e.kind == EventKind::kXid) xids->add(std::move(e));
  });
  r.xid_watch = watch ? (*watch)->status() : "Xids not watched: " + watch.error().message;
  say(o, fmt::format("stress: loading {} GPU(s) for {} s", ts.size(), o.duration_s));
  load_phase(nvml, *cuda, o, ts, *xids, obs, r);
  for (const auto& t : ts) {
    r.gpus[t->report].load_s = t->load_s;
    if (t->error) r.gpus[t->report].error = t->error;
  }
  if (!r.stopped) {
    say(o, "stress: host<->device copies");
    copy_phase(nvml, *cuda, o, ts, *xids, r);
    say(o, "stress: copies between GPU pairs");
    if (!xids->seen) peer_phase(nvml, *base, *cuda, o, ts, r);
    if (xids->seen) r.stopped = xids->first(r.load_start_ms);
  }
  if (watch) watch->reset();  // stop watching before the events are taken
  for (Event& e : xids->take()) obs.events.push_back(std::move(e));
  obs.active = std::move(r);
}

std::vector<std::string> foreign_processes(const GpuState& g, uint32_t own_pid) {
  std::vector<std::string> out;
  if (!g.sample.processes) return out;
  for (const ProcessInfo& p : *g.sample.processes)
    if (p.pid != own_pid) out.push_back(fmt::format("{} (pid {})", p.name.value_or("?"), p.pid));
  return out;
}

std::unique_ptr<cuda::CudaSession> open_cuda(const GpuSourceOptions& source,
                                             const std::optional<std::string>& library,
                                             std::string& error) {
  auto lib = resolve_cuda_library(source, library);
  if (!lib) {
    error = lib.error().to_string();
    return nullptr;
  }
  cuda::CudaSessionOptions o;
  o.library_path = lib->library_path;
  o.fake_nvml_path = lib->fake_nvml_path;
  o.scenario_path = lib->scenario_path;
  auto s = cuda::CudaSession::open(o);
  if (!s) {
    error = s.error().to_string() + " [" + s.error().code + "]";
    return nullptr;
  }
  return std::move(*s);
}

}  // namespace gw::active
