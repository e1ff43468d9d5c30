// read_host_facts and HostSampler over the fixture trees in fixtures/host/<case>/.
#include "sources/host/host_facts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "sources/host/host_sampler.h"

namespace gw {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

fs::path fixture(const std::string& name) {
  return fs::path(GW_SOURCE_DIR) / "fixtures/host" / name;
}

HostFacts read(const std::string& name, std::vector<Error>* errors,
               std::vector<uint32_t> pids = {}) {
  HostReadOptions o;
  o.root = fixture(name);
  o.gpu_pids = std::move(pids);
  return read_host_facts(o, errors);
}

const ProcessCpuFacts* find_pid(const HostFacts& h, uint32_t pid) {
  for (const auto& p : h.gpu_processes) {
    if (p.pid == pid) return &p;
  }
  return nullptr;
}

TEST(HostFacts, HealthyBoxWithTwoGpus) {
  std::vector<Error> errors;
  HostReadOptions o;
  o.root = fixture("healthy");
  o.env = {{"CUDA_VISIBLE_DEVICES", "1"}, {"HOME", "/root"}, {"NCCL_P2P_DISABLE", "1"}};
  const auto h = read_host_facts(o, &errors);
  EXPECT_TRUE(errors.empty()) << errors.front().to_string();

  EXPECT_EQ(h.kernel_module_version, "550.54.15");
  EXPECT_EQ(h.nvidia_module_loaded, true);
  EXPECT_EQ(h.nouveau_loaded, false);
  EXPECT_EQ(h.dev_nvidia_nodes, 2U);  // nvidia0, nvidia1; not nvidiactl or nvidia-uvm
  EXPECT_EQ(h.dev_nvidiactl, true);
  EXPECT_EQ(h.in_container, false);

  ASSERT_EQ(h.nvidia_pci_devices.size(), 2U);  // audio function and foreign VGA left out
  const auto& g0 = h.nvidia_pci_devices[0];
  EXPECT_EQ(g0.pci_bus_id, "00000000:18:00.0");
  EXPECT_EQ(g0.device_id, "0x2330");
  EXPECT_EQ(g0.link_speed_gt_s, 32.0);
  EXPECT_EQ(g0.max_link_speed_gt_s, 32.0);
  EXPECT_EQ(g0.link_width, 16U);
  EXPECT_EQ(g0.max_link_width, 16U);
  EXPECT_EQ(g0.numa_node, 0);
  EXPECT_EQ(g0.driver, "nvidia");
  EXPECT_EQ(h.nvidia_pci_devices[1].pci_bus_id, "00000000:9A:00.0");
  EXPECT_EQ(h.nvidia_pci_devices[1].numa_node, 1);

  EXPECT_EQ(h.cpu_count, 8U);
  EXPECT_EQ(h.load1, 3.52);
  ASSERT_TRUE(h.iowait_pct);  // since boot: 23060 of 3728158 ticks
  EXPECT_NEAR(*h.iowait_pct, 100.0 * 23060 / 3728158, 1e-9);
  EXPECT_EQ(h.psi_cpu_some_avg10, 1.53);
  EXPECT_EQ(h.psi_io_some_avg10, 0.20);
  EXPECT_EQ(h.psi_mem_some_avg10, 0.0);

  ASSERT_EQ(h.cuda_toolkits.size(), 3U);  // cuda -> cuda-12.4, cuda-11.8, cuda-12.4
  EXPECT_EQ(h.cuda_toolkits[0].path, "/usr/local/cuda");
  EXPECT_EQ(h.cuda_toolkits[0].version, "12.4.1");
  EXPECT_EQ(h.cuda_toolkits[1].path, "/usr/local/cuda-11.8");
  EXPECT_EQ(h.cuda_toolkits[1].version, "11.8.89");
  EXPECT_EQ(h.cuda_toolkits[2].version, "12.4.1");

  ASSERT_EQ(h.frameworks.size(), 2U);
  EXPECT_EQ(h.frameworks[0].name, "torch");
  EXPECT_EQ(h.frameworks[0].version, "2.3.1+cu121");
  EXPECT_EQ(h.frameworks[0].cuda, "12.1");
  EXPECT_EQ(h.frameworks[0].path, "/usr/local/lib/python3.10/dist-packages/torch");
  EXPECT_EQ(h.frameworks[1].name, "tensorflow");
  EXPECT_EQ(h.frameworks[1].version, "2.15.0");
  EXPECT_EQ(h.frameworks[1].cuda, "12.2");

  EXPECT_EQ(h.env, (std::map<std::string, std::string>{{"CUDA_VISIBLE_DEVICES", "1"},
                                                       {"NCCL_P2P_DISABLE", "1"}}));
}

TEST(HostFacts, ExtraPythonPathsAreSearchedUnderTheRoot) {
  std::vector<Error> errors;
  HostReadOptions o;
  o.root = fixture("healthy");
  o.python_paths = {"/usr/local/lib/python3.10/dist-packages"};  // also a default: no duplicate
  const auto h = read_host_facts(o, &errors);
  EXPECT_EQ(h.frameworks.size(), 2U);
}

TEST(HostFacts, NouveauWithoutNvidiaModuleOrNodes) {
  std::vector<Error> errors;
  const auto h = read("nouveau", &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(h.nouveau_loaded, true);
  EXPECT_EQ(h.nvidia_module_loaded, false);
  EXPECT_EQ(h.kernel_module_version, std::nullopt);  // no /proc/driver/nvidia
  EXPECT_EQ(h.dev_nvidia_nodes, 0U);
  EXPECT_EQ(h.dev_nvidiactl, false);
  ASSERT_EQ(h.nvidia_pci_devices.size(), 1U);
  EXPECT_EQ(h.nvidia_pci_devices[0].driver, "nouveau");
  EXPECT_EQ(h.nvidia_pci_devices[0].link_speed_gt_s, 2.5);
  EXPECT_EQ(h.in_container, std::nullopt);  // nothing says either way
  // Absent files are unknown, never zero.
  EXPECT_EQ(h.load1, std::nullopt);
  EXPECT_EQ(h.cpu_count, std::nullopt);
  EXPECT_EQ(h.iowait_pct, std::nullopt);
  EXPECT_EQ(h.psi_cpu_some_avg10, std::nullopt);
}

TEST(HostFacts, ContainerWithoutDeviceNodes) {
  std::vector<Error> errors;
  const auto h = read("container", &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(h.in_container, true);
  EXPECT_EQ(h.kernel_module_version, "570.86.15");  // the host's driver shows through /proc
  EXPECT_EQ(h.dev_nvidia_nodes, 0U);
  EXPECT_EQ(h.dev_nvidiactl, false);
  EXPECT_EQ(h.nvidia_module_loaded, std::nullopt);  // no /proc/modules here
  EXPECT_TRUE(h.nvidia_pci_devices.empty());
}

TEST(HostFacts, ContainerFromEnvironment) {
  HostReadOptions o;
  o.root = fixture("nouveau");
  o.env = {{"container", "podman"}};
  EXPECT_EQ(read_host_facts(o, nullptr).in_container, true);
}

TEST(HostFacts, DowntrainedLink) {
  std::vector<Error> errors;
  const auto h = read("downtrained", &errors);
  ASSERT_EQ(h.nvidia_pci_devices.size(), 1U);
  const auto& d = h.nvidia_pci_devices[0];
  EXPECT_EQ(d.pci_bus_id, "00000000:41:00.0");
  EXPECT_EQ(d.link_speed_gt_s, 8.0);
  EXPECT_EQ(d.max_link_speed_gt_s, 16.0);
  EXPECT_EQ(d.link_width, 8U);
  EXPECT_EQ(d.max_link_width, 16U);
  EXPECT_EQ(h.dev_nvidia_nodes, std::nullopt);  // no /dev in this tree at all
}

TEST(HostRates, BusyDataLoaderAtOneCoreBetweenTwoReadings) {
  HostReadOptions o;
  o.gpu_pids = {4242, 4100, 4300, 9999};  // 4300 started in between, 9999 never existed
  std::vector<Error> errors;
  o.root = fixture("busy-loader/t0");
  const auto before = read_host_counters(o, &errors);
  o.root = fixture("busy-loader/t1");
  const auto after = read_host_counters(o, &errors);
  EXPECT_TRUE(errors.empty());

  HostFacts h;
  apply_host_rates(before, after, h);
  EXPECT_EQ(h.cpu_count, 8U);
  ASSERT_TRUE(h.iowait_pct);
  EXPECT_DOUBLE_EQ(*h.iowait_pct, 12.5);  // 100 of 800 ticks
  ASSERT_EQ(h.gpu_processes.size(), 3U);

  const auto* loader = find_pid(h, 4242);
  ASSERT_NE(loader, nullptr);
  EXPECT_EQ(loader->name, "pt_data_worker");
  EXPECT_EQ(loader->threads, 1U);
  ASSERT_TRUE(loader->cpu_pct);
  EXPECT_DOUBLE_EQ(*loader->cpu_pct, 100.0);  // one full core, single-threaded: the bottleneck

  const auto* trainer = find_pid(h, 4100);
  ASSERT_NE(trainer, nullptr);
  EXPECT_EQ(trainer->name, "python3");  // from comm, not "python3 train.py" from stat
  EXPECT_EQ(trainer->threads, 64U);
  EXPECT_DOUBLE_EQ(trainer->cpu_pct.value_or(-1), 150.0);

  const auto* fresh = find_pid(h, 4300);
  ASSERT_NE(fresh, nullptr);
  EXPECT_EQ(fresh->name, "nccl-proxy (rank 0)");  // no comm file: from stat
  EXPECT_EQ(fresh->cpu_pct, std::nullopt);        // no earlier reading: no rate
}

TEST(HostRates, OneShotIsSinceProcessStart) {
  const auto h = read("busy-loader/t1", nullptr, {4242});
  ASSERT_EQ(h.gpu_processes.size(), 1U);
  // 10150 ticks used over (10011 s * 100 - 989000) ticks alive.
  EXPECT_NEAR(h.gpu_processes[0].cpu_pct.value_or(-1), 100.0 * 10150 / 12100, 1e-9);
}

TEST(HostRates, ReusedPidGetsNoRate) {
  HostCounters a;
  HostCounters b;
  a.stat = host::ProcStat{};
  a.stat->cpu.idle = 100;
  a.stat->cpu_count = 1;
  b.stat = a.stat;
  b.stat->cpu.idle = 200;
  a.pids[7] = host::PidStat{"old", 10, 0, 1, 50};
  b.pids[7] = host::PidStat{"new", 20, 0, 1, 900};
  HostFacts h;
  apply_host_rates(a, b, h);
  ASSERT_EQ(h.gpu_processes.size(), 1U);
  EXPECT_EQ(h.gpu_processes[0].cpu_pct, std::nullopt);
}

// A scratch copy of a fixture tree that a test may change.
class ScratchTree : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    root_ = fs::temp_directory_path() / ("gw-host-" + std::to_string(rd()));
    fs::copy(fixture("busy-loader/t0"), root_, fs::copy_options::recursive);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) {
    std::ofstream(root_ / rel, std::ios::trunc) << text;
  }
  fs::path root_;
};

TEST_F(ScratchTree, SamplerGivesRatesSinceThePreviousCall) {
  HostReadOptions o;
  o.root = root_;
  o.gpu_pids = {4242};
  HostSampler sampler(o);
  const auto first = sampler.sample(nullptr);
  ASSERT_EQ(first.gpu_processes.size(), 1U);
  EXPECT_NEAR(first.gpu_processes[0].cpu_pct.value_or(-1), 100.0 * 10050 / 12000, 1e-9);

  fs::copy(fixture("busy-loader/t1/proc"), root_ / "proc",
           fs::copy_options::recursive | fs::copy_options::overwrite_existing);
  const auto second = sampler.sample(nullptr);
  ASSERT_EQ(second.gpu_processes.size(), 1U);
  EXPECT_DOUBLE_EQ(second.gpu_processes[0].cpu_pct.value_or(-1), 100.0);
  EXPECT_DOUBLE_EQ(second.iowait_pct.value_or(-1), 12.5);
}

TEST_F(ScratchTree, UnreadableFileIsAnErrorNamingThePathAndLosesNothingElse) {
  fs::create_directories(root_ / "proc/loadavg");  // present, but not a readable file
  write("proc/pressure-placeholder", "");
  std::vector<Error> errors;
  HostReadOptions o;
  o.root = root_;
  o.gpu_pids = {4242};
  const auto h = read_host_facts(o, &errors);
  ASSERT_EQ(errors.size(), 1U);
  EXPECT_EQ(errors[0].code, "host.unreadable");
  EXPECT_THAT(errors[0].where, HasSubstr("proc/loadavg"));
  EXPECT_THAT(errors[0].message, HasSubstr("/proc/loadavg"));
  EXPECT_EQ(h.load1, std::nullopt);
  EXPECT_EQ(h.cpu_count, 8U);  // the rest is still read
  EXPECT_EQ(h.gpu_processes.size(), 1U);
}

TEST_F(ScratchTree, GarbledStatIsAnError) {
  write("proc/4242/stat", "4242 (pt_data_worker) R 1 2\n");
  std::vector<Error> errors;
  HostReadOptions o;
  o.root = root_;
  o.gpu_pids = {4242};
  const auto h = read_host_facts(o, &errors);
  ASSERT_EQ(errors.size(), 1U);
  EXPECT_EQ(errors[0].code, "host.bad_file");
  EXPECT_THAT(errors[0].where, HasSubstr("proc/4242/stat"));
  EXPECT_TRUE(h.gpu_processes.empty());
}

}  // namespace
}  // namespace gw
