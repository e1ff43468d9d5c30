// Application / tool error messages: the real lines of fixtures 100-128 and their figures.
#include "sources/app/app_messages.h"

#include <gtest/gtest.h>

#include <string>

#include "fixture_util.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::read_fixture;

constexpr double kGiB = 1024.0 * 1024 * 1024, kMiB = 1024.0 * 1024;

std::vector<AppMessage> messages(const std::string& id, const std::string& file) {
  Observation obs;
  add_capture(read_fixture(id, file), file, obs);
  EXPECT_TRUE(obs.input_errors.empty()) << obs.input_errors.at(0).to_string();
  return obs.app_messages;
}

void near_bytes(const std::optional<uint64_t>& v, double want, const char* what) {
  ASSERT_TRUE(v.has_value()) << what;
  EXPECT_NEAR(static_cast<double>(*v), want, want * 0.001 + 1) << what;
}

TEST(AppMessages, PytorchOomNewWording100) {
  const auto m = messages("100-pytorch-oom-own-process-fills-24gb-gpu", "app.log");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].kind, AppMessageKind::kCudaOutOfMemory);
  EXPECT_EQ(m[0].framework, "pytorch");
  EXPECT_EQ(m[0].gpu_index, 0u);
  near_bytes(m[0].tried_bytes, 22.00 * kMiB, "tried");
  near_bytes(m[0].total_bytes, 23.65 * kGiB, "total");
  near_bytes(m[0].free_bytes, 11.06 * kMiB, "free");
  near_bytes(m[0].process_bytes, 23.60 * kGiB, "process");
  near_bytes(m[0].allocated_bytes, 22.90 * kGiB, "allocated");
  near_bytes(m[0].reserved_unallocated_bytes, 194.87 * kMiB, "reserved but unallocated");
  near_bytes(m[0].reserved_bytes, 22.90 * kGiB + 194.87 * kMiB, "reserved");
  EXPECT_TRUE(m[0].other_processes.empty());
  EXPECT_EQ(m[0].origin, "app.log:1");
}

// TensorFlow's OOM states the tensor, not bytes: its shape times the type's width is the
// request; the BFC allocator's "Stats:" block (before or after the message) gives the limit
// and what is in use. Capture 270 (float, 7 dimensions, stats before), 271 (no stats).
TEST(AppMessages, TensorflowOomArithmetic270And271) {
  const auto m = messages("270-tf-oom-bfc-stats-limit-10.6gb-inuse-7.35gb", "app.log");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].framework, "tensorflow");
  EXPECT_EQ(m[0].tried_bytes, uint64_t{16} * 892800 * 8 * 4 * 2 * 2 * 4);
  EXPECT_EQ(m[0].total_bytes, 10625279591u);
  EXPECT_EQ(m[0].allocated_bytes, 7350513920u);
  EXPECT_EQ(m[0].free_bytes, 10625279591u - 7350513920u);
  const auto k = messages("271-tf-keras-oom-gpu1-replica-fusedbatchnorm", "app.log");
  ASSERT_FALSE(k.empty());
  EXPECT_EQ(k[0].gpu_index, 1u);
  EXPECT_EQ(k[0].tried_bytes, uint64_t{128} * 128 * 109 * 109 * 4);
  EXPECT_FALSE(k[0].total_bytes.has_value());
  // The stats after the message fill it too; a line that is not a figure ends the block.
  Observation obs;
  add_capture(
      "W tensorflow/core/common_runtime/bfc_allocator.cc:275] Allocator (GPU_0_bfc) ran out of "
      "memory trying to allocate 1.00GiB.  Current allocation summary follows.\n"
      "I tensorflow/core/common_runtime/bfc_allocator.cc:680] Stats: \n"
      "Limit:                 2000000000\n"
      "InUse:                 1500000000\n"
      "Unrelated: the end of the block\n"
      "Limit:                 9\n",
      "tf.log", obs);
  ASSERT_EQ(obs.app_messages.size(), 1u);
  EXPECT_EQ(obs.app_messages[0].total_bytes, 2000000000u);
  EXPECT_EQ(obs.app_messages[0].allocated_bytes, 1500000000u);
  EXPECT_EQ(obs.app_messages[0].tried_bytes, uint64_t{1} << 30);
}

