#include "sources/nvml/scenario.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <set>

#include "core/text_safety.h"
#include "sources/nvml/nvml_types.h"

namespace gw::nvml {
namespace {

struct RetName {
  int code;
  const char* name;
};
constexpr std::array<RetName, 25> kReturnNames = {{{0, "SUCCESS"},
                                                   {1, "UNINITIALIZED"},
                                                   {2, "INVALID_ARGUMENT"},
                                                   {3, "NOT_SUPPORTED"},
                                                   {4, "NO_PERMISSION"},
                                                   {6, "NOT_FOUND"},
                                                   {7, "INSUFFICIENT_SIZE"},
                                                   {8, "INSUFFICIENT_POWER"},
                                                   {9, "DRIVER_NOT_LOADED"},
                                                   {10, "TIMEOUT"},
                                                   {11, "IRQ_ISSUE"},
                                                   {12, "LIBRARY_NOT_FOUND"},
                                                   {13, "FUNCTION_NOT_FOUND"},
                                                   {14, "CORRUPTED_INFOROM"},
                                                   {15, "GPU_IS_LOST"},
                                                   {16, "RESET_REQUIRED"},
                                                   {17, "OPERATING_SYSTEM"},
                                                   {18, "LIB_RM_VERSION_MISMATCH"},
                                                   {19, "IN_USE"},
                                                   {20, "MEMORY"},
                                                   {21, "NO_DATA"},
                                                   {23, "INSUFFICIENT_RESOURCES"},
                                                   {27, "NOT_READY"},
                                                   {28, "GPU_NOT_FOUND"},
                                                   {999, "UNKNOWN"}}};

Error bad(const std::string& where, const std::string& what) {
  return make_error("scenario.bad_field", what, where);
}

Result<ScenarioEvent> parse_event(const Json& e, const Scenario& s, const std::string& where,
                                  std::vector<ScenarioEvent>& extra) {
  if (!e.is_object()) return bad(where, "expected an object");
  ScenarioEvent ev;
  std::set<std::string> used{"t", "after_load", "gpu", "set", "error", "hang", "xid"};
  ev.after_load = e.contains("after_load");
  const char* tkey = ev.after_load ? "after_load" : "t";
  if (ev.after_load && e.contains("t"))
    return bad(where, "give either \"t\" or \"after_load\", not both");
  if (!e.contains(tkey) || !e[tkey].is_number() || e[tkey].get<double>() < 0)
    return bad(where + "." + tkey, "expected seconds >= 0");
  ev.t_s = e[tkey].get<double>();
  const Json gpu = e.value("gpu", Json());
  const bool all = gpu.is_string() && gpu.get<std::string>() == "all";
  if (!all && !(gpu.is_number_unsigned() && gpu.get<size_t>() < s.gpus.size()))
    return bad(where + ".gpu", "expected a device index below " + std::to_string(s.gpus.size()) +
                                   " (the length of devices) or \"all\"");
  ev.gpu = all ? 0 : gpu.get<unsigned>();
  if (auto it = e.find("set"); it != e.end()) {
    ScenarioGpu scratch = s.gpus.at(ev.gpu);  // validate now, not when the fake plays it
    if (Status st = apply_device_fields(*it, scratch, where + ".set"); !st) return st.error();
    ev.set = *it;
  }
  if (auto it = e.find("error"); it != e.end()) {
    ev.error = nvml_return_from_name(it->is_string() ? it->get<std::string>() : it->dump());
    if (!ev.error) return bad(where + ".error", "unknown NVML return code " + it->dump());
  }
  if (auto it = e.find("hang"); it != e.end()) {
    if (!it->is_object()) return bad(where + ".hang", "expected {\"call\": NAME, \"ms\": N}");
    if (it->contains("call") && !(*it)["call"].is_string())
      return bad(where + ".hang.call", "expected an NVML function name");
    ev.hang_call = it->value("call", std::string());
    const Json ms = it->value("ms", Json(30000));
    if (!ms.is_number_unsigned() || ms.get<uint64_t>() > 3600000)
      return bad(where + ".hang.ms", "expected milliseconds between 0 and 3600000");
    ev.hang_ms = ms.get<int>();
  }
  if (auto it = e.find("xid"); it != e.end()) {
    if (!it->is_number_unsigned() || it->get<uint64_t>() == 0 || it->get<uint64_t>() > 999)
      return bad(where + ".xid", "expected an Xid number between 1 and 999");
    ev.xid = it->get<unsigned>();
  }
  for (const auto& [k, v] : e.items())
    if (!used.count(k)) return bad(where + "." + k, "unknown timeline key");
  for (unsigned g = 1; all && g < s.gpus.size(); ++g) {
    ScenarioEvent copy = ev;
    copy.gpu = g;
    extra.push_back(copy);
  }
  return ev;
}

Status parse_top(const Json& j, Scenario& s, const std::string& o) {
  std::set<std::string> used{"name",           "description",  "hostname",
                             "driver_version", "nvml_version", "cuda_driver_version",
                             "init_error",     "defaults",     "devices",
                             "timeline",       "cuda",         "pcie_topology"};
  for (const auto& [k, v] : j.items())
    if (!used.count(k)) return bad(o + ": " + k, "unknown top-level key");
  auto str = [&](const char* k, std::optional<std::string>& out) -> Status {
    if (!j.contains(k)) return {};
    if (!j[k].is_string()) return bad(o + ": " + k, "expected a string");
    out = j[k].get<std::string>();
    return {};
  };
  std::optional<std::string> name, description;
  if (Status st = str("name", name); !st) return st;
  if (Status st = str("description", description); !st) return st;
  s.name = name.value_or("");
  s.description = description.value_or("");
  if (Status st = str("hostname", s.hostname); !st) return st;
  if (Status st = str("driver_version", s.driver_version); !st) return st;
  if (Status st = str("nvml_version", s.nvml_version); !st) return st;
  if (j.contains("cuda_driver_version")) {
    const Json& v = j["cuda_driver_version"];
    if (!v.is_number_integer() ||
        (v.is_number_unsigned() ? v.get<uint64_t>() > 1000000
                                : v.get<int64_t>() < 0 || v.get<int64_t>() > 1000000))
      return bad(o + ": cuda_driver_version", "expected an integer like 12040");
    s.cuda_driver_version = j["cuda_driver_version"].get<int>();
  }
  if (j.contains("init_error")) {
    const Json& e = j["init_error"];
    s.init_error = nvml_return_from_name(e.is_string() ? e.get<std::string>() : e.dump());
    if (!s.init_error) return bad(o + ": init_error", "unknown NVML return code " + e.dump());
  }
  return {};
}

Result<Scenario> parse_object(const Json& j, const std::string& o);

// "pcie_topology": an n x n list of topo -m words, "X" on the diagonal, the same both ways.
Status parse_pcie_topology(const Json& j, Scenario& s, const std::string& o) {
  if (!j.contains("pcie_topology")) return {};
  const Json& t = j["pcie_topology"];
  const size_t n = s.gpus.size();
  const std::string w = o + ": pcie_topology";
  if (!t.is_array() || t.size() != n)
    return bad(w, "expected a list of " + std::to_string(n) + " rows (one per device)");
  std::vector<std::vector<std::string>> m(n);
  for (size_t a = 0; a < n; ++a) {
    if (!t[a].is_array() || t[a].size() != n)
      return bad(w + "[" + std::to_string(a) + "]", "expected " + std::to_string(n) + " words");
    for (size_t b = 0; b < n; ++b) {
      const Json& x = t[a][b];
      if (!x.is_string() || topology_level(x.get<std::string>()) < 0 ||
          (a == b) != (x.get<std::string>() == "X"))
        return bad(w + "[" + std::to_string(a) + "][" + std::to_string(b) + "]",
                   "expected X on the diagonal, else PIX, PXB, PHB, NODE or SYS");
      m[a].push_back(x.get<std::string>());
    }
  }
  for (size_t a = 0; a < n; ++a)
    for (size_t b = 0; b < a; ++b)
      if (m[a][b] != m[b][a])
        return bad(w, "GPU " + std::to_string(a) + " to " + std::to_string(b) + " is " + m[a][b] +
                          " but " + std::to_string(b) + " to " + std::to_string(a) + " is " +
                          m[b][a]);
  s.pcie_topology = std::move(m);
  return {};
}

}  // namespace

std::optional<int> nvml_return_from_name(std::string_view name) {
  if (name.starts_with("NVML_ERROR_")) name.remove_prefix(11);
  for (const auto& r : kReturnNames)
    if (name == r.name) return r.code;
  int v = 0;
  const auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), v);
  if (ec == std::errc() && p == name.data() + name.size() && v >= 0) return v;
  return std::nullopt;
}

