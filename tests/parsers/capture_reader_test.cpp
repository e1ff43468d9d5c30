// The segmenting reader: every part of a mixed file is read by its parser, lines nothing
// understood are counted, and what was cut short is said to be incomplete. Inputs are the real
// fixtures (fixtures/captures/1xx) or sessions built from their lines.
#include "sources/capture_reader.h"

#include <gtest/gtest.h>

#include <cctype>
#include <functional>
#include <random>
#include <sstream>
#include <string>

#include "fixture_util.h"
#include "sources/capture_text.h"
#include "sources/captures.h"
#include "sources/env/env_reports.h"
#include "sources/smi/text_util.h"

namespace gw {
namespace {

using test::read_fixture;

Observation read(const std::string& text, const std::string& origin = "in.txt") {
  Observation obs;
  add_capture(text, origin, obs);
  return obs;
}

bool has_format(const InputCoverage& c, const std::string& f) {
  for (const auto& x : c.formats)
    if (x == f) return true;
  return false;
}

TEST(Reader, TerminalSessionWithTableKernelLinesAndTraceback) {
  // A prompt, the 124 banner (table cut after its header), the 108 dmesg lines and the 112
  // PyTorch error, pasted one after the other with prompts between them.
  const std::string table =
      read_fixture("124-collect-env-torch-cu102-on-driver-418-v100x2", "input.txt");
  const std::string dmesg =
      read_fixture("108-docker-nvml-mismatch-hook-plus-dmesg-515-vs-510", "dmesg.log");
  const std::string app = read_fixture("112-pytorch-uncorrectable-ecc-error-hpc-node", "app.log");
  const std::string text = "user@gpu-node:~$ nvidia-smi\n" + table + "user@gpu-node:~$ dmesg\n" +
                           dmesg + "user@gpu-node:~$ python train.py\n" + app +
                           "this line is nobody's\n";
  const Observation obs = read(text);
  ASSERT_EQ(obs.coverage.size(), 1u);
  const InputCoverage& c = obs.coverage[0];
  EXPECT_TRUE(has_format(c, "nvidia-smi table")) << c.formats.size();
  EXPECT_TRUE(has_format(c, "kernel log"));
  EXPECT_TRUE(has_format(c, "application log"));
  EXPECT_EQ(c.lines_not_understood, 1u);
  // The unknown line is the last one of the session.
  size_t lines = 0;
  for (char ch : text) lines += ch == '\n';
  EXPECT_EQ(c.first_not_understood_line, lines);
  ASSERT_TRUE(obs.host.has_value());
  EXPECT_EQ(obs.host->smi_driver_version, "418.67");
  EXPECT_EQ(obs.host->smi_cuda_version, "10.1");
  ASSERT_EQ(obs.app_messages.size(), 1u);
  EXPECT_EQ(obs.app_messages[0].kind, AppMessageKind::kUncorrectableEcc);
  EXPECT_TRUE(obs.input_errors.empty()) << obs.input_errors[0].to_string();
  EXPECT_TRUE(c.incomplete);  // the table was cut after its header
}

TEST(Reader, QueryFragmentWithoutGpuLineIsOneGpuOfUnknownBus) {
  const Observation obs = read(
      read_fixture("115-ecc-section-only-volatile-sram-uncorrectable-1-aggregate-5", "input.txt"));
  ASSERT_EQ(obs.samples.size(), 1u);
  ASSERT_EQ(obs.samples[0].gpus.size(), 1u);
  const GpuState& g = obs.samples[0].gpus[0];
  EXPECT_TRUE(g.info.pci_bus_id.empty());
  // SRAM + DRAM, as NVML's totals count them.
  EXPECT_EQ(g.sample.ecc_sbe_volatile, 0u);
  EXPECT_EQ(g.sample.ecc_dbe_volatile, 1u);
  EXPECT_EQ(g.sample.ecc_dbe_aggregate, 5u);
  ASSERT_EQ(obs.coverage.size(), 1u);
  ASSERT_FALSE(obs.coverage[0].notes.empty());
  EXPECT_NE(obs.coverage[0].notes[0].find("unknown bus id"), std::string::npos);
  EXPECT_EQ(obs.coverage[0].lines_not_understood, 0u);
}

TEST(Reader, DedentedQuerySectionReadsTheSame) {
  // The same 113 section with its indentation removed.
  std::string text;
  for (const char* l : {"Remapped Rows", "Correctable Error : 1", "Uncorrectable Error : 0",
                        "Pending : Yes", "Remapping Failure Occurred : No"})
    text += std::string(l) + "\n";
  const Observation obs = read(text);
  ASSERT_EQ(obs.samples.size(), 1u);
  const GpuSample& s = obs.samples[0].gpus.at(0).sample;
  EXPECT_EQ(s.remapped_rows_correctable, 1u);
  EXPECT_EQ(s.remapped_rows_pending, true);
  EXPECT_EQ(s.remapped_rows_failure, false);
}

TEST(Reader, QueryCutShortIsIncomplete) {
  const Observation obs =
      read(read_fixture("113-a100-xid63-row-remap-pending-177-dram-sbe-partial-q", "input.txt"));
  ASSERT_EQ(obs.samples.size(), 1u);
  const GpuState& g = obs.samples[0].gpus.at(0);
  EXPECT_EQ(g.info.pci_bus_id, "00000000:10:1C.0");
  EXPECT_EQ(g.sample.ecc_sbe_volatile, 177u);
  EXPECT_EQ(g.sample.remapped_rows_pending, true);
  const InputCoverage& c = obs.coverage.at(0);
  EXPECT_TRUE(c.incomplete);
  ASSERT_FALSE(c.incomplete_reasons.empty());
  EXPECT_NE(c.incomplete_reasons[0].find("Attached GPUs: 8 but 1"), std::string::npos);
  EXPECT_EQ(c.elided_lines, 2u);
  EXPECT_EQ(c.lines_not_understood, 0u);
}

TEST(Reader, CsvHeaderWithoutRowsIsIncomplete) {
  const std::string csv =
      read_fixture("129-csv-two-gpus-100pct-71c-high-clocks-healthy", "input.csv");
  const Observation obs = read(csv.substr(0, csv.find('\n') + 1));
  EXPECT_TRUE(obs.samples.empty());
  ASSERT_EQ(obs.coverage.size(), 1u);
  EXPECT_TRUE(obs.coverage[0].incomplete);
  EXPECT_NE(obs.coverage[0].incomplete_reasons.at(0).find("no data rows"), std::string::npos);
  EXPECT_TRUE(obs.input_errors.empty());
}

TEST(Reader, CsvWithElisionAndKernelLinesAfterIt) {
  const std::string csv =
      read_fixture("114-h100-dmesg-pcie-bandwidth-limited-gen4-upstream", "input.csv");
  const std::string dmesg =
      read_fixture("114-h100-dmesg-pcie-bandwidth-limited-gen4-upstream", "dmesg.log");
  const Observation obs = read(csv + dmesg);
  ASSERT_FALSE(obs.samples.empty());
  size_t gpus = 0;
  for (const auto& s : obs.samples) gpus += s.gpus.size();
  EXPECT_EQ(gpus, 2u);
  const InputCoverage& c = obs.coverage.at(0);
  EXPECT_TRUE(has_format(c, "nvidia-smi --query-gpu csv"));
  EXPECT_TRUE(has_format(c, "kernel log"));
  EXPECT_EQ(c.elided_lines, 2u);
  EXPECT_EQ(c.lines_not_understood, 0u);
  for (const auto& e : obs.input_errors) ADD_FAILURE() << e.to_string();
}

TEST(Reader, TopoWithSpacesNicsAndALineAbove) {
  const std::string topo = read_fixture("117-topo-4x-a10-all-pairs-sys-single-numa", "topo.txt");
  const Observation obs = read("$ nvidia-smi topo -m\n" + topo);
  ASSERT_TRUE(obs.topology.has_value());
  const Topology& t = *obs.topology;
  ASSERT_EQ(t.gpu_names.size(), 4u);
  EXPECT_EQ(t.links[0][1], "SYS");
  EXPECT_EQ(t.links[2][2], "X");
  ASSERT_EQ(t.nic_names.size(), 2u);
  EXPECT_EQ(t.nic_devices[1], "mlx5_1");
  EXPECT_EQ(t.gpu_nic_links[3][0], "SYS");
  EXPECT_EQ(t.nic_links[0][1], "PIX");
  EXPECT_EQ(t.cpu_affinity[0], "0-127");
  EXPECT_EQ(t.numa_affinity[3], 0);
  EXPECT_EQ(obs.coverage.at(0).lines_not_understood, 0u);
}

TEST(Reader, Topo132EightGpusSeventeenNics) {
  const Observation obs =
      read(read_fixture("132-topo-8x-a100-nv12-17-nics-single-numa-healthy", "topo.txt"));
  ASSERT_TRUE(obs.topology.has_value());
  const Topology& t = *obs.topology;
  ASSERT_EQ(t.gpu_names.size(), 8u);
  ASSERT_EQ(t.nic_names.size(), 17u);
  EXPECT_EQ(t.links[0][7], "NV12");
  EXPECT_EQ(t.gpu_nic_links[2][4], "PXB");
  EXPECT_EQ(t.nic_devices[16], "mlx5_bond_0");
  EXPECT_EQ(t.cpu_affinity[7], "0-103");
}

TEST(Reader, CollectEnvAndNvccAndProcVersionFillHostFacts) {
  const std::string env =
      read_fixture("124-collect-env-torch-cu102-on-driver-418-v100x2", "env.txt");
  // nvcc -V and /proc/driver/nvidia/version as those tools print them.
  const std::string extra =
      "$ nvcc -V\n"
      "nvcc: NVIDIA (R) Cuda compiler driver\n"
      "Copyright (c) 2005-2023 NVIDIA Corporation\n"
      "Built on Tue_Aug_15_22:02:13_PDT_2023\n"
      "Cuda compilation tools, release 12.2, V12.2.140\n"
      "Build cuda_12.2.r12.2/compiler.33191640_0\n"
      "$ cat /proc/driver/nvidia/version\n"
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n"
      "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n";
  const Observation obs = read(env + extra);
  ASSERT_TRUE(obs.host.has_value());
  const HostFacts& h = *obs.host;
  ASSERT_EQ(h.frameworks.size(), 1u);
  EXPECT_EQ(h.frameworks[0].name, "torch");
  EXPECT_EQ(h.frameworks[0].version, "1.6.0");
  EXPECT_EQ(h.frameworks[0].cuda, "10.2");
  EXPECT_EQ(h.torch_cuda_available, false);
  EXPECT_EQ(h.smi_driver_version, "418.67");
  ASSERT_EQ(h.gpu_models.size(), 2u);
  EXPECT_EQ(h.gpu_models[1], "Tesla V100-PCIE-16GB");
  ASSERT_EQ(h.cuda_toolkits.size(), 1u);  // collect_env found none ("Could not collect")
  EXPECT_EQ(h.cuda_toolkits[0].version, "12.2");
  EXPECT_EQ(h.kernel_module_version, "535.129.03");
  EXPECT_EQ(obs.coverage.at(0).lines_not_understood, 0u)
      << *obs.coverage.at(0).first_not_understood_line;
}

// TensorFlow's issue template (capture 313's info.txt): versions and the GPU model, every line
// read; a list item with another key is not.
TEST(Reader, TensorFlowIssueTemplateFillsHostFacts) {
  const Observation obs = read(
      read_fixture("313-tf-cuda-error-no-binary-for-gpu-a100-tf2.4.1-built-cc7.0", "info.txt"));
  ASSERT_TRUE(obs.host.has_value());
  const HostFacts& h = *obs.host;
  ASSERT_EQ(h.frameworks.size(), 1u);
  EXPECT_EQ(h.frameworks[0].name, "tensorflow");
  EXPECT_EQ(h.frameworks[0].version, "2.4.1");
  ASSERT_EQ(h.cuda_toolkits.size(), 1u);
  EXPECT_EQ(h.cuda_toolkits[0].version, "10.1");
  ASSERT_EQ(h.gpu_models.size(), 1u);
  EXPECT_EQ(h.gpu_models[0], "A100");
  EXPECT_EQ(obs.coverage.at(0).lines_not_understood, 0u);
  EXPECT_EQ(read("- Favourite colour: blue\n").coverage.at(0).lines_not_understood, 1u);
}

// deviceQuery's device block (capture 315): the GPU model kept, every line read.
TEST(Reader, DeviceQueryBlockIsReadWithTheGpuModel) {
  const Observation obs = read(read_fixture(
      "315-cuda-memtest-gt720-cc3.5-no-kernel-image-not-a-memory-fault", "deviceQuery.txt"));
  ASSERT_TRUE(obs.host.has_value());
  ASSERT_EQ(obs.host->gpu_models.size(), 1u);
  EXPECT_EQ(obs.host->gpu_models[0], "NVIDIA GeForce GT 720");
  EXPECT_EQ(obs.coverage.at(0).lines_not_understood, 0u);
  // Its labels mean nothing outside the report.
  EXPECT_EQ(read("Warp size:  32\n").coverage.at(0).lines_not_understood, 1u);
}

TEST(Reader, SmiListAndSyslogKernelLinesInOneSession) {
  // nvidia-smi -L as it prints, then the 130 journal lines (kernel, no host name).
  const std::string text =
      "$ nvidia-smi -L\n"
      "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-faae5314-b87e-87c0-400b-b7cfb9e7b310)\n"
      "  MIG 1g.10gb     Device  0: (UUID: MIG-6bfc7d8c-1d2b-5b8b-9a11-1b7a5f3f0e11)\n" +
      read_fixture("130-journal-no-hostname-indented-gsp-heartbeat-0-no-xid", "journal.log");
  const Observation obs = read(text);
  ASSERT_TRUE(obs.host.has_value());
  ASSERT_EQ(obs.host->gpu_models.size(), 1u);
  EXPECT_EQ(obs.host->gpu_models[0], "NVIDIA A100-SXM4-80GB");
  const InputCoverage& c = obs.coverage.at(0);
  EXPECT_TRUE(has_format(c, "kernel log"));
  EXPECT_EQ(c.lines_not_understood, 0u) << *c.first_not_understood_line;
}

TEST(Reader, LspciLinkStatusPerBusId) {
  // lspci -vv shape (tab-indented details), downgraded link on the second GPU.
  const std::string text =
      "3b:00.0 3D controller: NVIDIA Corporation GA100 [A100 SXM4 80GB] (rev a1)\n"
      "\tSubsystem: NVIDIA Corporation Device 1463\n"
      "\tCapabilities: [68] Express (v2) Endpoint, MSI 00\n"
      "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported\n"
      "\t\tLnkSta:\tSpeed 16GT/s, Width x16\n"
      "\tKernel driver in use: nvidia\n"
      "\n"
      "5e:00.0 3D controller: NVIDIA Corporation GA100 [A100 SXM4 80GB] (rev a1)\n"
      "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported\n"
      "\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x8 (downgraded)\n"
      "\tKernel driver in use: nvidia\n"
      "5f:00.0 Ethernet controller: Mellanox Technologies MT28908 Family [ConnectX-6]\n"
      "\t\tLnkSta:\tSpeed 16GT/s, Width x16\n";
  const Observation obs = read(text);
  ASSERT_TRUE(obs.host.has_value());
  const auto& d = obs.host->nvidia_pci_devices;
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].pci_bus_id, "00000000:3B:00.0");
  EXPECT_EQ(d[0].link_downgraded, false);
  EXPECT_EQ(d[1].link_speed_gt_s, 2.5);
  EXPECT_EQ(d[1].max_link_speed_gt_s, 16.0);
  EXPECT_EQ(d[1].link_width, 8u);
  EXPECT_EQ(d[1].max_link_width, 16u);
  EXPECT_EQ(d[1].link_downgraded, true);
  EXPECT_EQ(d[1].driver, "nvidia");
  EXPECT_EQ(obs.coverage.at(0).lines_not_understood, 0u);
}

