// What a scenario file says each GPU reads at a given scenario time, in the snapshot's own key
// names, so tests can compare `status --json` with the file instead of hard-coding numbers.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gw::clitest {

nlohmann::json load_json_file(const std::filesystem::path& p);

// Per device: `defaults` merged with the device's own keys, then every timeline `set` with
// t <= `t_s` applied (a null clears the key), `..._mib` keys converted to `..._bytes`.
std::vector<nlohmann::json> scenario_devices_at(const nlohmann::json& scenario, double t_s);

// Compares one scenario device (from scenario_devices_at) with one `gpus[i]` object of a
// snapshot. Returns one message per difference; empty when they agree. Every scenario key must
// be found in the snapshot (or be one the snapshot does not carry, e.g. pci_device_id), and a
// capability the scenario marks unsupported must be absent from `device.capabilities`.
std::vector<std::string> compare_gpu(const nlohmann::json& expected, const nlohmann::json& gpu);

// "0000:3b:00.0" / "3B:00.0" -> "00000000:3B:00.0" (the snapshot's form).
std::string normalize_bus_id(const std::string& id);

}  // namespace gw::clitest
