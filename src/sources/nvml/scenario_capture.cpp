// Snapshots -> scenario: what `gpuwarden capture` records so the fake can replay it.
#include <string>
#include <string_view>

#include "sources/nvml/scenario.h"

namespace gw::nvml {
namespace {

// Keys the timeline never carries: they are set once in "devices".
bool static_key(const std::string& k) {
  return k == "unsupported" || k == "handle_error";
}

std::optional<int> access_error(GpuAccess a) {
  switch (a) {
    case GpuAccess::kLost:
      return 15;  // GPU_IS_LOST
    case GpuAccess::kResetRequired:
      return 16;  // RESET_REQUIRED
    default:
      return std::nullopt;
  }
}

// The call a hung GPU was stuck in, from the source's "<call> did not return within N ms" error.
// Replaying the hang on that call keeps the GPU enumerable; an empty name ("any call") would also
// hang nvmlDeviceGetHandleByIndex and make the whole replayed machine unreadable.
std::string hung_call(const GpuState& st) {
  static constexpr std::string_view kMarker = " did not return within ";
  for (const std::string& e : st.errors) {
    const auto at = e.find(kMarker);
    if (at != std::string::npos && e.starts_with("nvml")) return e.substr(0, at);
  }
  return std::string();
}

ScenarioGpu to_gpu(const GpuState& st) {
  ScenarioGpu g;
  g.state = st;
  g.state.errors.clear();
  // A GPU that hung during its first sample never finished the capability probe: what it could
  // not answer is unknown, not unsupported. Mark nothing unsupported, so the static values it
  // did read replay (a reading left out still answers NOT_SUPPORTED).
  if (st.access == GpuAccess::kHung)
    for (size_t c = 0; c < kCapabilityCount; ++c) g.state.info.caps.set(static_cast<Capability>(c));
  if (st.access == GpuAccess::kNoPermission) g.handle_error = 4;  // NO_PERMISSION
  return g;
}

// The timeline entries that turn GPU `i` from `prev` into `cur` at `t`.
void diff_gpu(double t, unsigned i, const GpuState& prev, const GpuState& cur,
              std::vector<ScenarioEvent>& out) {
  const auto was = access_error(prev.access);
  const auto now = access_error(cur.access);
  if (cur.access == GpuAccess::kHung && prev.access != GpuAccess::kHung) {
    ScenarioEvent ev{t, i, Json::object(), std::nullopt, hung_call(cur), 30000, std::nullopt};
    out.push_back(ev);
    return;
  }
  if (now != was) {
    ScenarioEvent ev{t, i, Json::object(), now.value_or(0), std::nullopt, 30000, std::nullopt};
    out.push_back(ev);
  }
  if (cur.access != GpuAccess::kOk) return;  // nothing was read: keep the last readings
  const Json a = device_fields(to_gpu(prev));
  const Json b = device_fields(to_gpu(cur));
  Json set = Json::object();
  for (const auto& [k, v] : b.items())
    if (!static_key(k) && (!a.contains(k) || a[k] != v)) set[k] = v;
  for (const auto& [k, v] : a.items())
    if (!static_key(k) && !b.contains(k)) set[k] = nullptr;
  if (!set.empty())
    out.push_back(ScenarioEvent{t, i, set, std::nullopt, std::nullopt, 30000, std::nullopt});
}

}  // namespace

void ScenarioBuilder::start(const Snapshot& first, std::string name) {
  s_ = Scenario{};
  s_.name = std::move(name);
  s_.description = "captured from " + first.source;
  s_.hostname = first.hostname;
  s_.driver_version = first.driver_version;
  s_.nvml_version = first.nvml_version;
  s_.cuda_driver_version = first.cuda_driver_version;
  first_ms_ = first.time_ms;
  last_.clear();
  for (const GpuState& st : first.gpus) {
    s_.gpus.push_back(to_gpu(st));
    last_.push_back(st);
    const unsigned i = static_cast<unsigned>(s_.gpus.size() - 1);
    if (auto e = access_error(st.access))
      s_.timeline.push_back({0, i, Json::object(), e, std::nullopt, 30000, std::nullopt});
    if (st.access == GpuAccess::kHung)
      s_.timeline.push_back(
          {0, i, Json::object(), std::nullopt, hung_call(st), 30000, std::nullopt});
  }
}

std::vector<ScenarioEvent> ScenarioBuilder::next(const Snapshot& snap) {
  std::vector<ScenarioEvent> out;
  const double t = static_cast<double>(snap.time_ms - first_ms_) / 1000.0;
  for (size_t i = 0; i < snap.gpus.size() && i < last_.size(); ++i) {
    const GpuState& cur = snap.gpus[i];
    diff_gpu(t, static_cast<unsigned>(i), last_[i], cur, out);
    // Keep the access change, and the readings only when there are new ones.
    if (cur.access == GpuAccess::kOk)
      last_[i] = cur;
    else
      last_[i].access = cur.access;
  }
  return out;
}

Scenario scenario_from_snapshots(const std::vector<Snapshot>& snaps, std::string name) {
  if (snaps.empty()) {
    Scenario s;
    s.name = std::move(name);
    return s;
  }
  ScenarioBuilder b;
  b.start(snaps.front(), std::move(name));
  for (size_t k = 1; k < snaps.size(); ++k)
    for (ScenarioEvent& e : b.next(snaps[k])) b.scenario().timeline.push_back(std::move(e));
  return std::move(b.scenario());
}

}  // namespace gw::nvml