// fuzz_lspci: a width lspci cannot print (x64) and speeds no link runs at (inf, negative) are
// not facts; x0 is what lspci shows for a link that is down, and stays.
TEST(Reader, LspciImpossibleLinkFiguresAreDropped) {
  const std::string text =
      "3b:00.0 3D controller: NVIDIA Corporation GA100 [A100 SXM4 80GB] (rev a1)\n"
      "\t\tLnkCap:\tPort #0, Speed infGT/s, Width x64, ASPM not supported\n"
      "\t\tLnkSta:\tSpeed -5GT/s, Width x0 (downgraded)\n";
  const auto d = parse_lspci(text);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_FALSE(d[0].max_link_speed_gt_s);
  EXPECT_FALSE(d[0].max_link_width);
  EXPECT_FALSE(d[0].link_speed_gt_s);
  EXPECT_EQ(d[0].link_width, 0u);
  EXPECT_FALSE(parse_gt_s("1e300GT/s"));
  EXPECT_EQ(parse_gt_s("128GT/s"), 128.0);
}

TEST(Reader, TwoMachinesAreSaidToBeTwo) {
  const std::string a =
      read_fixture("129-csv-two-gpus-100pct-71c-high-clocks-healthy", "input.csv");
  Observation obs;
  add_capture(a, "a.csv", obs);
  add_capture(read_fixture("006-titan-v-idle-healthy", "input.txt"), "b.txt", obs);
  ASSERT_EQ(obs.coverage.size(), 2u);
  EXPECT_FALSE(obs.coverage[0].incomplete);
  EXPECT_TRUE(obs.coverage[1].incomplete);
  bool noted = false;
  for (const auto& n : obs.notes)
    noted = noted || n.find("different machines") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Reader, SameMachineTwiceLendsIdentities) {
  // A -q (bus id + UUID) and a CSV of the same GPU naming it only by bus id.
  const std::string q = read_fixture("001-a10-remapped-rows-pending", "input.txt");
  Observation obs;
  add_capture(q, "q.txt", obs);
  ASSERT_FALSE(obs.samples.empty());
  const GpuState& g = obs.samples[0].gpus.at(0);
  const std::string csv = "pci.bus_id, temperature.gpu\n" + g.info.pci_bus_id + ", 40\n";
  add_capture(csv, "c.csv", obs);
  ASSERT_EQ(obs.samples.size(), 2u);
  EXPECT_EQ(obs.samples[1].gpus.at(0).info.uuid, obs.samples[0].gpus.at(0).info.uuid);
  EXPECT_FALSE(obs.coverage[1].incomplete);
}

