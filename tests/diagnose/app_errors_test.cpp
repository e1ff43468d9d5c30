// Rules over application errors (gw::AppMessage). The messages and their figures are the real
// ones of fixtures 100-128 (fixtures/captures/*/app.log), filled in the way the capture parser
// fills them; each rule fires on its message and stays silent on the near miss.
#include <gtest/gtest.h>

#include <cmath>

#include "builders.h"
#include "sources/app/nccl_watchdog.h"

namespace gw {
namespace {

using test::find;

constexpr double kMiBd = 1024.0 * 1024.0;
constexpr double kGiBd = kMiBd * 1024.0;

uint64_t gib(double v) {
  return static_cast<uint64_t>(std::llround(v * kGiBd));
}
uint64_t mib(double v) {
  return static_cast<uint64_t>(std::llround(v * kMiBd));
}

AppMessage msg(AppMessageKind k, std::string text, std::string framework = "cuda") {
  AppMessage m;
  m.kind = k;
  m.framework = std::move(framework);
  m.text = std::move(text);
  m.origin = "app.log:1";
  return m;
}

Observation with(std::vector<AppMessage> ms) {
  Observation o;
  o.app_messages = std::move(ms);
  return o;
}

// Fixture 100: PyTorch >= 2.2 wording, the process itself fills the 24 GB card.
AppMessage oom_100() {
  AppMessage m = msg(AppMessageKind::kCudaOutOfMemory,
                     "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 "
                     "MiB. GPU 0 has a total capacity of 23.65 GiB of which 11.06 MiB is free. "
                     "Including non-PyTorch memory, this process has 23.60 GiB memory in use. Of "
                     "the allocated memory 22.90 GiB is allocated by PyTorch, and 194.87 MiB is "
                     "reserved by PyTorch but unallocated.",
                     "pytorch");
  m.gpu_index = 0;
  m.tried_bytes = mib(22.00);
  m.total_bytes = gib(23.65);
  m.free_bytes = mib(11.06);
  m.process_bytes = gib(23.60);
  m.allocated_bytes = gib(22.90);
  m.reserved_unallocated_bytes = mib(194.87);
  m.reserved_bytes = gib(22.90) + mib(194.87);
  return m;
}

TEST(AppCudaOom, OwnWorkingSetDoesNotFit) {
  const auto x = find(diagnose(with({oom_100()})), "memory.cuda_oom");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kWarning);
  EXPECT_NE(x->title.find("on GPU 0"), std::string::npos);
  EXPECT_NE(x->title.find("own working set does not fit"), std::string::npos) << x->title;
  const std::string ev = test::evidence(*x);
  EXPECT_NE(ev.find("tried to allocate 22.00 MiB, 11.06 MiB free of 23.65 GiB total"),
            std::string::npos)
      << ev;
  EXPECT_NE(ev.find("this process holds 23.60 GiB: 22.90 GiB allocated"), std::string::npos);
  EXPECT_NE(ev.find("not fragmentation"), std::string::npos);
  EXPECT_NE(x->remedy.find("gradient accumulation"), std::string::npos);
  EXPECT_NE(x->remedy.find("BF16/FP16"), std::string::npos);
  EXPECT_NE(x->remedy.find("checkpointing"), std::string::npos);
  EXPECT_EQ(x->remedy.find("expandable_segments"), std::string::npos);
  EXPECT_EQ(x->title.find("other processes"), std::string::npos);
}

// Capture 456 (PyTorch 1.x wording): 3.03 GiB free and a 2.26 GiB request failed all the same.
// Not a working set too large: the free memory is in pieces, or not the job's to take. With
// less free than asked, the same figures stay the working set's.
TEST(AppCudaOom, FreeMemoryAboveTheRequestIsNotCalledAShortage) {
  AppMessage m = msg(AppMessageKind::kCudaOutOfMemory,
                     "CUDA out of memory. Tried to allocate 2.26 GiB (GPU 0; 6.00 GiB total "
                     "capacity; 781.59 MiB already allocated; 3.03 GiB free; 1.24 GiB reserved in "
                     "total by PyTorch)",
                     "pytorch");
  m.gpu_index = 0;
  m.tried_bytes = gib(2.26);
  m.total_bytes = gib(6.00);
  m.allocated_bytes = mib(781.59);
  m.free_bytes = gib(3.03);
  m.reserved_bytes = gib(1.24);
  const auto x = find(diagnose(with({m})), "memory.cuda_oom");
  ASSERT_TRUE(x);
  EXPECT_NE(x->title.find("smaller than the free memory (3.03 GiB)"), std::string::npos)
      << x->title;
  EXPECT_NE(x->remedy.find("expandable_segments"), std::string::npos);
  m.free_bytes = gib(1.03);
  const auto y = find(diagnose(with({m})), "memory.cuda_oom");
  ASSERT_TRUE(y);
  EXPECT_EQ(y->title.find("smaller than the free memory"), std::string::npos) << y->title;
}

TEST(AppCudaOom, RequestLargerThanFreePlusCachedIsNotCalledFragmentation) {
  // Fixture 102: 22.78 GiB request, 12.73 GiB free + 9.35 GiB cached = 22.08 GiB.
  AppMessage m = oom_100();
  m.text =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a "
      "total capacity of 31.47 GiB of which 12.73 GiB is free. Including non-PyTorch memory, "
      "this process has 18.73 GiB memory in use. Of the allocated memory 9.08 GiB is allocated "
      "by PyTorch, and 9.35 GiB is reserved by PyTorch but unallocated.";
  m.tried_bytes = gib(22.78);
  m.total_bytes = gib(31.47);
  m.free_bytes = gib(12.73);
  m.process_bytes = gib(18.73);
  m.allocated_bytes = gib(9.08);
  m.reserved_unallocated_bytes = gib(9.35);
  m.reserved_bytes = gib(9.08) + gib(9.35);
  const auto x = find(diagnose(with({m})), "memory.cuda_oom");
  ASSERT_TRUE(x);
  EXPECT_NE(x->title.find("larger than free plus cached memory (22.08 GiB)"), std::string::npos)
      << x->title;
  const std::string ev = test::evidence(*x);
  EXPECT_NE(ev.find("expandable_segments:True may reduce the waste, but on its own it cannot"),
            std::string::npos);
  EXPECT_NE(x->remedy.find("split the operation"), std::string::npos);
  EXPECT_EQ(x->title.find("other processes"), std::string::npos);
}

TEST(AppCudaOom, FragmentationWhenCachedMemoryWouldFit) {
  // Near miss of 102: the same figures with a request free + cached could hold.
  AppMessage m = oom_100();
  m.text = "CUDA out of memory ... is reserved by PyTorch but unallocated.";
  m.tried_bytes = gib(14.0);
  m.total_bytes = gib(31.47);
  m.free_bytes = gib(12.73);
  m.process_bytes = gib(18.73);
  m.allocated_bytes = gib(9.08);
  m.reserved_unallocated_bytes = gib(9.35);
  m.reserved_bytes = gib(9.08) + gib(9.35);
  const auto x = find(diagnose(with({m})), "memory.cuda_oom");
  ASSERT_TRUE(x);
  EXPECT_NE(x->title.find("fragmentation (9.35 GiB reserved but unallocated)"), std::string::npos)
      << x->title;
  EXPECT_NE(x->remedy.find("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"), std::string::npos);
}

TEST(AppCudaOom, RequestLargerThanTheGpuAndInconsistentFigures) {
  // Fixture 104: old wording; 10.73 GiB request on an 8.00 GiB GPU, 17.20 GiB "allocated".
  AppMessage m = msg(AppMessageKind::kCudaOutOfMemory,
                     "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 10.73 "
                     "GiB (GPU 0; 8.00 GiB total capacity; 17.20 GiB already allocated; 0 bytes "
                     "free; 19.15 GiB reserved in total by PyTorch)",
                     "pytorch");
  m.gpu_index = 0;
  m.tried_bytes = gib(10.73);
  m.total_bytes = gib(8.00);
  m.allocated_bytes = gib(17.20);
  m.free_bytes = 0;
  m.reserved_bytes = gib(19.15);
  const auto x = find(diagnose(with({m})), "memory.cuda_oom");
  ASSERT_TRUE(x);
  EXPECT_NE(x->title.find("larger than the whole GPU (8.00 GiB)"), std::string::npos) << x->title;
  const std::string ev = test::evidence(*x);
  EXPECT_NE(ev.find("the figures are inconsistent"), std::string::npos);
  EXPECT_EQ(ev.find("held by others"), std::string::npos);
  EXPECT_EQ(x->remedy.find("expandable_segments"), std::string::npos);
  EXPECT_NE(x->remedy.find("a GPU with more memory"), std::string::npos);
}

TEST(AppCudaOom, AnotherProcessHoldsTheMemory) {
  AppMessage m = oom_100();
  m.free_bytes = mib(20);
  m.process_bytes = gib(6.0);
  m.allocated_bytes = gib(5.5);
  m.reserved_unallocated_bytes = mib(300);
  m.reserved_bytes = gib(5.5) + mib(300);
  const auto x = find(diagnose(with({m})), "memory.cuda_oom");
  ASSERT_TRUE(x);
  EXPECT_NE(x->title.find("other processes hold 17.6"), std::string::npos) << x->title;
  EXPECT_NE(x->remedy.find("--query-compute-apps"), std::string::npos);
}

TEST(AppCudaOom, OtherProcessesNamedInTheMessage) {
  // "Process 4711 has 20.00 GiB memory in use" without this process's own figure.
  AppMessage m = msg(AppMessageKind::kCudaOutOfMemory,
                     "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
                     "of 23.65 GiB of which 1.06 GiB is free. Process 4711 has 20.00 GiB memory "
                     "in use.",
                     "pytorch");
  m.tried_bytes = gib(2.0);
  m.total_bytes = gib(23.65);
  m.free_bytes = gib(1.06);
  m.other_processes.push_back({4711, gib(20.0)});
  const auto x = find(diagnose(with({m})), "memory.cuda_oom");
  ASSERT_TRUE(x);
  EXPECT_NE(x->title.find("other processes hold 20.00 GiB"), std::string::npos) << x->title;
  EXPECT_NE(test::evidence(*x).find("process 4711 holds 20.00 GiB"), std::string::npos);
}

TEST(AppCudaOom, OneFindingPerGpuAndSilentWithoutMessages) {
  AppMessage a = oom_100(), b = oom_100(), d = oom_100();
  d.gpu_index = 1;
  const auto f = diagnose(with({a, b, d}));
  EXPECT_EQ(test::count(f, "memory.cuda_oom"), 2u);
  EXPECT_FALSE(find(diagnose(with({msg(AppMessageKind::kLaunchFailure, "x")})), "memory.cuda_oom"));
}

TEST(AppPeerAccess, NamesP2pAndAbsorbsTheNcclError) {
  // Fixture 106: NCCL 2.7.8 under Ray, P2P/IPC between 2d000 and 2e000.
  const auto f = diagnose(with(
      {msg(AppMessageKind::kNcclError,
           "RuntimeError: NCCL error in: /opt/conda/conda-bld/pytorch_1603729062494/work/torch/"
           "lib/c10d/ProcessGroupNCCL.cpp:784, unhandled cuda error, NCCL version 2.7.8",
           "nccl"),
       msg(AppMessageKind::kPeerAccessUnsupported,
           "z-pc:909608:910337 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle "
           ": 217 peer access is not supported between these two devices",
           "nccl")}));
  const auto x = find(f, "cuda.peer_access_unsupported");
  ASSERT_TRUE(x);
  EXPECT_NE(x->remedy.find("NCCL_P2P_DISABLE=1"), std::string::npos);
  EXPECT_NE(test::evidence(*x).find("unhandled cuda error"), std::string::npos);
  EXPECT_NE(test::evidence(*x).find("not the network"), std::string::npos);
  EXPECT_FALSE(find(f, "nccl.error"));
  EXPECT_FALSE(find(f, "memory.cuda_oom"));
  EXPECT_FALSE(find(f, "cuda.driver_insufficient"));
}

TEST(AppNccl, ErrorAloneAndWatchdogTimeout) {
  const auto f = diagnose(
      with({msg(AppMessageKind::kNcclError, "ncclSystemError: System call failed", "nccl"),
            msg(AppMessageKind::kNcclTimeout,
                "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, "
                "OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600043 milliseconds before timing "
                "out.",
                "nccl")}));
  EXPECT_TRUE(find(f, "nccl.error"));
  const auto t = find(f, "nccl.timeout");
  ASSERT_TRUE(t);
  EXPECT_NE(t->remedy.find("TORCH_NCCL_ASYNC_ERROR_HANDLING"), std::string::npos);
}

// A watchdog line of one rank, as the reader gives it (the report parsed from its text).
AppMessage watchdog(unsigned rank, unsigned seq) {
  AppMessage m = msg(
      AppMessageKind::kNcclTimeout,
      "[rank" + std::to_string(rank) + "]:[E0 ProcessGroupNCCL.cpp:607] [Rank " +
          std::to_string(rank) +
          "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=" + std::to_string(seq) +
          ", OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
          "600013 milliseconds before timing out.",
      "nccl");
  m.watchdog = parse_nccl_watchdog_line(m.text);
  return m;
}

TEST(AppNccl, RanksAtOneCollectiveKeepTheTimeoutWithWhoNeverReported) {
  const auto f = diagnose(with({watchdog(0, 41), watchdog(1, 41), watchdog(3, 41)}));
  const auto t = find(f, "nccl.timeout");
  ASSERT_TRUE(t);
  EXPECT_FALSE(find(f, "nccl.desync"));
  EXPECT_NE(test::evidence(*t).find("all 3 reporting ranks stopped at SeqNum 41 (ALLREDUCE); "
                                    "ranks 2 never reported"),
            std::string::npos)
      << test::evidence(*t);
}

TEST(AppNccl, RanksAtDifferentCollectivesAreADesync) {
  const auto f = diagnose(with({watchdog(0, 41), watchdog(1, 40), watchdog(2, 41)}));
  const auto d = find(f, "nccl.desync");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->severity, Severity::kWarning);
  EXPECT_NE(d->title.find("rank(s) 1 behind at SeqNum 40"), std::string::npos) << d->title;
  EXPECT_FALSE(find(f, "nccl.timeout"));
  EXPECT_NE(d->remedy.find("TORCH_NCCL_DESYNC_DEBUG"), std::string::npos);
}

