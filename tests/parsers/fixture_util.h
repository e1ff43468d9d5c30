// Test helpers: read a fixture capture by folder and file name.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/snapshot.h"

namespace gw::test {

inline std::string fixture_path(const std::string& id, const std::string& file) {
  return std::string(GW_SOURCE_DIR) + "/fixtures/captures/" + id + "/" + file;
}

inline std::string read_fixture(const std::string& id, const std::string& file) {
  std::ifstream in(fixture_path(id, file), std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << id << "/" << file;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline const GpuState* gpu_by_bus(const Snapshot& s, const std::string& bus) {
  for (const auto& g : s.gpus)
    if (g.info.pci_bus_id == bus) return &g;
  return nullptr;
}

inline constexpr uint64_t kMiB = 1024ULL * 1024ULL;

}  // namespace gw::test
