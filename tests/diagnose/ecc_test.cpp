#include <gtest/gtest.h>

#include "builders.h"

namespace gw {
namespace {

using test::find;
using test::idle_gpu;
using test::snapshot;

TEST(EccDbeVolatile, FiresCritical) {
  GpuState g = idle_gpu(0);
  g.sample.ecc_dbe_volatile = 2;
  const auto x = find(diagnose(snapshot({g})), "ecc.dbe_volatile", 0u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kCritical);
}

TEST(EccDbeVolatile, LifetimeSbeAloneIsNotAFault) {
  // Fixture 023: 3 aggregate single-bit errors, zero retired pages.
  GpuState g = idle_gpu(0);
  g.sample.ecc_sbe_aggregate = 3;
  g.sample.ecc_dbe_aggregate = 0;
  g.sample.retired_pages_sbe = 0;
  g.sample.retired_pages_dbe = 0;
  g.sample.retired_pages_pending = false;
  EXPECT_TRUE(diagnose(snapshot({g})).empty());
}

TEST(EccRetiredPages, SixtyThreeTotalIsCritical) {
  GpuState g = idle_gpu(0);
  g.sample.retired_pages_sbe = 50;
  g.sample.retired_pages_dbe = 13;
  const auto x = find(diagnose(snapshot({g})), "ecc.retired_pages_limit", 0u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kCritical);
}

TEST(EccRetiredPages, SixtyTwoTotalIsSilent) {
  GpuState g = idle_gpu(0);
  g.sample.retired_pages_sbe = 50;
  g.sample.retired_pages_dbe = 12;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "ecc.retired_pages_limit"));
}

TEST(EccRetiredPages, SixteenDbeWarnsWithoutARate) {
  GpuState g = idle_gpu(0);
  g.sample.retired_pages_sbe = 0;
  g.sample.retired_pages_dbe = 16;
  const auto x = find(diagnose(snapshot({g})), "ecc.retired_pages_limit", 0u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kWarning);
  g.sample.retired_pages_dbe = 15;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "ecc.retired_pages_limit"));
}

TEST(EccRetirementPending, FiresOnPendingSilentOtherwise) {
  GpuState g = idle_gpu(0);
  g.sample.retired_pages_pending = true;
  EXPECT_TRUE(find(diagnose(snapshot({g})), "ecc.retirement_pending", 0u));
  g.sample.retired_pages_pending = false;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "ecc.retirement_pending"));
}

TEST(EccRowRemapPending, NeedsResetNotReplacement) {
  // Fixture 001: 4 uncorrectable rows, pending Yes, no failure.
  GpuState g = idle_gpu(0);
  g.sample.remapped_rows_uncorrectable = 4;
  g.sample.remapped_rows_correctable = 0;
  g.sample.remapped_rows_pending = true;
  const auto f = diagnose(snapshot({g}));
  const auto x = find(f, "ecc.row_remap_pending", 0u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kWarning);
  EXPECT_NE(x->remedy.find("nvidia-smi -r"), std::string::npos);
  EXPECT_NE(test::evidence(*x).find("4 row(s) remapped for uncorrectable errors"),
            std::string::npos);
  EXPECT_FALSE(find(f, "ecc.row_remap_failure"));
}

TEST(EccRowRemapPending, SilentWithRemappedRowsButNothingPending) {
  GpuState g = idle_gpu(0);
  g.sample.remapped_rows_correctable = 2;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "ecc.row_remap_pending"));
}

TEST(EccRowRemapFailure, ReplaceTheGpu) {
  GpuState g = idle_gpu(0);
  g.sample.remapped_rows_failure = true;
  const auto x = find(diagnose(snapshot({g})), "ecc.row_remap_failure", 0u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kCritical);
  EXPECT_NE(x->remedy.find("RMA"), std::string::npos);
  g.sample.remapped_rows_failure.reset();  // unknown (MIG, fixture 020) is not a failure
  EXPECT_FALSE(find(diagnose(snapshot({g})), "ecc.row_remap_failure"));
}

}  // namespace
}  // namespace gw