TEST(Reader, NothingRecognisedIsStillAnError) {
  const Observation obs = read("hello\nworld\n");
  ASSERT_EQ(obs.input_errors.size(), 1u);
  EXPECT_EQ(obs.input_errors[0].code, "capture.unknown_format");
  EXPECT_EQ(obs.coverage.at(0).lines_not_understood, 2u);
  EXPECT_EQ(obs.coverage.at(0).first_not_understood_line, 1u);
}

TEST(Reader, ErrorsNameFileLinesNotBlockLines) {
  // A CSV row with a field too many on file line 4 (line 2 of the CSV block).
  const Observation obs = read(
      "$ nvidia-smi --query-gpu=index,temperature.gpu --format=csv\n\n"
      "index, temperature.gpu\n0, 40, 7\n1, 40\n");
  ASSERT_FALSE(obs.samples.empty());
  ASSERT_EQ(obs.input_errors.size(), 1u);
  EXPECT_EQ(obs.input_errors[0].where, "in.txt:4");
  EXPECT_EQ(obs.coverage.at(0).lines_not_understood, 0u);
}

// is_syslog_kernel finds " kernel: " by its ": " sixteen positions a step; string_view::find is
// the reference, on lines built at random around the tag and at every length across a step.
bool syslog_kernel_by_find(std::string_view t) {
  if (t.size() < 20) return false;
  size_t m = 0;
  const bool syslog_date =
      text::month_word(t, m) != 0 && m + 9 < t.size() && t[m + 6] == ':' && t[m + 9] == ':';
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  const bool iso_date = digit(t[0]) && digit(t[3]) && t[4] == '-' && t[7] == '-';
  return (syslog_date || iso_date) && t.find(" kernel: ") != std::string_view::npos;
}

