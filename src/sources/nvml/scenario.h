// Scenario files: what the fake NVML plays (devices and a timeline), and what
// `gpuwarden capture` writes from real readings. Format: docs/scenario-format.md.
// Device keys are exactly the DeviceInfo / GpuSample member names, so a scenario reads like
// the Snapshot it produces.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/snapshot.h"

namespace gw::nvml {

using Json = nlohmann::ordered_json;

struct ScenarioGpu {
  GpuState state;                         // info (identity, limits, caps) + initial readings
  std::optional<int> handle_error;        // what nvmlDeviceGetHandleByIndex returns instead
  std::optional<unsigned> pci_device_id;  // 0x233010DE (device << 16 | vendor)
};

struct ScenarioEvent {
  double t_s = 0;  // scenario seconds after nvmlInit, or after load started (after_load)
  unsigned gpu = 0;
  Json set = Json::object();             // device keys to change; null clears a reading
  std::optional<int> error;              // from t every call on the GPU returns it; 0 clears
  std::optional<std::string> hang_call;  // from t this call hangs ("" = the next call)
  int hang_ms = 30000;                   // how long a hang lasts (real ms, not scaled)
  std::optional<unsigned> xid;           // an Xid the NVML event API delivers at t
  // Set for "after_load" entries: t_s counts from when the fake CUDA driver started loading
  // this GPU (gwfake_load_started), not from nvmlInit. Kept in Scenario::load_timeline.
  bool after_load = false;
};

// What the fake CUDA driver plays (fake-cuda/, the "cuda" section of docs/scenario-format.md).
// A copy's bandwidth is the GPU's scripted figure when given, else the link the fake NVML
// reports at that moment (generation x width) times `efficiency`: a link that trains down
// under load slows the copies that follow.
struct CudaDeviceScript {
  unsigned gpu = 0;
  std::optional<double> h2d_gb_s, d2h_gb_s, bidir_gb_s;  // bidir: both directions together
  std::optional<double> kernel_ms;                       // one launch of the load kernel
  std::optional<int> launch_error;                       // CUresult every launch returns
};
struct CudaPeerScript {
  unsigned a = 0, b = 0;  // either order
  bool access = true;
  std::optional<double> gb_s;
};
struct CudaScript {
  double efficiency = 0.82;       // share of the link's per-direction payload figure a copy reaches
  double bidir_factor = 1.7;      // both directions at once vs one direction
  double nvlink_peer_gb_s = 300;  // a pair whose GPUs both have active NVLinks
  double pcie_peer_gb_s = 0;      // other pairs; 0 = the slower link's H2D figure
  double kernel_ms = 20;
  std::optional<int> init_error;  // CUresult cuInit returns (e.g. 100, no device)
  std::vector<CudaDeviceScript> devices;
  std::vector<CudaPeerScript> peers;
};

struct Scenario {
  std::string name;
  std::string description;
  std::optional<std::string> hostname;
  std::optional<std::string> driver_version;
  std::optional<std::string> nvml_version;
  std::optional<int> cuda_driver_version;
  std::optional<int> init_error;  // NVML code nvmlInit returns
  std::vector<ScenarioGpu> gpus;
  std::vector<ScenarioEvent> timeline;       // sorted by t_s (stable)
  std::vector<ScenarioEvent> load_timeline;  // "after_load" entries, sorted by t_s
  std::optional<Json> cuda_json;             // the "cuda" section as written (kept for writing)
  // "pcie_topology": for every pair of GPUs the words `nvidia-smi topo -m` prints (X, PIX, PXB,
  // PHB, NODE, SYS), played by nvmlDeviceGetTopologyCommonAncestor; absent: NOT_SUPPORTED.
  std::optional<std::vector<std::vector<std::string>>> pcie_topology;
};

// The "cuda" section of a scenario (fake-cuda); an empty script when the section is absent.
Result<CudaScript> parse_cuda_script(const Scenario& s, std::string_view origin);

// Parses scenario JSON text; `origin` (the file name) prefixes every error, which names the
// JSON path of the bad field ("scenarios/x.json: devices[2].temp_c: expected an integer").
Result<Scenario> parse_scenario(std::string_view text, std::string_view origin);
std::string write_scenario(const Scenario& s);

// Applies device keys (as in a "devices" entry or a timeline "set") to a GPU.
Status apply_device_fields(const Json& fields, ScenarioGpu& gpu, const std::string& where);
// The device keys describing a GPU (identity, limits, unsupported list, readings).
Json device_fields(const ScenarioGpu& gpu);

// Builds a replayable scenario from consecutive snapshots of one machine: the first one
// gives the devices, each later one a timeline entry per GPU with what changed.
Scenario scenario_from_snapshots(const std::vector<Snapshot>& snaps, std::string name);

// The same, one snapshot at a time, so `capture` can stream a long recording to disk.
class ScenarioBuilder {
 public:
  // Devices from the first snapshot, plus t=0 entries for GPUs already lost or hung.
  void start(const Snapshot& first, std::string name);
  // The timeline entries for what changed since the previous snapshot.
  std::vector<ScenarioEvent> next(const Snapshot& snap);
  Scenario& scenario() { return s_; }

 private:
  Scenario s_;
  int64_t first_ms_ = 0;
  std::vector<GpuState> last_;  // the last readings per GPU while it answered
};

// A scenario file written in pieces: the header with the devices and an open timeline list,
// then one entry at a time, then the end. The pieces concatenated parse like write_scenario's.
std::string scenario_stream_begin(const Scenario& header);  // header.timeline is written too
std::string scenario_stream_event(const ScenarioEvent& e, bool first_entry);
std::string scenario_stream_end();

// NVML return codes by name ("GPU_IS_LOST" <-> 15); numbers are accepted too.
std::optional<int> nvml_return_from_name(std::string_view name);
std::string nvml_return_name(int code);

}  // namespace gw::nvml