Observation insufficient(std::string driver, std::string torch_cuda) {
  Observation o = with({msg(AppMessageKind::kDriverInsufficient,
                            "-> CUDA driver version is insufficient for CUDA runtime version")});
  Snapshot s;
  s.source = "smi-table:input.txt";
  s.driver_version = std::move(driver);
  o.samples.push_back(s);
  HostFacts h;
  h.frameworks.push_back({"torch", "2.3.1", torch_cuda, ""});
  o.host = h;
  return o;
}

TEST(AppDriverInsufficient, DriverTooOldWhenTheTableSaysSo) {
  const auto x = find(diagnose(insufficient("418.67", "10.2")), "cuda.driver_insufficient");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kCritical);
  EXPECT_NE(x->title.find("Driver 418.67 is too old for CUDA 10.2"), std::string::npos) << x->title;
  EXPECT_NE(x->remedy.find("440.33"), std::string::npos);
}

TEST(AppDriverInsufficient, SupportedDriverPointsAtCompatLibrariesAndMounts) {
  const auto x = find(diagnose(insufficient("550.54.15", "12.1")), "cuda.driver_insufficient");
  ASSERT_TRUE(x);
  EXPECT_NE(x->title.find("although driver 550.54.15 supports CUDA 12.1"), std::string::npos);
  EXPECT_NE(test::evidence(*x).find("the error has another cause"), std::string::npos);
  EXPECT_NE(x->remedy.find("cuda-compat"), std::string::npos);
  EXPECT_NE(x->remedy.find("container"), std::string::npos);
}