TEST(CaptureText, SyslogKernelLinesAreFoundAsByASearch) {
  std::mt19937 rng(5);
  const std::vector<std::string> heads = {"Dec  5 07:12:33 ", "2026-12-05T07:12:33+00:00 ",
                                          "Mon 07:12:33 ", "Dec 5 7:12:33 "};
  const std::vector<std::string> parts = {" kernel: ", " kernel:",  "kernel: ", ": ",
                                          " ",         "node7",     " kernel",  ":",
                                          "x",         "NVRM: Xid", "  "};
  size_t yes = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string line = heads[rng() % heads.size()];
    for (int k = static_cast<int>(rng() % 12); k >= 0; --k) line += parts[rng() % parts.size()];
    EXPECT_EQ(capture_text::is_syslog_kernel(line), syslog_kernel_by_find(line)) << line;
    if (syslog_kernel_by_find(line)) ++yes;
    if (HasFailure()) break;
  }
  EXPECT_GT(yes, 1000u);
  // The tag at every offset, across the 16-byte steps and the tail.
  for (size_t pad = 0; pad < 40; ++pad) {
    const std::string line = "Dec  5 07:12:33 " + std::string(pad, 'h') + " kernel: x";
    EXPECT_TRUE(capture_text::is_syslog_kernel(line)) << line;
    EXPECT_FALSE(capture_text::is_syslog_kernel(line.substr(0, line.size() - 2))) << line;
  }
}

