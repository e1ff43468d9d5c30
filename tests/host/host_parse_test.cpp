// The pure parsers, one file format at a time.
#include "sources/host/host_parse.h"

#include <gtest/gtest.h>

namespace gw::host {
namespace {

TEST(HostParse, DriverVersionProprietaryAndOpenModule) {
  EXPECT_EQ(parse_nvidia_driver_version(
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 "
                "UTC 2024\nGCC version:  gcc version 12.2.0\n"),
            "550.54.15");
  EXPECT_EQ(parse_nvidia_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                        "570.86.15  Release Build  (dvs-builder@U16)  Thu Jan 23"),
            "570.86.15");
  EXPECT_EQ(parse_nvidia_driver_version("GCC version: gcc version 12.2.0\n"), std::nullopt);
  EXPECT_EQ(parse_nvidia_driver_version(""), std::nullopt);
}

TEST(HostParse, ModulesNeedTheExactName) {
  const auto m = parse_proc_modules("nvidia_uvm 1 0 - Live 0x0\nnouveau 2 3 - Live 0x0\n");
  EXPECT_FALSE(m.nvidia);  // nvidia_uvm alone is not the driver
  EXPECT_TRUE(m.nouveau);
  const auto n = parse_proc_modules("nvidia 56778752 30 nvidia_uvm, Live 0x0 (POE)");
  EXPECT_TRUE(n.nvidia);
  EXPECT_FALSE(n.nouveau);
}

TEST(HostParse, CgroupContainerHints) {
  EXPECT_TRUE(cgroup_says_container("0::/docker/3f1e2b9c\n"));
  EXPECT_TRUE(cgroup_says_container("11:cpu:/kubepods/burstable/pod1234/abcd\n"));
  EXPECT_FALSE(cgroup_says_container("0::/init.scope\n"));
  EXPECT_FALSE(cgroup_says_container("0::/\n"));
}

TEST(HostParse, LinkSpeeds) {
  EXPECT_EQ(parse_link_speed_gt_s("16.0 GT/s PCIe\n"), 16.0);
  EXPECT_EQ(parse_link_speed_gt_s("2.5 GT/s PCIe"), 2.5);
  EXPECT_EQ(parse_link_speed_gt_s("8 GT/s"), 8.0);  // older kernels
  EXPECT_EQ(parse_link_speed_gt_s("Unknown"), std::nullopt);
  EXPECT_EQ(parse_link_speed_gt_s("0 GT/s"), std::nullopt);
}

TEST(HostParse, NumbersAndHex) {
  EXPECT_EQ(parse_hex("0x10de\n"), 0x10deU);
  EXPECT_EQ(parse_hex("0x030200"), 0x030200U);
  EXPECT_EQ(parse_hex("nvidia"), std::nullopt);
  EXPECT_EQ(parse_int("-1\n"), -1);
  EXPECT_EQ(parse_int(" 16 "), 16);
  EXPECT_EQ(parse_int("16x"), std::nullopt);
  EXPECT_EQ(parse_loadavg1("3.52 3.10 2.87 4/1203 88123\n"), 3.52);
  EXPECT_EQ(parse_loadavg1(""), std::nullopt);
  EXPECT_EQ(parse_uptime_s("35000.50 270000.10\n"), 35000.5);
}

TEST(HostParse, ProcStatAndIowait) {
  const auto st = parse_proc_stat(
      "cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 1 0 0 0 0 0 0 0 0 0\ncpu1 1 0 0 0 0 0 0 0 0 0\n"
      "intr 1 2 3\n");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->cpu_count, 2U);
  EXPECT_EQ(st->cpu.total(), 1000U);
  EXPECT_EQ(iowait_pct(CpuTimes{}, st->cpu), 10.0);  // since boot
  CpuTimes later = st->cpu;
  later.iowait += 30;
  later.idle += 70;
  EXPECT_EQ(iowait_pct(st->cpu, later), 30.0);
  EXPECT_EQ(iowait_pct(st->cpu, st->cpu), std::nullopt);  // no time passed
  EXPECT_EQ(parse_proc_stat("intr 1 2\n"), std::nullopt);
  EXPECT_EQ(parse_proc_stat("cpu  1 2 x 4 5\n"), std::nullopt);
}

TEST(HostParse, PsiSomeAvg10) {
  EXPECT_EQ(parse_psi_some_avg10("some avg10=1.53 avg60=0.87 avg300=0.40 total=18837243\n"
                                 "full avg10=9.00 avg60=0.00 avg300=0.00 total=0\n"),
            1.53);
  EXPECT_EQ(parse_psi_some_avg10("full avg10=9.00\n"), std::nullopt);
}