TEST(AppDriverInsufficient, VersionsUnknownStillNamesTheCause) {
  // Fixture 128: deviceQuery of the CUDA 7.0 samples, nothing else captured.
  const auto x = find(diagnose(with({msg(AppMessageKind::kDriverInsufficient,
                                         "-> CUDA driver version is insufficient for CUDA "
                                         "runtime version")})),
                      "cuda.driver_insufficient");
  ASSERT_TRUE(x);
  EXPECT_NE(x->title.find("older than the CUDA runtime"), std::string::npos);
  EXPECT_FALSE(find(diagnose(with({})), "cuda.driver_insufficient"));
}

TEST(AppMessages, EachKindHasItsFinding) {
  struct Case {
    AppMessageKind kind;
    const char* text;
    const char* code;
    Severity sev;
  };
  const Case cases[] = {
      {AppMessageKind::kNoCudaDevice, "RuntimeError: No CUDA GPUs are available", "cuda.no_device",
       Severity::kCritical},
      {AppMessageKind::kSmiCannotTalkToDriver,
       "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
       "that the latest NVIDIA driver is installed and running.",
       "driver.smi_cannot_communicate", Severity::kCritical},
      {AppMessageKind::kNoDeviceHandle,
       "Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error",
       "gpu.no_device_handle", Severity::kCritical},
      {AppMessageKind::kDockerNoGpuDriver,
       "docker: Error response from daemon: could not select device driver \"\" with "
       "capabilities: [[gpu]].",
       "container.no_gpu_runtime", Severity::kCritical},
      {AppMessageKind::kLaunchFailure, "RuntimeError: CUDA error: unspecified launch failure",
       "cuda.launch_failure", Severity::kWarning},
      {AppMessageKind::kIllegalAddress,
       "RuntimeError: CUDA error: an illegal memory access was encountered", "cuda.illegal_address",
       Severity::kWarning},
      {AppMessageKind::kUncorrectableEcc,
       "RuntimeError: CUDA error: uncorrectable ECC error encountered",
       "ecc.uncorrectable_reported", Severity::kCritical},
      {AppMessageKind::kOther, "CUDA error: misaligned address", "app.cuda_error", Severity::kInfo},
  };
  for (const Case& k : cases) {
    const auto f = diagnose(with({msg(k.kind, k.text)}));
    const auto x = find(f, k.code);
    ASSERT_TRUE(x) << k.code;
    EXPECT_EQ(x->severity, k.sev) << k.code;
    EXPECT_NE(test::evidence(*x).find(k.text), std::string::npos) << k.code;
    EXPECT_EQ(f.size(), 1u) << k.code << ": one message, one finding";
  }
}