TEST(CaptureText, LinesLikeAKnownSyslogKernelLineAreOnesToo) {
  // like_syslog_kernel may only say yes where is_syslog_kernel does: lines made from known ones
  // by changing, adding or dropping a byte (digits for digits most often), over syslog, ISO and
  // CJK dates ("12月" -> "13月" is no month), short and long prefixes.
  std::mt19937 rng(11);
  const std::vector<std::string> known = {
      "Dec  5 07:12:33 gpu-node-17 kernel: NVRM: Xid (PCI:0000:18:00): 79",
      "Dec 15 23:59:59 n kernel: x",
      "2026-12-05T07:12:33.123456+00:00 gpu-node-17 kernel: mlx5_core 0000:b8:00.0: up",
      "12\xE6\x9C\x88 05 07:12:33 host7 kernel: NVRM: loading",
      "Mar  3 10:00:00 a-very-long-host-name-of-a-cluster-node-0042 kernel: EXT4-fs mounted",
      "2025-01-01 00:00:00 h kernel: a"};
  const std::string alphabet = "0123456789: -kD\xE6";
  size_t likes = 0;
  for (const std::string& k : known) {
    const capture_text::SyslogKernelPrefix p = capture_text::syslog_kernel_prefix(k);
    ASSERT_NE(p.end, 0u) << k;
    // A prefix over 64 bytes is no pattern: nothing is like it.
    EXPECT_EQ(capture_text::like_syslog_kernel(k, p), p.end <= 64) << k;
    for (int i = 0; i < 20000; ++i) {
      std::string line = k;
      for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; --edits) {
        const size_t at = rng() % line.size();
        const auto what = rng() % 10;
        if (what < 6 && std::isdigit(static_cast<unsigned char>(line[at])))
          line[at] = static_cast<char>('0' + rng() % 10);
        else if (what < 8)
          line[at] = alphabet[rng() % alphabet.size()];
        else if (what == 8)
          line.insert(at, 1, alphabet[rng() % alphabet.size()]);
        else
          line.erase(at, 1);
      }
      if (rng() % 4 == 0) line.resize(rng() % (line.size() + 1));
      if (!capture_text::like_syslog_kernel(line, p)) continue;
      ++likes;
      ASSERT_TRUE(capture_text::is_syslog_kernel(line)) << "known: " << k << "\nline: " << line;
    }
  }
  EXPECT_GT(likes, 20000u);  // the clocks and days that changed were taken
  // A clock that moved on, a day that did: taken; another month, a longer host: asked again.
  const capture_text::SyslogKernelPrefix p = capture_text::syslog_kernel_prefix(known[0]);
  EXPECT_TRUE(capture_text::like_syslog_kernel(
      "Dec  6 00:00:01 gpu-node-17 kernel: anything else at all", p));
  EXPECT_FALSE(capture_text::like_syslog_kernel("Jan  6 00:00:01 gpu-node-17 kernel: x", p));
  EXPECT_FALSE(capture_text::like_syslog_kernel("Dec  6 00:00:01 gpu-node-170 kernel: x", p));
  EXPECT_FALSE(capture_text::like_syslog_kernel("Dec  6 00:00:01 gpu-node-17 kernel:", p));
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