std::string nvml_return_name(int code) {
  for (const auto& r : kReturnNames)
    if (r.code == code) return r.name;
  return std::to_string(code);
}

Result<Scenario> parse_scenario(std::string_view text, std::string_view origin) {
  const std::string o(origin);
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // parse_error for bad syntax, out_of_range for a number no double holds (1e999).
    return make_error("scenario.bad_json", e.what(), o);
  }
  if (!j.is_object()) return make_error("scenario.bad_json", "expected a JSON object", o);
  // Every key is type-checked where it is read; this net turns a check we missed into an
  // error naming the file instead of an exception escaping into the fake driver.
  try {
    return parse_object(j, o);
  } catch (const nlohmann::json::exception& e) {
    return bad(o, std::string("a value has the wrong JSON type: ") + e.what());
  }
}

namespace {

Result<Scenario> parse_object(const Json& j, const std::string& o) {
  Scenario s;
  if (Status st = parse_top(j, s, o); !st) return st.error();
  const Json defaults = j.value("defaults", Json::object());
  if (!defaults.is_object()) return bad(o + ": defaults", "expected an object");
  const Json devices = j.value("devices", Json::array());
  if (!devices.is_array()) return bad(o + ": devices", "expected a list");
  for (size_t i = 0; i < devices.size(); ++i) {
    ScenarioGpu g;
    for (size_t c = 0; c < kCapabilityCount; ++c) g.state.info.caps.set(static_cast<Capability>(c));
    g.state.info.index = static_cast<unsigned>(i);
    const std::string w = o + ": devices[" + std::to_string(i) + "]";
    if (Status st = apply_device_fields(defaults, g, o + ": defaults"); !st) return st.error();
    if (Status st = apply_device_fields(devices[i], g, w); !st) return st.error();
    s.gpus.push_back(std::move(g));
  }
  const Json timeline = j.value("timeline", Json::array());
  if (!timeline.is_array()) return bad(o + ": timeline", "expected a list");
  for (size_t i = 0; i < timeline.size(); ++i) {
    std::vector<ScenarioEvent> extra;
    auto ev = parse_event(timeline[i], s, o + ": timeline[" + std::to_string(i) + "]", extra);
    if (!ev) return ev.error();
    auto& into = ev->after_load ? s.load_timeline : s.timeline;
    into.push_back(std::move(*ev));
    for (auto& x : extra) into.push_back(std::move(x));
  }
  const auto by_time = [](const ScenarioEvent& a, const ScenarioEvent& b) { return a.t_s < b.t_s; };
  std::stable_sort(s.timeline.begin(), s.timeline.end(), by_time);
  std::stable_sort(s.load_timeline.begin(), s.load_timeline.end(), by_time);
  if (Status st = parse_pcie_topology(j, s, o); !st) return st.error();
  if (j.contains("cuda")) {
    s.cuda_json = j["cuda"];
    if (auto c = parse_cuda_script(s, o); !c) return c.error();  // errors at load, not in play
  }
  return s;
}

}  // namespace

