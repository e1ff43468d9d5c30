#include "fake-nvml/fake_nvml.h"

#include <cstdlib>

#include "sources/input_file.h"

namespace gwfake {

using namespace gw::nvml;  // NOLINT: the NVML return codes

FakeNvml& FakeNvml::instance() {
  // Never destroyed: a deliberately hung call may still be waiting inside at process exit.
  static FakeNvml* fake = new FakeNvml();
  return *fake;
}

int FakeNvml::load(const char* path) {
  std::lock_guard lk(m_);
  // Never a plain ifstream: /dev/zero never ends and a FIFO without a writer blocks in open.
  auto text = gw::read_input(path != nullptr ? path : "");
  if (!text) {
    last_error_ = "cannot read scenario file " + text.error().to_string();
    return 1;
  }
  auto s = parse_scenario(text->text(), path);
  if (!s) {
    last_error_ = s.error().to_string();
    return 1;
  }
  scenario_ = std::move(*s);
  gpus_.clear();
  for (const ScenarioGpu& g : scenario_.gpus)
    gpus_.push_back(GpuRuntime{g, 0, std::nullopt, 30000});
  if (gpus_.size() > sizeof tags_) {
    last_error_ = std::string(path) + ": the fake NVML plays at most 64 devices";
    return 1;
  }
  hostname_ = scenario_.hostname.value_or("");
  sets_.clear();
  next_event_ = 0;
  load_t0_.assign(gpus_.size(), std::nullopt);
  load_applied_.assign(scenario_.load_timeline.size(), false);
  init_count_ = 0;
  frozen_t_.reset();
  const char* scale = std::getenv("GPUWARDEN_FAKE_TIME_SCALE");
  scale_ = scale != nullptr ? std::strtod(scale, nullptr) : 1.0;
  if (!(scale_ > 0)) scale_ = 1.0;
  loaded_ = true;
  last_error_.clear();
  ++generation_;
  hang_cv_.notify_all();
  return 0;
}

void FakeNvml::set_time(double t_s) {
  std::lock_guard lk(m_);
  if (t_s < 0) {
    // Resume from the pinned time.
    const double t = frozen_t_.value_or(0);
    frozen_t_.reset();
    t0_ = std::chrono::steady_clock::now() -
          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
              std::chrono::duration<double>(t / scale_));
    return;
  }
  frozen_t_ = t_s;
}

int FakeNvml::set_device(unsigned index, const char* fields_json) {
  std::lock_guard lk(m_);
  const gw::nvml::Json fields =
      gw::nvml::Json::parse(fields_json != nullptr ? fields_json : "", nullptr, false);
  if (index >= gpus_.size() || !fields.is_object()) {
    last_error_ = "gwfake_set_device: no GPU " + std::to_string(index) + " or not a JSON object";
    return 1;
  }
  if (gw::Status st = apply_device_fields(fields, gpus_[index].gpu, "gwfake_set_device"); !st) {
    last_error_ = st.error().to_string();
    return 1;
  }
  return 0;
}

nvmlReturn_t FakeNvml::init() {
  bool loaded = false;
  {
    std::lock_guard lk(m_);
    loaded = loaded_;
  }
  if (!loaded) {
    // No scenario handed over by gwfake_load_scenario: the environment may name one.
    const char* env = std::getenv("GPUWARDEN_FAKE_SCENARIO");
    if (env == nullptr || *env == 0) return kDriverNotLoaded;
    if (load(env) != 0) return kUnknown;
  }
  std::lock_guard lk(m_);
  if (scenario_.init_error) return *scenario_.init_error;
  if (init_count_++ == 0) t0_ = std::chrono::steady_clock::now();
  return kSuccess;
}

nvmlReturn_t FakeNvml::shutdown() {
  std::lock_guard lk(m_);
  if (init_count_ > 0) --init_count_;
  return kSuccess;
}

nvmlReturn_t FakeNvml::count(unsigned* n) {
  std::lock_guard lk(m_);
  if (init_count_ == 0) return kUninitialized;
  if (n == nullptr) return kInvalidArgument;
  *n = static_cast<unsigned>(gpus_.size());
  return kSuccess;
}

nvmlReturn_t FakeNvml::handle(unsigned index, nvmlDevice_t* out, const char* call) {
  std::unique_lock lk(m_);
  if (init_count_ == 0) return kUninitialized;
  if (index >= gpus_.size() || out == nullptr) return kInvalidArgument;
  advance();
  const GpuRuntime& g = gpus_[index];
  if (g.gpu.handle_error) return *g.gpu.handle_error;
  if (g.error != 0) return g.error;
  if (hangs(g, call)) return hang(g, lk);
  *out = reinterpret_cast<nvmlDevice_t>(&tags_[index]);
  return kSuccess;
}