// `nvidia-smi -q -d SECTION` prints the header, then per GPU its "GPU <bus id>" line and only
// that section. Built from the full 8-GPU -q of fixture 121 by keeping those lines; each must
// give the same values as the full -q does, with the header, without it (a fragment), and
// with its indentation removed.
std::string only_section(const std::string& full, const std::string& section, bool header,
                         bool gpu_lines, size_t max_gpus = 8) {
  std::string out;
  std::istringstream in(full);
  bool keep = false, in_gpus = false;
  size_t gpus = 0;
  for (std::string l; std::getline(in, l);) {
    if (l.rfind("GPU ", 0) == 0) {
      in_gpus = true;
      keep = false;
      if (++gpus > max_gpus) break;
      if (gpu_lines) out += l + "\n";
      continue;
    }
    if (!in_gpus) {
      if (header) out += l + "\n";
      continue;
    }
    const size_t indent = l.find_first_not_of(' ');
    if (indent == 4) keep = l.compare(4, section.size(), section) == 0;
    if (keep) out += l + "\n";
  }
  return out;
}

std::string dedent(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    const size_t b = l.find_first_not_of(" \t");
    out += (b == std::string::npos ? "" : l.substr(b)) + "\n";
  }
  return out;
}

TEST(QuerySections, EveryDashDSectionReadsAsInTheFullOutput) {
  const std::string full =
      read_fixture("121-a100x8-sxm4-40gb-full-q-idle-host-max-gen3", "input.txt");
  const Observation all = read(full);
  ASSERT_EQ(all.samples.at(0).gpus.size(), 8u);
  const GpuSample& ref = all.samples[0].gpus[3].sample;
  const DeviceInfo& ref_info = all.samples[0].gpus[3].info;
  struct Part {
    const char* section;
    std::function<void(const GpuState&)> same;
  };
  const Part parts[] = {
      {"Temperature",
       [&](const GpuState& g) {
         EXPECT_EQ(g.sample.temp_c, ref.temp_c);
         EXPECT_EQ(g.info.temp_slowdown_c, ref_info.temp_slowdown_c);
       }},
      {"GPU Power Readings",
       [&](const GpuState& g) {
         EXPECT_EQ(g.sample.power_mw, ref.power_mw);
         EXPECT_EQ(g.sample.power_limit_mw, ref.power_limit_mw);
       }},
      {"Clocks Event Reasons",
       [&](const GpuState& g) { EXPECT_EQ(g.sample.clock_reasons, ref.clock_reasons); }},
      {"FB Memory Usage",
       [&](const GpuState& g) {
         EXPECT_EQ(g.sample.mem_used_bytes, ref.mem_used_bytes);
         EXPECT_EQ(g.sample.mem_total_bytes, ref.mem_total_bytes);
       }},
      {"ECC Errors",
       [&](const GpuState& g) {
         EXPECT_EQ(g.sample.ecc_sbe_volatile, ref.ecc_sbe_volatile);
         EXPECT_EQ(g.sample.ecc_dbe_aggregate, ref.ecc_dbe_aggregate);
       }},
      {"Remapped Rows",
       [&](const GpuState& g) {
         EXPECT_EQ(g.sample.remapped_rows_pending, ref.remapped_rows_pending);
         EXPECT_EQ(g.sample.remapped_rows_failure, ref.remapped_rows_failure);
       }},
      {"PCI",
       [&](const GpuState& g) {
         EXPECT_EQ(g.sample.pcie_gen, ref.pcie_gen);
         EXPECT_EQ(g.info.pcie_max_gen, ref_info.pcie_max_gen);
         EXPECT_EQ(g.sample.pcie_width, ref.pcie_width);
       }},
  };
  for (const Part& p : parts) {
    SCOPED_TRACE(p.section);
    const Observation d = read(only_section(full, p.section, true, true));
    ASSERT_EQ(d.samples.size(), 1u);
    ASSERT_EQ(d.samples[0].gpus.size(), 8u);
    EXPECT_EQ(d.samples[0].gpus[3].info.pci_bus_id, ref_info.pci_bus_id);
    p.same(d.samples[0].gpus[3]);
    EXPECT_FALSE(d.coverage.at(0).incomplete);
    EXPECT_EQ(d.coverage.at(0).lines_not_understood, 0u);
    // One GPU's section alone (pasted without header and GPU line): one GPU, bus id unknown.
    const std::string one = only_section(full, p.section, false, false, 1);
    for (const std::string& text : {one, dedent(one)}) {
      const Observation f = read(text);
      ASSERT_EQ(f.samples.size(), 1u) << text;
      ASSERT_EQ(f.samples[0].gpus.size(), 1u) << text;
      // The PCI section names the bus id itself ("Bus Id : ..."); the others cannot.
      EXPECT_EQ(f.samples[0].gpus[0].info.pci_bus_id,
                std::string(p.section) == "PCI" ? all.samples[0].gpus[0].info.pci_bus_id : "");
      EXPECT_EQ(f.coverage.at(0).lines_not_understood, 0u) << text;
    }
  }
}

