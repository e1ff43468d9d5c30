// A framework built without the GPU's architecture (issue 19): PyTorch's warning with its list
// line, its "too old" message, TensorFlow's "Ignoring visible gpu device", the CUDA error
// "no kernel image is available", and the class transformations. Wordings as PyTorch
// (torch/cuda/__init__.py) and TensorFlow print them, and as captures 305- show them.
#include "sources/app/arch_messages.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fixture_util.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::lines_of;

std::vector<AppMessage> arch_messages(const std::string& text) {
  Observation obs;
  add_capture(text, "app.log", obs);
  std::vector<AppMessage> out;
  for (const AppMessage& m : obs.app_messages)
    if (m.kind == AppMessageKind::kArchUnsupported) out.push_back(m);
  return out;
}

const char* const kWarning =
    "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:235: UserWarning: \n"
    "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
    "PyTorch installation.\n"
    "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 "
    "sm_90.\n"
    "If you want to use the NVIDIA GeForce RTX 5090 GPU with PyTorch, please check the "
    "instructions at https://pytorch.org/get-started/locally/\n"
    "\n"
    "  warnings.warn(\n"
    "RuntimeError: CUDA error: no kernel image is available for execution on the device\n";

TEST(ArchMessages, Capabilities) {
  EXPECT_EQ(parse_capability("sm_120"), 120u);
  EXPECT_EQ(parse_capability("sm_86"), 86u);
  EXPECT_EQ(parse_capability("3.5"), 35u);
  EXPECT_EQ(parse_capability("12.0"), 120u);
  EXPECT_EQ(parse_capability("compute_90"), 90u);
  EXPECT_FALSE(parse_capability("sm_"));
  EXPECT_FALSE(parse_capability("3."));
  EXPECT_FALSE(parse_capability("version"));
}

TEST(ArchMessages, PyTorchWarningIsOneMessageWithItsList) {
  const auto ms = arch_messages(kWarning);
  ASSERT_EQ(ms.size(), 2u);  // the warning, and the error it ends in
  EXPECT_EQ(ms[0].compute_capability, 120u);
  EXPECT_EQ(ms[0].detail, "NVIDIA GeForce RTX 5090");
  EXPECT_EQ(ms[0].min_capability, 50u);
  EXPECT_EQ(ms[0].max_capability, 90u);
  EXPECT_EQ(ms[1].cuda_error_code, 209);
  Observation obs;
  add_capture(kWarning, "app.log", obs);
  EXPECT_EQ(obs.coverage.at(0).lines_not_understood, 0u);
  EXPECT_EQ(obs.coverage.at(0).gpu_lines_not_read, 0u);
}

TEST(ArchMessages, TooOldAndTensorFlowForms) {
  const auto old = parse_arch_line(
      "Found GPU0 GeForce GT 730 which is of cuda capability 3.5.\n    PyTorch no longer "
      "supports this GPU because it is too old.\n    The minimum cuda capability supported by "
      "this library is 3.7.");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->compute_capability, 35u);
  EXPECT_EQ(old->min_capability, 37u);
  EXPECT_EQ(old->detail, "GeForce GT 730");
  // As printed: three lines, one message.
  const auto lines = arch_messages(
      "/opt/conda/lib/python3.8/site-packages/torch/cuda/__init__.py:104: UserWarning:\n"
      "    Found GPU0 GeForce GT 730 which is of cuda capability 3.5.\n"
      "    PyTorch no longer supports this GPU because it is too old.\n"
      "    The minimum cuda capability supported by this library is 3.7.\n");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].min_capability, 37u);
  const auto tf = parse_arch_line(
      "2019-03-01 10:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1482] "
      "Ignoring visible gpu device (device: 0, name: Quadro K2000, pci bus id: 0000:05:00.0, "
      "compute capability: 3.0) with Cuda compute capability 3.0. The minimum required Cuda "
      "capability is 3.5.");
  ASSERT_TRUE(tf);
  EXPECT_EQ(tf->framework, "tensorflow");
  EXPECT_EQ(tf->compute_capability, 30u);
  EXPECT_EQ(tf->min_capability, 35u);
  EXPECT_EQ(tf->detail, "Quadro K2000");
  // The first releases' wording, without "visible".
  const auto first = parse_arch_line(
      "I tensorflow/core/common_runtime/gpu/gpu_device.cc:611] Ignoring gpu device (device: 0, "
      "name: GRID K520, pci bus id: 0000:00:03.0) with Cuda compute capability 3.0. The minimum "
      "required Cuda capability is 3.5.");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->compute_capability, 30u);
  EXPECT_EQ(first->detail, "GRID K520");
  EXPECT_FALSE(parse_arch_line("torch.cuda.get_device_capability() returned (8, 6)"));
}

TEST(ArchMessages, ClassTransformationsKeepTheMessages) {
  const auto base = arch_messages(kWarning);
  std::string crlf, indented;
  for (const std::string& l : lines_of(kWarning)) {
    crlf += l + "\r\n";
    indented += "    " + l + "\n";
  }
  const std::string sep(44, '_');
  const std::string dmesg = test::read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  for (const auto& [tag, text] : std::vector<std::pair<std::string, std::string>>{
           {"crlf", crlf},
           {"indented", indented},
           {"after-dmesg", dmesg + kWarning},
           {"before-dmesg", kWarning + dmesg},
           {"bug-report",
            sep + "\n\npython train.py\n\n" + kWarning + sep + "\n\ndmesg:\n\n" + dmesg}}) {
    const auto got = arch_messages(text);
    ASSERT_EQ(got.size(), base.size()) << tag;
    EXPECT_EQ(got[0].compute_capability, base[0].compute_capability) << tag;
    EXPECT_EQ(got[0].max_capability, base[0].max_capability) << tag;
  }
  // Cut before the list line: the capability is still known, the list is not.
  const auto cut = arch_messages(
      "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current "
      "PyTorch installation.\n");
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].compute_capability, 120u);
  EXPECT_FALSE(cut[0].max_capability);
}

}  // namespace
}  // namespace gw