TEST(AppMessages, UncorrectableEccIsNotAProgramBug) {
  const auto x = find(diagnose(with({msg(AppMessageKind::kUncorrectableEcc,
                                         "RuntimeError: CUDA error: uncorrectable ECC error "
                                         "encountered")})),
                      "ecc.uncorrectable_reported");
  ASSERT_TRUE(x);
  EXPECT_NE(x->remedy.find("Xid 48/63/64/94/95"), std::string::npos);
  EXPECT_NE(x->remedy.find("ROW_REMAPPER"), std::string::npos);
  EXPECT_EQ(x->remedy.find("CUDA_LAUNCH_BLOCKING"), std::string::npos);
}

TEST(DriverMismatch, FromContainerHookAndKernelLogWithBothVersions) {
  // Fixture 108: nvidia-container-cli's NVML error plus dmesg's NVRM API mismatch.
  Observation o = with({msg(AppMessageKind::kNvmlVersionMismatch,
                            "nvidia-container-cli: initialization error: nvml error: "
                            "driver/library version mismatch: unknown")});
  Event e;
  e.kind = EventKind::kDriverMessage;
  e.uptime_s = 7386.259769;
  e.origin = "dmesg.log:1";
  e.message = "API mismatch: the client has the version 515.48.07, but";
  o.events.push_back(e);
  e.message = "this kernel module has the version 510.73.05.  Please";
  e.origin = "dmesg.log:2";
  o.events.push_back(e);
  const auto f = diagnose(o);
  const auto x = find(f, "driver.version_mismatch");
  ASSERT_TRUE(x);
  const std::string ev = test::evidence(*x);
  EXPECT_NE(ev.find("user-space libraries 515.48.07 vs loaded kernel module 510.73.05"),
            std::string::npos)
      << ev;
  EXPECT_NE(ev.find("GPU containers cannot start"), std::string::npos);
  EXPECT_FALSE(find(f, "container.no_gpu_runtime"));
  EXPECT_FALSE(find(f, "cuda.driver_insufficient"));
  EXPECT_FALSE(find(diagnose(with({oom_100()})), "driver.version_mismatch"));
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

AppMessage nccl_fact(std::string detail) {
  AppMessage m = msg(AppMessageKind::kNcclSetting, "NCCL INFO " + detail, "nccl");
  m.detail = std::move(detail);
  m.steps = 1;
  return m;
}

TEST(NcclSettings, CostlySettingsWarnOthersAreConfiguration) {
  const auto costly =
      diagnose(with({nccl_fact("NCCL_P2P_DISABLE=1"), nccl_fact("NCCL_SOCKET_IFNAME=eth0"),
                     nccl_fact("network=IB")}));
  const auto s = find(costly, "nccl.settings");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->severity, Severity::kWarning);
  EXPECT_NE(s->title.find("NCCL_P2P_DISABLE=1: GPUs of one node exchange data through host"),
            std::string::npos)
      << s->title;
  EXPECT_FALSE(find(costly, "nccl.network_mismatch"));  // one network
  // NCCL_IB_DISABLE=0 turns IB on (the default): configuration, not a cost.
  const auto plain =
      diagnose(with({nccl_fact("NCCL_IB_DISABLE=0"), nccl_fact("NET/IB: no device")}));
  ASSERT_TRUE(find(plain, "nccl.settings"));
  EXPECT_EQ(find(plain, "nccl.settings")->severity, Severity::kInfo);
}