TEST(HostParse, PidStatWithAwkwardName) {
  const auto st = parse_pid_stat(
      "4300 (nccl-proxy (rank 0)) S 4100 4100 4100 0 -1 4194560 10 0 0 0 5 1 0 0 20 0 2 0 "
      "1000050 1000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0");
  ASSERT_TRUE(st);
  EXPECT_EQ(st->comm, "nccl-proxy (rank 0)");
  EXPECT_EQ(st->utime_ticks, 5U);
  EXPECT_EQ(st->stime_ticks, 1U);
  EXPECT_EQ(st->threads, 2U);
  EXPECT_EQ(st->start_ticks, 1000050U);
  EXPECT_EQ(parse_pid_stat("4300 (short) S 1 2 3"), std::nullopt);
  EXPECT_EQ(parse_pid_stat("no parentheses at all"), std::nullopt);
}

TEST(HostParse, CudaVersions) {
  EXPECT_EQ(parse_cuda_version_json(R"({"cuda": {"name": "CUDA SDK", "version": "12.4.1"}})"),
            "12.4.1");
  EXPECT_EQ(parse_cuda_version_json(R"({"cuda_cudart": {"version": "12.4.127"}})"), std::nullopt);
  EXPECT_EQ(parse_cuda_version_json("{not json"), std::nullopt);
  EXPECT_EQ(parse_cuda_version_txt("CUDA Version 11.8.89\n"), "11.8.89");
  EXPECT_EQ(parse_cuda_version_txt("CUDA Version\n"), std::nullopt);
}

TEST(HostParse, TorchVersionPlainAndAnnotated) {
  const auto a = parse_torch_version_py(
      "__version__ = '2.3.1+cu121'\ndebug = False\n"
      "cuda: Optional[str] = '12.1'\n"
      "git_version = 'abc'\nhip: Optional[str] = None\n");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->version, "2.3.1+cu121");
  EXPECT_EQ(a->cuda, "12.1");
  const auto b = parse_torch_version_py("__version__ = \"1.13.1\"\ncuda = '11.7'\n");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->version, "1.13.1");
  EXPECT_EQ(b->cuda, "11.7");
  const auto cpu = parse_torch_version_py("__version__ = '2.3.1+cpu'\ncuda = None\n");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->cuda, std::nullopt);
  EXPECT_EQ(parse_torch_version_py("cuda = '12.1'\n"), std::nullopt);
}

TEST(HostParse, TensorflowBuildInfoAndDistInfo) {
  EXPECT_EQ(parse_tf_build_info_cuda("build_info = {\n    'cuda_compute_capabilities': ['sm_80'],\n"
                                     "    'cuda_version': '12.2',\n}\n"),
            "12.2");
  EXPECT_EQ(parse_tf_build_info_cuda("build_info = {'is_cuda_build': False}\n"), std::nullopt);
  const auto d = parse_dist_info_name("tensorflow-2.15.0.dist-info");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->first, "tensorflow");
  EXPECT_EQ(d->second, "2.15.0");
  EXPECT_EQ(parse_dist_info_name("tensorflow"), std::nullopt);
  EXPECT_EQ(parse_dist_info_name("-1.0.dist-info"), std::nullopt);
}

TEST(HostParse, GpuEnvironment) {
  const std::map<std::string, std::string> env = {
      {"CUDA_VISIBLE_DEVICES", "0,1"},
      {"NVIDIA_VISIBLE_DEVICES", "all"},
      {"NCCL_P2P_DISABLE", "1"},
      {"LD_LIBRARY_PATH", "/usr/local/cuda/lib64"},
      {"CUDA_LAUNCH_BLOCKING", "1"},
      {"HOME", "/root"},
      {"PATH", "/usr/bin"},
      {"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True"}};
  const auto sel = select_gpu_env(env);
  EXPECT_EQ(sel.size(), 6U);
  EXPECT_EQ(sel.at("NCCL_P2P_DISABLE"), "1");
  EXPECT_EQ(sel.count("HOME"), 0U);
  EXPECT_EQ(sel.count("PATH"), 0U);
  EXPECT_TRUE(is_gpu_env_var("CUDA_DEVICE_ORDER"));
  EXPECT_FALSE(is_gpu_env_var("NCCL"));
}

}  // namespace
}  // namespace gw::host