// Fixture 106 (Ray workers' NCCL output): "(pid=909608) " alone is that worker's empty line, not
// a line nothing understood; a tag with text after it is still judged by its text. Every line
// is read: the NCCL transport line ("... via P2P/IPC") by the transport reader (issue 19).
TEST(Reader, BareProcessTagIsABlankLine106) {
  const std::string app =
      read_fixture("106-nccl-p2p-ipc-peer-access-unsupported-2-gpus", "app.log");
  ASSERT_NE(app.find("(pid=909608) \n"), std::string::npos);
  const Observation obs = read(app, "app.log");
  EXPECT_EQ(obs.coverage.at(0).lines_not_understood, 0u);
  EXPECT_TRUE(obs.coverage.at(0).gpu_unread.empty());
  std::string without = app;
  without.erase(without.find("(pid=909608) \n"), 14);
  EXPECT_EQ(read(without).app_messages.size(), obs.app_messages.size());
  // The class: newer Ray tags, colour codes, CRLF; and what is not a bare tag.
  for (const char* tag : {"(RayTrainWorker pid=2231, ip=10.0.0.2) \n", "\x1b[36m(pid=12)\x1b[0m \n",
                          "(pid=909608) \r\n"}) {
    const Observation o = read(std::string(tag) + app, "app.log");
    EXPECT_EQ(o.coverage.at(0).lines_not_understood, 0u) << tag;
  }
  for (const char* other : {"(pid=909608) some words nobody reads\n", "(pid=x)\n", "(spid=12)\n"}) {
    const Observation o = read(std::string(other) + app, "app.log");
    EXPECT_EQ(o.coverage.at(0).lines_not_understood, 1u) << other;
  }
}

}  // namespace
}  // namespace gw
