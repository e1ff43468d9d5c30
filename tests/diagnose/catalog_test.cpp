#include <gtest/gtest.h>

#include "diagnose/catalogs.h"

namespace gw {
namespace {

TEST(XidCatalog, LoadsEveryRowFromTheEmbeddedTsv) {
  // data/xid-catalog.tsv covers Xid 1..173, one row each.
  ASSERT_EQ(xid_catalog().size(), 173u);
  EXPECT_EQ(xid_catalog().front().xid, 1u);
  EXPECT_EQ(xid_catalog().back().xid, 173u);
}

TEST(XidCatalog, MapsKnownXidsToMeaningCauseAndAction) {
  const XidInfo* x79 = lookup_xid(79);
  ASSERT_NE(x79, nullptr);
  EXPECT_EQ(x79->short_name, "GPU has fallen off the bus");
  EXPECT_EQ(x79->cause, XidCause::kHardware);
  EXPECT_EQ(x79->severity, "critical");
  EXPECT_EQ(x79->action, "drain node & reboot");
  EXPECT_EQ(lookup_xid(13)->cause, XidCause::kApplication);
  EXPECT_EQ(lookup_xid(48)->cause, XidCause::kMemory);
  EXPECT_EQ(lookup_xid(74)->cause, XidCause::kNvLink);
  EXPECT_EQ(lookup_xid(119)->cause, XidCause::kDriver);
  EXPECT_EQ(lookup_xid(54)->cause, XidCause::kThermalPower);
  EXPECT_EQ(lookup_xid(14)->cause, XidCause::kOther);  // "Unused"
}

TEST(XidCatalog, UnknownNumbersAreNotInventedRows) {
  EXPECT_EQ(lookup_xid(0), nullptr);
  EXPECT_EQ(lookup_xid(999), nullptr);
}

TEST(DriverVersion, ParsesAndCompares) {
  const auto v = parse_driver_version("535.129.03");
  ASSERT_TRUE(v);
  EXPECT_EQ((*v)[0], 535u);
  EXPECT_EQ((*v)[1], 129u);
  EXPECT_EQ((*v)[2], 3u);
  EXPECT_EQ(driver_version_string(*v), "535.129.03");
  EXPECT_LT(*parse_driver_version("418.39"), *parse_driver_version("418.96"));
  EXPECT_EQ(driver_version_string(*parse_driver_version("580")), "580");
  EXPECT_FALSE(parse_driver_version("abc"));
}

TEST(CudaDriverNeed, UsesTheGaRowAndMinorCompatFloor) {
  const auto n = cuda_driver_need("12.4");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->cuda, "12.4");
  EXPECT_EQ(driver_version_string(n->toolkit_min), "550.54.14");  // GA, not Update 1
  ASSERT_TRUE(n->compat_min);
  EXPECT_EQ(driver_version_string(*n->compat_min), "525.60.13");
  // cu121-style tags and patch versions resolve to the same minor.
  EXPECT_EQ(cuda_driver_need("cu121")->cuda, "12.1");
  EXPECT_EQ(driver_version_string(cuda_driver_need("11.8.0")->toolkit_min), "520.61.05");
  // Before CUDA 11 there is no minor-version compatibility.
  EXPECT_FALSE(cuda_driver_need("10.2")->compat_min);
  EXPECT_FALSE(cuda_driver_need("7.5"));
}

}  // namespace
}  // namespace gw
