// The CUDA error catalog's rules (diagnose/cuda_errors.cpp): one finding per error row, the next
// step of its row, and the GPU state that explains it when the capture shows one.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "builders.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::evidence;
using test::find;

std::vector<Finding> doctor_text(const std::string& text) {
  Observation obs;
  add_capture(text, "app.log", obs);
  return diagnose(obs);
}

TEST(CudaErrorRules, EachRowGivesItsFindingOnce) {
  const auto f = doctor_text(
      "RuntimeError: CUDA error: system not yet initialized\n"
      "RuntimeError: CUDA error: system not yet initialized\n"
      "E0101 cuda_driver.cc:1] failed call to cuInit: CUDA_ERROR_UNSUPPORTED_PTX_VERSION\n"
      "RuntimeError: CUDA error: invalid resource handle\n");
  EXPECT_EQ(test::count(f, "cuda.system_not_ready"), 1u);
  EXPECT_EQ(find(f, "cuda.system_not_ready")->severity, Severity::kCritical);
  EXPECT_NE(find(f, "cuda.system_not_ready")->remedy.find("nvidia-fabricmanager"),
            std::string::npos);
  EXPECT_EQ(test::count(f, "cuda.ptx_unsupported"), 1u);
  const auto other = find(f, "app.cuda_error");  // a row without a rule: named, info
  ASSERT_TRUE(other);
  EXPECT_NE(other->title.find("cudaErrorInvalidResourceHandle (400)"), std::string::npos)
      << other->title;
}

TEST(CudaErrorRules, AnXidInTheCaptureExplainsAnUnknownError) {
  std::ifstream in(std::string(GW_SOURCE_DIR) +
                   "/fixtures/captures/010-dmesg-xid79-fallen-off-bus-nvswitch-sxid/dmesg.log");
  std::stringstream dmesg;
  dmesg << in.rdbuf();
  ASSERT_FALSE(dmesg.str().empty());
  const auto with = find(doctor_text(dmesg.str() + "RuntimeError: CUDA error: unknown error\n"),
                         "cuda.unknown_error");
  ASSERT_TRUE(with);
  EXPECT_NE(evidence(*with).find("Xid 79"), std::string::npos) << evidence(*with);
  const auto alone =
      find(doctor_text("RuntimeError: CUDA error: unknown error\n"), "cuda.unknown_error");
  ASSERT_TRUE(alone);
  EXPECT_EQ(evidence(*alone).find("Xid"), std::string::npos);
}

}  // namespace
}  // namespace gw
