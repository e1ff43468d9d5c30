#include "core/event.h"

#include <gtest/gtest.h>

namespace gw {
namespace {

TEST(NormalizePciBusId, AcceptsTheFormsToolsPrint) {
  EXPECT_EQ(normalize_pci_bus_id("0000:3b:00"), "00000000:3B:00.0");
  EXPECT_EQ(normalize_pci_bus_id("00000000:3B:00.0"), "00000000:3B:00.0");
  EXPECT_EQ(normalize_pci_bus_id("3b:00.0"), "00000000:3B:00.0");
  EXPECT_EQ(normalize_pci_bus_id("0001:c1:1f.7"), "00000001:C1:1F.7");
  EXPECT_EQ(normalize_pci_bus_id("ffff:ff:1f.7"), "0000FFFF:FF:1F.7");
}

TEST(NormalizePciBusId, RejectsNonAddresses) {
  EXPECT_EQ(normalize_pci_bus_id("GPU-1234"), std::nullopt);
  EXPECT_EQ(normalize_pci_bus_id(""), std::nullopt);
  EXPECT_EQ(normalize_pci_bus_id("zz:00.0"), std::nullopt);
  EXPECT_EQ(normalize_pci_bus_id("00:20.0"), std::nullopt);            // device > 0x1f
  EXPECT_EQ(normalize_pci_bus_id("123456789:01:00.0"), std::nullopt);  // a domain of 9 digits
}

}  // namespace
}  // namespace gw
