// topo -m and the plain nvidia-smi table.
#include <gtest/gtest.h>

#include "fixture_util.h"
#include "sources/smi/smi_parsers.h"

namespace gw {
namespace {

using test::kMiB;
using test::read_fixture;

TEST(Topo, SingleGpuWithAnsi031) {
  auto r = parse_smi_topo(read_fixture("031-h100-topo-single-gpu-ansi", "topo.txt"), "031");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->gpu_names.size(), 1u);
  EXPECT_EQ(r->gpu_names[0], "GPU0");
  ASSERT_EQ(r->links.size(), 1u);
  ASSERT_EQ(r->links[0].size(), 1u);
  EXPECT_EQ(r->links[0][0], "X");
  EXPECT_EQ(r->cpu_affinity[0], "0-19");
  EXPECT_EQ(r->numa_affinity[0], 0);
}

TEST(Topo, MultiGpuWithNicAndCrlf) {
  const char* text =
      "\t\x1b[4mGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\r\n"
      "GPU0\t X \tNV18\tPXB\t0-47,96-143\t0\t\tN/A\r\n"
      "GPU1\tNV18\t X \tSYS\t48-95,144-191\t1\t\tN/A\r\n"
      "NIC0\tPXB\tSYS\t X \t\t\t\t\r\n\r\nLegend:\r\n";
  auto r = parse_smi_topo(text, "t.txt");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->gpu_names.size(), 2u);
  EXPECT_EQ(r->links[0], (std::vector<std::string>{"X", "NV18"}));
  EXPECT_EQ(r->links[1], (std::vector<std::string>{"NV18", "X"}));
  EXPECT_EQ(r->cpu_affinity[1], "48-95,144-191");
  EXPECT_EQ(r->numa_affinity[1], 1);
}

// Older drivers' "SOC" (across CPU sockets, capture 468's P100 pair) is today's "SYS".
TEST(Topo, OldSocLegendIsSys) {
  const char* text =
      "        GPU0    GPU1    CPU Affinity\n"
      "GPU0     X      SOC     0-5\n"
      "GPU1    SOC      X      6-11\n";
  auto r = parse_smi_topo(text, "old");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->links.size(), 2u);
  EXPECT_EQ(r->links[0][1], "SYS");
  EXPECT_EQ(r->links[1][0], "SYS");
  EXPECT_EQ(r->cpu_affinity[1], "6-11");
}

TEST(Topo, MissingHeaderIsAnError) {
  auto r = parse_smi_topo("hello\n", "t.txt");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().where, "t.txt:1");
}

TEST(Table, H100x8Healthy013) {
  auto r = parse_smi_table(read_fixture("013-h100x8-nvidia-smi-table-healthy", "input.txt"), "013");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Snapshot& s = *r;
  ASSERT_EQ(s.gpus.size(), 8u);
  EXPECT_EQ(s.driver_version, "550.90.07");
  EXPECT_EQ(s.cuda_driver_version, 12040);
  const GpuState& g0 = s.gpus[0];
  EXPECT_EQ(g0.info.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g0.info.pci_bus_id, "00000000:19:00.0");
  EXPECT_EQ(g0.sample.persistence_mode, true);
  EXPECT_EQ(g0.sample.temp_c, 27);
  EXPECT_EQ(g0.sample.pstate, 0u);
  EXPECT_EQ(g0.sample.power_mw, 72000u);
  EXPECT_EQ(g0.sample.power_limit_mw, 700000u);
  EXPECT_EQ(g0.sample.mem_used_bytes, 1 * kMiB);
  EXPECT_EQ(g0.sample.mem_total_bytes, 81559 * kMiB);
  EXPECT_EQ(g0.sample.util_gpu_pct, 0u);
  EXPECT_EQ(g0.sample.ecc_dbe_volatile, 0u);
  EXPECT_EQ(g0.sample.mig_enabled, false);
  EXPECT_FALSE(g0.sample.fan_pct.has_value());
  ASSERT_TRUE(g0.sample.processes.has_value());
  EXPECT_TRUE(g0.sample.processes->empty());
  EXPECT_EQ(s.gpus[7].info.pci_bus_id, "00000000:DB:00.0");
  EXPECT_EQ(s.gpus[7].info.index, 7u);
  EXPECT_EQ(s.time_ms, 1737368306000);  // Mon Jan 20 10:18:26 2025 (UTC)
}

TEST(Table, ProcessesAreAttachedToTheirGpu) {
  const char* text =
      "| NVIDIA-SMI 535.54.03   Driver Version: 535.54.03   CUDA Version: 12.2     |\n"
      "|   0  NVIDIA A100-SXM4-40GB    On  | 00000000:07:00.0 Off |                    0 |\n"
      "| N/A   33C    P0    61W / 400W |   4321MiB / 40960MiB |     37%      Default |\n"
      "|                               |                      |             Disabled |\n"
      "+-------------------------------+----------------------+----------------------+\n"
      "| Processes:                                                                  |\n"
      "|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |\n"
      "|    0   N/A  N/A     12345      C   python train.py                  4318MiB |\n";
  auto r = parse_smi_table(text, "t.txt");
  ASSERT_TRUE(r.ok());
  const auto& p = r->gpus.at(0).sample.processes;
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->size(), 1u);
  EXPECT_EQ((*p)[0].pid, 12345u);
  EXPECT_EQ((*p)[0].name, "python train.py");
  EXPECT_EQ((*p)[0].used_mem_bytes, 4318 * kMiB);
  EXPECT_EQ(r->gpus[0].sample.util_gpu_pct, 37u);
}

}  // namespace
}  // namespace gw