namespace {

Json event_json(const ScenarioEvent& e) {
  Json ej = {{e.after_load ? "after_load" : "t", e.t_s}, {"gpu", e.gpu}};
  if (!e.set.empty()) ej["set"] = e.set;
  if (e.error) ej["error"] = nvml_return_name(*e.error);
  if (e.hang_call) ej["hang"] = {{"call", *e.hang_call}, {"ms", e.hang_ms}};
  if (e.xid) ej["xid"] = *e.xid;
  return ej;
}

}  // namespace

std::string write_scenario(const Scenario& s) {
  Json j = Json::object();
  if (!s.name.empty()) j["name"] = s.name;
  if (!s.description.empty()) j["description"] = s.description;
  if (s.hostname) j["hostname"] = *s.hostname;
  if (s.driver_version) j["driver_version"] = *s.driver_version;
  if (s.nvml_version) j["nvml_version"] = *s.nvml_version;
  if (s.cuda_driver_version) j["cuda_driver_version"] = *s.cuda_driver_version;
  if (s.init_error) j["init_error"] = nvml_return_name(*s.init_error);
  Json devices = Json::array();
  for (const ScenarioGpu& g : s.gpus) devices.push_back(device_fields(g));
  j["devices"] = devices;
  Json timeline = Json::array();
  for (const ScenarioEvent& e : s.timeline) timeline.push_back(event_json(e));
  for (const ScenarioEvent& e : s.load_timeline) timeline.push_back(event_json(e));
  if (s.cuda_json) j["cuda"] = *s.cuda_json;
  if (s.pcie_topology) j["pcie_topology"] = *s.pcie_topology;
  j["timeline"] = timeline;
  return dump_json(j) + "\n";
}

std::string scenario_stream_begin(const Scenario& header) {
  Scenario h = header;
  h.timeline.clear();
  std::string text = write_scenario(h);
  // write_scenario ends with `"timeline": []\n}\n`: reopen that list.
  static constexpr std::string_view kTail = "[]\n}\n";
  if (text.ends_with(kTail)) text.resize(text.size() - kTail.size());
  text += "[";
  for (size_t i = 0; i < header.timeline.size(); ++i)
    text += scenario_stream_event(header.timeline[i], i == 0);
  return text;
}

std::string scenario_stream_event(const ScenarioEvent& e, bool first_entry) {
  return std::string(first_entry ? "\n    " : ",\n    ") + dump_json(event_json(e), -1);
}

std::string scenario_stream_end() {
  return "\n  ]\n}\n";
}

}  // namespace gw::nvml
