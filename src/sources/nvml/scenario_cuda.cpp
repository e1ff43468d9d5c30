// The "cuda" section of a scenario: what the fake CUDA driver plays (bandwidths, peer access,
// kernel time). Parsed here, beside the rest of the format, so a bad value is an error naming
// its JSON path when the scenario loads, never a surprise in the middle of a stress run.
#include <set>

#include "sources/nvml/scenario.h"

namespace gw::nvml {
namespace {

Error bad(const std::string& where, const std::string& what) {
  return make_error("scenario.bad_field", what, where);
}

Status unknown_keys(const Json& j, const std::set<std::string>& known, const std::string& w) {
  for (const auto& [k, v] : j.items())
    if (!known.count(k)) return bad(w + "." + k, "unknown key");
  return {};
}

// A positive number of GB/s, ms or a share; `max` bounds what a typo could make absurd.
Status positive(const Json& j, const char* key, double max, std::optional<double>& out,
                const std::string& w) {
  if (!j.contains(key)) return {};
  const Json& v = j[key];
  if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > max)
    return bad(w + "." + key, "expected a number above 0 and at most " + std::to_string(max));
  out = v.get<double>();
  return {};
}

Result<unsigned> gpu_index(const Json& v, size_t gpus, const std::string& w) {
  if (!v.is_number_unsigned() || v.get<uint64_t>() >= gpus)
    return bad(w, "expected a device index below " + std::to_string(gpus));
  return v.get<unsigned>();
}

Result<CudaDeviceScript> parse_device(const Json& d, size_t gpus, const std::string& w) {
  if (!d.is_object()) return bad(w, "expected an object");
  if (Status st = unknown_keys(
          d, {"gpu", "h2d_gb_s", "d2h_gb_s", "bidir_gb_s", "kernel_ms", "launch_error"}, w);
      !st)
    return st.error();
  CudaDeviceScript s;
  auto g = gpu_index(d.value("gpu", Json()), gpus, w + ".gpu");
  if (!g) return g.error();
  s.gpu = *g;
  for (auto [key, slot] : {std::pair{"h2d_gb_s", &s.h2d_gb_s}, std::pair{"d2h_gb_s", &s.d2h_gb_s},
                           std::pair{"bidir_gb_s", &s.bidir_gb_s}})
    if (Status st = positive(d, key, 10000, *slot, w); !st) return st.error();
  if (Status st = positive(d, "kernel_ms", 60000, s.kernel_ms, w); !st) return st.error();
  if (d.contains("launch_error")) {
    if (!d["launch_error"].is_number_unsigned())
      return bad(w + ".launch_error", "expected a CUresult number, e.g. 719");
    s.launch_error = d["launch_error"].get<int>();
  }
  return s;
}

Result<CudaPeerScript> parse_peer(const Json& p, size_t gpus, const std::string& w) {
  if (!p.is_object()) return bad(w, "expected an object");
  if (Status st = unknown_keys(p, {"gpus", "access", "gb_s"}, w); !st) return st.error();
  const Json pair = p.value("gpus", Json());
  if (!pair.is_array() || pair.size() != 2) return bad(w + ".gpus", "expected two device indexes");
  CudaPeerScript s;
  auto a = gpu_index(pair[0], gpus, w + ".gpus[0]");
  if (!a) return a.error();
  auto b = gpu_index(pair[1], gpus, w + ".gpus[1]");
  if (!b) return b.error();
  if (*a == *b) return bad(w + ".gpus", "a GPU is not its own peer");
  s.a = *a;
  s.b = *b;
  if (p.contains("access")) {
    if (!p["access"].is_boolean()) return bad(w + ".access", "expected true or false");
    s.access = p["access"].get<bool>();
  }
  if (Status st = positive(p, "gb_s", 10000, s.gb_s, w); !st) return st.error();
  return s;
}

Status parse_numbers(const Json& c, CudaScript& s, const std::string& w) {
  std::optional<double> v;
  const std::pair<const char*, double*> keys[] = {{"efficiency", &s.efficiency},
                                                  {"bidir_factor", &s.bidir_factor},
                                                  {"nvlink_peer_gb_s", &s.nvlink_peer_gb_s},
                                                  {"pcie_peer_gb_s", &s.pcie_peer_gb_s},
                                                  {"kernel_ms", &s.kernel_ms}};
  for (auto [key, slot] : keys) {
    v.reset();
    if (Status st = positive(c, key, 60000, v, w); !st) return st;
    if (v) *slot = *v;
  }
  if (s.efficiency > 1) return bad(w + ".efficiency", "expected a share between 0 and 1");
  if (s.bidir_factor > 2) return bad(w + ".bidir_factor", "expected at most 2");
  if (c.contains("init_error")) {
    if (!c["init_error"].is_number_unsigned())
      return bad(w + ".init_error", "expected a CUresult number, e.g. 100");
    s.init_error = c["init_error"].get<int>();
  }
  return {};
}

}  // namespace

Result<CudaScript> parse_cuda_script(const Scenario& sc, std::string_view origin) {
  CudaScript s;
  if (!sc.cuda_json) return s;
  const Json& c = *sc.cuda_json;
  const std::string w = std::string(origin) + ": cuda";
  if (!c.is_object()) return bad(w, "expected an object");
  if (Status st = unknown_keys(c,
                               {"efficiency", "bidir_factor", "nvlink_peer_gb_s", "pcie_peer_gb_s",
                                "kernel_ms", "init_error", "devices", "peers"},
                               w);
      !st)
    return st.error();
  if (Status st = parse_numbers(c, s, w); !st) return st.error();
  const Json devices = c.value("devices", Json::array());
  const Json peers = c.value("peers", Json::array());
  if (!devices.is_array()) return bad(w + ".devices", "expected a list");
  if (!peers.is_array()) return bad(w + ".peers", "expected a list");
  for (size_t i = 0; i < devices.size(); ++i) {
    auto d = parse_device(devices[i], sc.gpus.size(), w + ".devices[" + std::to_string(i) + "]");
    if (!d) return d.error();
    s.devices.push_back(*d);
  }
  for (size_t i = 0; i < peers.size(); ++i) {
    auto p = parse_peer(peers[i], sc.gpus.size(), w + ".peers[" + std::to_string(i) + "]");
    if (!p) return p.error();
    s.peers.push_back(*p);
  }
  return s;
}

}  // namespace gw::nvml
