#include "scenario_model.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

namespace gw::clitest {
namespace {

using nlohmann::json;

constexpr uint64_t kMiB = 1024ULL * 1024ULL;

// Scenario clock reason names -> the snapshot's `clock_reason_names`.
std::string reason_name(const std::string& s) {
  static const std::map<std::string, std::string> names{
      {"applications_clocks", "applications_clocks_setting"},
      {"sw_thermal", "sw_thermal_slowdown"},
      {"hw_thermal", "hw_thermal_slowdown"},
      {"hw_power_brake", "hw_power_brake_slowdown"},
      {"display_clock", "display_clock_setting"}};
  const auto it = names.find(s);
  return it == names.end() ? s : it->second;
}

// Keys of a scenario device the snapshot has no field for.
bool not_in_snapshot(const std::string& key) {
  return key == "pci_device_id" || key == "handle_error" || key == "unsupported";
}

json convert_mib(const json& obj) {
  json out = json::object();
  for (const auto& [key, value] : obj.items()) {
    const auto n = key.size();
    if (n > 4 && key.compare(n - 4, 4, "_mib") == 0 && value.is_number_unsigned()) {
      out[key.substr(0, n - 4) + "_bytes"] = value.get<uint64_t>() * kMiB;
    } else if (value.is_array()) {
      json arr = json::array();
      for (const auto& v : value) arr.push_back(v.is_object() ? convert_mib(v) : v);
      out[key] = arr;
    } else {
      out[key] = value;
    }
  }
  return out;
}

void apply(json& dev, const json& set) {
  const json converted = convert_mib(set);
  for (const auto& [key, value] : converted.items()) {
    if (value.is_null()) {
      dev.erase(key);
    } else {
      dev[key] = value;
    }
  }
}

void compare_processes(const json& want, const json& got, std::vector<std::string>& diffs) {
  if (!got.is_array()) {
    diffs.push_back("processes: expected a list, got " + got.dump());
    return;
  }
  std::set<std::string> w;
  std::set<std::string> g;
  for (const auto& p : want)
    w.insert(json{{"pid", p.at("pid")},
                  {"name", p.value("name", "")},
                  {"used_mem_bytes", p.value("used_mem_bytes", uint64_t{0})},
                  {"graphics", p.value("graphics", false)}}
                 .dump());
  for (const auto& p : got)
    g.insert(json{{"pid", p.at("pid")},
                  {"name", p.value("name", "")},
                  {"used_mem_bytes", p.value("used_mem_bytes", uint64_t{0})},
                  {"graphics", p.value("graphics", false)}}
                 .dump());
  if (w != g) diffs.push_back("processes: expected " + want.dump() + ", got " + got.dump());
}

void compare_nvlinks(const json& want, const json& got, std::vector<std::string>& diffs) {
  if (!got.is_array() || got.size() != want.size()) {
    diffs.push_back("nvlinks: expected " + std::to_string(want.size()) + " links, got " +
                    got.dump());
    return;
  }
  for (size_t i = 0; i < want.size(); ++i)
    for (const auto& [key, value] : want[i].items())
      if (got[i].value(key, json()) != value)
        diffs.push_back("nvlinks[" + std::to_string(i) + "]." + key + ": expected " + value.dump() +
                        ", got " + got[i].value(key, json()).dump());
}

void compare_clock_reasons(const json& want, const json& sample, std::vector<std::string>& diffs) {
  if (!want.is_array()) {
    if (sample.value("clock_reasons", json()) != want)
      diffs.push_back("clock_reasons: expected mask " + want.dump() + ", got " +
                      sample.value("clock_reasons", json()).dump());
    return;
  }
  std::set<std::string> w;
  for (const auto& r : want) w.insert(reason_name(r.get<std::string>()));
  std::set<std::string> g;
  for (const auto& r : sample.value("clock_reason_names", json::array()))
    g.insert(r.get<std::string>());
  if (w != g)
    diffs.push_back("clock_reason_names: expected " + json(w).dump() + ", got " + json(g).dump());
}

// A reading the scenario leaves out is unknown to the fake (NOT_SUPPORTED): the snapshot must
// say null, never a made-up 0.
void check_unset_are_null(const json& expected, const json& sample,
                          std::vector<std::string>& diffs) {
  // Derived by the reader from keys the scenario does set.
  static const std::set<std::string> derived{"mem_free_bytes", "clock_reason_names", "nvlinks"};
  for (const auto& [key, got] : sample.items()) {
    if (expected.contains(key) || derived.count(key) != 0) continue;
    if (key == "violations") {
      for (const auto& [k, v] : got.items())
        if (!v.is_null())
          diffs.push_back("violations." + k + " reads " + v.dump() + ", expected null");
    } else if (!got.is_null()) {
      diffs.push_back(key + " reads " + got.dump() + " but the scenario leaves it unknown");
    }
  }
}

}  // namespace

json load_json_file(const std::filesystem::path& p) {
  std::ifstream f(p);
  if (!f) throw std::runtime_error("cannot open " + p.string());
  return json::parse(f);
}

std::string normalize_bus_id(const std::string& id) {
  std::string up;
  for (const char c : id)
    up.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  const auto colons = std::count(up.begin(), up.end(), ':');
  const std::string domain = colons == 2 ? up.substr(0, up.find(':')) : "0";
  const std::string rest = colons == 2 ? up.substr(up.find(':') + 1) : up;
  return std::string(8 - std::min<size_t>(8, domain.size()), '0') + domain + ":" + rest;
}

std::vector<json> scenario_devices_at(const json& scenario, double t_s) {
  const json defaults = convert_mib(scenario.value("defaults", json::object()));
  std::vector<json> devices;
  for (const auto& d : scenario.at("devices")) {
    json dev = defaults;
    apply(dev, d);
    devices.push_back(dev);
  }
  const json timeline = scenario.value("timeline", json::array());
  // "after_load" entries wait for doctor --stress's load: never part of a plain reading.
  std::vector<json> events;
  for (const json& e : timeline)
    if (e.contains("t")) events.push_back(e);
  std::stable_sort(events.begin(), events.end(), [](const json& a, const json& b) {
    return a.at("t").get<double>() < b.at("t").get<double>();
  });
  for (const auto& e : events) {
    if (e.at("t").get<double>() > t_s || !e.contains("set")) continue;
    for (size_t i = 0; i < devices.size(); ++i)
      if (e.at("gpu") == "all" || e.at("gpu") == i) apply(devices[i], e.at("set"));
  }
  return devices;
}

std::vector<std::string> compare_gpu(const json& expected, const json& gpu) {
  std::vector<std::string> diffs;
  const json& device = gpu.at("device");
  const json& sample = gpu.at("sample");
  const json caps = device.value("capabilities", json::array());
  for (const auto& name : expected.value("unsupported", json::array()))
    if (std::find(caps.begin(), caps.end(), name) != caps.end())
      diffs.push_back("capability " + name.dump() + " is unsupported in the scenario but listed");
  for (const auto& [key, want] : expected.items()) {
    if (not_in_snapshot(key)) continue;
    if (key == "pci_bus_id") {
      if (device.value(key, json()) != normalize_bus_id(want.get<std::string>()))
        diffs.push_back("pci_bus_id: expected " + normalize_bus_id(want) + ", got " +
                        device.value(key, json()).dump());
    } else if (key == "clock_reasons") {
      compare_clock_reasons(want, sample, diffs);
    } else if (key == "processes") {
      compare_processes(want, sample.value(key, json()), diffs);
    } else if (key == "violations") {
      // A partial object: the counters it leaves out are unknown (null).
      const json got = sample.value(key, json::object());
      for (const auto& [k, v] : got.items())
        if (v != want.value(k, json()))
          diffs.push_back("violations." + k + ": expected " + want.value(k, json()).dump() +
                          ", got " + v.dump());
    } else if (key == "nvlinks") {
      compare_nvlinks(want, sample.value(key, json()), diffs);
    } else if (sample.contains(key) || device.contains(key)) {
      // mem_total_bytes is in both; every other key in exactly one of them.
      for (const json* where : {&sample, &device})
        if (where->contains(key) && where->at(key) != want)
          diffs.push_back(key + ": expected " + want.dump() + ", got " + where->at(key).dump());
    } else {
      diffs.push_back(key + ": set by the scenario but not in the snapshot");
    }
  }
  check_unset_are_null(expected, sample, diffs);
  return diffs;
}

}  // namespace gw::clitest