double FakeNvml::now_s() const {
  if (frozen_t_) return *frozen_t_;
  if (init_count_ == 0) return 0;
  const std::chrono::duration<double> d = std::chrono::steady_clock::now() - t0_;
  return d.count() * scale_;
}

void FakeNvml::advance() {
  const double t = now_s();
  advance_load(t);
  while (next_event_ < scenario_.timeline.size() && scenario_.timeline[next_event_].t_s <= t)
    apply(scenario_.timeline[next_event_++]);
}

// "after_load" entries: due once their GPU has been under load for t_s scenario seconds.
void FakeNvml::advance_load(double t) {
  for (size_t i = 0; i < scenario_.load_timeline.size(); ++i) {
    const ScenarioEvent& e = scenario_.load_timeline[i];
    const auto& t0 = load_t0_.at(e.gpu);
    if (load_applied_[i] || !t0 || *t0 + e.t_s > t) continue;
    load_applied_[i] = true;
    apply(e);
  }
}

void FakeNvml::apply(const ScenarioEvent& e) {
  GpuRuntime& g = gpus_.at(e.gpu);
  if (!e.set.empty()) (void)apply_device_fields(e.set, g.gpu, "timeline");  // validated at load
  if (e.error) g.error = *e.error;
  if (e.hang_call) {
    g.hang_call = e.hang_call;
    g.hang_ms = e.hang_ms;
  }
  if (e.xid) {
    for (const auto& set : sets_)
      for (const auto& [gpu, mask] : set->registered)
        if (gpu == e.gpu && (mask & kEventXidCritical) != 0)
          set->pending.push_back(nvmlEventData_t{reinterpret_cast<nvmlDevice_t>(&tags_[e.gpu]),
                                                 kEventXidCritical, *e.xid, 0xFFFFFFFFu,
                                                 0xFFFFFFFFu});
    events_cv_.notify_all();
  }
}

double FakeNvml::scenario_now() {
  std::lock_guard lk(m_);
  return now_s();
}

// A loaded GPU reads busy (as a real one would) until the scenario says otherwise.
void FakeNvml::load_started(unsigned gpu) {
  std::lock_guard lk(m_);
  if (gpu >= gpus_.size() || load_t0_[gpu]) return;
  load_t0_[gpu] = now_s();
  gw::GpuSample& s = gpus_[gpu].gpu.state.sample;
  if (s.util_gpu_pct) s.util_gpu_pct = 100;
  if (s.util_mem_pct) s.util_mem_pct = 60;
  if (s.clock_reasons) *s.clock_reasons &= ~uint64_t{1};  // no longer GPU idle
  advance();
}

int FakeNvml::link(unsigned gpu, unsigned* gen, unsigned* width) {
  std::lock_guard lk(m_);
  if (gpu >= gpus_.size()) return kInvalidArgument;
  advance();
  const GpuRuntime& g = gpus_[gpu];
  if (g.error != 0) return g.error;
  const gw::GpuSample& s = g.gpu.state.sample;
  const gw::DeviceInfo& i = g.gpu.state.info;
  *gen = s.pcie_gen.value_or(i.pcie_max_gen.value_or(0));
  *width = s.pcie_width.value_or(i.pcie_max_width.value_or(0));
  return kSuccess;
}

nvmlReturn_t FakeNvml::enter(nvmlDevice_t d, const char* call, std::unique_lock<std::mutex>& lk,
                             GpuRuntime*& g) {
  if (init_count_ == 0) return kUninitialized;
  const auto* tag = reinterpret_cast<const char*>(d);
  if (tag < tags_ || tag >= tags_ + gpus_.size()) return kInvalidArgument;
  advance();
  g = &gpus_[static_cast<size_t>(tag - tags_)];
  if (g->error != 0) return g->error;
  if (hangs(*g, call)) return hang(*g, lk);
  return kSuccess;
}

// A scripted hang names the export ("nvmlDeviceGetPowerUsage" also matches its _v2/_v3), or
// is empty for "whatever is called next".
bool FakeNvml::hangs(const GpuRuntime& g, std::string_view call) {
  if (!g.hang_call) return false;
  const std::string_view h = *g.hang_call;
  return h.empty() || call == h ||
         (call.starts_with(h) && call.size() > h.size() && call[h.size()] == '_');
}

// A wedged driver call: blocks for hang_ms (bounded so test processes can always exit), or
// until another scenario is loaded.
nvmlReturn_t FakeNvml::hang(const GpuRuntime& g, std::unique_lock<std::mutex>& lk) {
  const uint64_t gen = generation_;
  hang_cv_.wait_for(lk, std::chrono::milliseconds(g.hang_ms), [&] { return generation_ != gen; });
  return kUnknown;
}

}  // namespace gwfake