TEST(AppMessages, PytorchOomLargeCache102) {
  const auto m = messages("102-pytorch-oom-request-exceeds-free-plus-cached-32gb", "app.log");
  ASSERT_EQ(m.size(), 1u);
  near_bytes(m[0].tried_bytes, 22.78 * kGiB, "tried");
  near_bytes(m[0].free_bytes, 12.73 * kGiB, "free");
  near_bytes(m[0].reserved_unallocated_bytes, 9.35 * kGiB, "cache");
  near_bytes(m[0].allocated_bytes, 9.08 * kGiB, "allocated");
}

TEST(AppMessages, PytorchOomOldWordingZeroBytesFree104) {
  const auto m = messages("104-pytorch-oom-allocated-exceeds-capacity-8gib", "app.log");
  ASSERT_EQ(m.size(), 1u);
  near_bytes(m[0].tried_bytes, 10.73 * kGiB, "tried");
  near_bytes(m[0].total_bytes, 8.00 * kGiB, "total");
  near_bytes(m[0].allocated_bytes, 17.20 * kGiB, "allocated");
  near_bytes(m[0].reserved_bytes, 19.15 * kGiB, "reserved");
  ASSERT_TRUE(m[0].free_bytes.has_value());
  EXPECT_EQ(*m[0].free_bytes, 0u);
  EXPECT_FALSE(m[0].reserved_unallocated_bytes.has_value());
}

TEST(AppMessages, NcclErrorAndPeerAccess106) {
  const auto m = messages("106-nccl-p2p-ipc-peer-access-unsupported-2-gpus", "app.log");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].kind, AppMessageKind::kNcclError);
  EXPECT_NE(m[0].detail.find("NCCL version 2.7.8"), std::string::npos);
  // Line 6's channel: the transport NCCL chose before the IPC handle failed.
  EXPECT_EQ(m[1].kind, AppMessageKind::kNcclTransport);
  EXPECT_EQ(m[1].detail, "P2P");
  EXPECT_EQ(m[1].steps, 1u);
  EXPECT_EQ(m[1].origin, "app.log:6");
  EXPECT_EQ(m[2].kind, AppMessageKind::kPeerAccessUnsupported);
  EXPECT_EQ(m[2].framework, "nccl");
  EXPECT_EQ(m[2].cuda_error_code, 217);
  EXPECT_EQ(m[2].origin, "app.log:8");
}

TEST(AppMessages, ContainerHookNvmlMismatch108) {
  const auto m = messages("108-docker-nvml-mismatch-hook-plus-dmesg-515-vs-510", "app.log");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].kind, AppMessageKind::kNvmlVersionMismatch);
  EXPECT_EQ(m[0].origin, "app.log:4");
}

TEST(AppMessages, UncorrectableEccAndHintsAreContext112) {
  Observation obs;
  add_capture(read_fixture("112-pytorch-uncorrectable-ecc-error-hpc-node", "app.log"), "a", obs);
  ASSERT_EQ(obs.app_messages.size(), 1u);
  EXPECT_EQ(obs.app_messages[0].kind, AppMessageKind::kUncorrectableEcc);
  EXPECT_EQ(obs.coverage.at(0).lines_not_understood, 0u);
}

TEST(AppMessages, DeviceQueryError35WithCudaFromThePath128) {
  Observation obs;
  add_capture(read_fixture("128-devicequery-error-35-cuda-7.0-samples-driver-too-old", "app.log"),
              "a", obs);
  ASSERT_EQ(obs.app_messages.size(), 1u);  // "returned 35" and "-> CUDA driver ..." are one
  const AppMessage& m = obs.app_messages[0];
  EXPECT_EQ(m.kind, AppMessageKind::kDriverInsufficient);
  EXPECT_EQ(m.cuda_error_code, 35);
  EXPECT_EQ(m.cuda_runtime_version, "7.0");
  EXPECT_EQ(obs.coverage.at(0).lines_not_understood, 0u);
}

