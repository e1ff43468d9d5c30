// Test helpers: read a fixture capture by folder and file name.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/snapshot.h"

namespace gw::test {

// The lines of a text without their '\n' (the class-transformation tests rebuild texts from them).
inline std::vector<std::string> lines_of(const std::string& t) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p < t.size()) {
    const size_t nl = t.find('\n', p);
    out.push_back(t.substr(p, nl == std::string::npos ? std::string::npos : nl - p));
    p = nl == std::string::npos ? t.size() : nl + 1;
  }
  return out;
}

// The text with every line ended by "\r\n" / begun with four spaces.
inline std::string crlf(const std::string& t) {
  std::string out;
  for (const std::string& l : lines_of(t)) out += l + "\r\n";
  return out;
}
inline std::string indented(const std::string& t) {
  std::string out;
  for (const std::string& l : lines_of(t)) out += "    " + l + "\n";
  return out;
}

// A capture as people paste it too: CRLF-ended, re-indented, after and before a kernel log
// (capture 009), inside a bug report's sections. Each with its name for the failure message.
inline std::vector<std::pair<std::string, std::string>> class_variants(const std::string& log,
                                                                       const std::string& dmesg) {
  const std::string sep(44, '_');
  return {{"crlf", crlf(log)},
          {"indented", indented(log)},
          {"after-dmesg", dmesg + log},
          {"before-dmesg", log + "\n" + dmesg},
          {"bug-report", sep + "\n\nnvidia-smi\n\n" + log + "\n" + sep + "\n\ndmesg:\n\n" + dmesg}};
}

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