TEST(NcclSettings, TwoNetworksAreAMismatch) {
  const auto f = diagnose(with({nccl_fact("network=Socket"), nccl_fact("network=IB")}));
  const auto m = find(f, "nccl.network_mismatch");
  ASSERT_TRUE(m);
  EXPECT_NE(m->title.find("Socket and IB"), std::string::npos) << m->title;
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

AppMessage arch(unsigned cc, std::string gpu) {
  AppMessage m;
  m.kind = AppMessageKind::kArchUnsupported;
  m.framework = "pytorch";
  m.compute_capability = cc;
  m.detail = std::move(gpu);
  m.text = "no kernel image is available for execution on the device";
  m.origin = "app.log:1";
  return m;
}

// Capture 316: a GTX 650 (sm_30) under a PyTorch that no longer builds for it, with no minimum
// stated. Every framework build of recent years uses a CUDA that supports sm_30 when asked: the
// build left it out, so the advice is an older release or a source build, never a "CUDA 4.2"
// wheel index that does not exist. An Ampere GPU without a minimum stays the newer-build case.
TEST(ArchUnsupported, AGpuOlderThanEveryBuildIsTooOldNotABuildTooOld) {
  Observation o;
  o.app_messages = {arch(30, "GeForce GTX 650")};
  const auto old = test::find(diagnose(o), "cuda.arch_unsupported");
  ASSERT_TRUE(old);
  EXPECT_NE(old->title.find("no longer supports GeForce GTX 650"), std::string::npos) << old->title;
  EXPECT_NE(old->remedy.find("dropped compute capability 3.0"), std::string::npos) << old->remedy;
  EXPECT_EQ(old->remedy.find("index-url"), std::string::npos) << old->remedy;
  o.app_messages = {arch(86, "NVIDIA GeForce RTX 3090")};
  const auto newer = test::find(diagnose(o), "cuda.arch_unsupported");
  ASSERT_TRUE(newer);
  EXPECT_NE(newer->remedy.find("whl/cu111"), std::string::npos) << newer->remedy;
}

}  // namespace
}  // namespace gw