TEST(AppMessages, EveryKindFromItsToolsWording) {
  struct Case {
    const char* line;
    AppMessageKind kind;
  };
  // Wording as the tools print it (CUDA runtime error strings, nvidia-smi, Docker, NCCL).
  const Case cases[] = {
      {"RuntimeError: CUDA error: no CUDA-capable device is detected",
       AppMessageKind::kNoCudaDevice},
      {"Failed to initialize NVML: Driver/library version mismatch",
       AppMessageKind::kNvmlVersionMismatch},
      {"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
       "that the latest NVIDIA driver is installed and running.",
       AppMessageKind::kSmiCannotTalkToDriver},
      {"Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error",
       AppMessageKind::kNoDeviceHandle},
      {"docker: Error response from daemon: could not select device driver \"\" with "
       "capabilities: [[gpu]].",
       AppMessageKind::kDockerNoGpuDriver},
      {"RuntimeError: CUDA error: unspecified launch failure", AppMessageKind::kLaunchFailure},
      {"RuntimeError: CUDA error: an illegal memory access was encountered",
       AppMessageKind::kIllegalAddress},
      {"RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
       AppMessageKind::kDriverInsufficient},
      {"[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
       "OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600351 milliseconds before timing out.",
       AppMessageKind::kNcclTimeout},
      {"2023-05-01 10:00:00.000000: W tensorflow/core/common_runtime/bfc_allocator.cc:479] "
       "Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.53GiB (rounded to "
       "1638400000)requested by op Conv2D",
       AppMessageKind::kCudaOutOfMemory},
      {"jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to "
       "allocate 17179869184 bytes.",
       AppMessageKind::kCudaOutOfMemory},
  };
  for (const Case& c : cases) {
    const auto m = parse_app_message_line(c.line, "x:1");
    ASSERT_TRUE(m.has_value()) << c.line;
    EXPECT_EQ(m->kind, c.kind) << c.line;
  }
  const auto handle = parse_app_message_line(cases[3].line, "x:1");
  EXPECT_EQ(handle->pci_bus_id, "00000000:3B:00.0");
  const auto tf = parse_app_message_line(cases[9].line, "x:1");
  EXPECT_EQ(tf->framework, "tensorflow");
  EXPECT_EQ(tf->gpu_index, 0u);
  near_bytes(tf->tried_bytes, 1.53 * kGiB, "tf tried");
  const auto jax = parse_app_message_line(cases[10].line, "x:1");
  EXPECT_EQ(jax->framework, "jax");
  ASSERT_TRUE(jax->tried_bytes.has_value());
  EXPECT_EQ(*jax->tried_bytes, 17179869184ull);
}

TEST(AppMessages, OtherProcessesInTheOomMessage) {
  const auto m = parse_app_message_line(
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total "
      "capacity of 79.15 GiB of which 1.19 GiB is free. Process 2316 has 40.00 GiB memory in use. "
      "Including non-PyTorch memory, this process has 37.94 GiB memory in use.",
      "x:1");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->gpu_index, 1u);
  ASSERT_EQ(m->other_processes.size(), 1u);
  EXPECT_EQ(m->other_processes[0].pid, 2316u);
  near_bytes(m->other_processes[0].bytes, 40.0 * kGiB, "other");
  near_bytes(m->process_bytes, 37.94 * kGiB, "this process");
}

TEST(AppMessages, BytesInEveryUnit) {
  EXPECT_EQ(parse_app_bytes("0 bytes"), 0u);
  EXPECT_EQ(parse_app_bytes("512 KiB"), 512u * 1024u);
  EXPECT_EQ(parse_app_bytes("1.5GiB"), 1610612736u);
  EXPECT_EQ(parse_app_bytes("2 MB"), 2000000u);
  EXPECT_EQ(parse_app_bytes("17179869184 bytes."), 17179869184ull);
  EXPECT_FALSE(parse_app_bytes("lots").has_value());
  EXPECT_FALSE(parse_app_bytes("12 apples").has_value());
  EXPECT_FALSE(parse_app_bytes("1e400 GiB").has_value());
}

TEST(AppMessages, PlainLinesAreNotMessages) {
  for (const char* l : {"Epoch 3/10: loss 0.123", "Out of memory? no.", "GPU 0: Tesla V100",
                        "NCCL INFO Channel 00/02 :    0   1"})
    EXPECT_FALSE(parse_app_message_line(l, "x").has_value()) << l;
}

}  // namespace
}  // namespace gw
