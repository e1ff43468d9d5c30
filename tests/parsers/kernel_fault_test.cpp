// Kernel fault reports in the NVIDIA modules (sources/kmsg/kernel_fault.h): each line kind in
// each wrapping, other modules' reports left alone, and the stream's one event per report.
#include "sources/kmsg/kernel_fault.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "sources/kmsg/kernel_log.h"

namespace gw::kmsg {
namespace {

using F = FaultLine;

TEST(KernelFault, LinesOfAReportInAnNvidiaModuleInEveryWrapping) {
  EXPECT_EQ(classify_fault_line("[ 395.351681] RIP: 0010:_nv031695rm+0x79/0x940 [nvidia]"), F::kIp);
  EXPECT_EQ(classify_fault_line("Apr 28 10:17:39 host kernel: RIP: 0010:nvidia_vma_access+0x1b/"
                                "0x350 [nvidia]"),
            F::kIp);
  EXPECT_EQ(classify_fault_line("> Apr 28 10:17:39 host kernel: RIP: 0010:nv_x+0x1/0x2 [nvidia]"),
            F::kIp);
  EXPECT_EQ(classify_fault_line("RIP: 0010:uvm_va_block_x+0x10/0x90 [nvidia_uvm]\r"), F::kIp);
  EXPECT_EQ(classify_fault_line("[   29.798452] IP: [<ffffffffc075549f>] _nv011745rm+0x1f/0x170"),
            F::kIp)
      << "old format: no module, the resource manager's function name says it";
  EXPECT_EQ(classify_fault_line("pc : nv_drm_gem_free+0x2c/0x60 [nvidia_drm]"), F::kIp);
  EXPECT_EQ(classify_fault_line("[ 48.005458]  uvm_pmm_gpu_alloc+0x2f5/0x6d0 [nvidia_uvm]"),
            F::kFrame);
  EXPECT_EQ(classify_fault_line("    ? allocate_directory+0xb4/0x130 [nvidia_uvm]"), F::kFrame);
  EXPECT_EQ(classify_fault_line(" [<ffffffffc0c3b1a8>] ? _nv012345rm+0x88/0x100 [nvidia]"),
            F::kFrame);
  EXPECT_EQ(classify_fault_line("Modules linked in: nvidia_uvm(POE) nvidia(POE) ext4 mbcache"),
            F::kModules);
  EXPECT_EQ(classify_fault_line("[ 48.0] UBSAN: array-index-out-of-bounds in "
                                "build/nvidia/535.171.04/build/nvidia-uvm/uvm_pmm_gpu.c:2038:44"),
            F::kSanitizer);
  EXPECT_EQ(classify_fault_line("WARNING: CPU: 3 PID: 812 at nvidia/nv.c:1234 "
                                "nv_open+0x10/0x20 [nvidia]"),
            F::kWarning);
}

TEST(KernelFault, OtherModulesUserSpaceAndOrdinaryDriverLinesAreNotReports) {
  for (const char* line : {
           "RIP: 0010:ext4_readdir+0x12/0x40 [ext4]",
           "RIP: 0033:0x7f3a2c1e5d7b",
           "RIP: 0010:native_safe_halt+0xb/0x10",
           " ? amdgpu_bo_create+0x1/0x20 [amdgpu]",
           "Modules linked in: ext4 mbcache jbd2",
           "UBSAN: shift-out-of-bounds in fs/ext4/super.c:12:3",
           "WARNING: CPU: 1 PID: 1 at fs/ext4/inode.c:99 ext4_x+0x1/0x2 [ext4]",
           "WARNING: kernel stack frame pointer at 000000005611dc97 in nvidia-smi:2024380 has "
           "bad value 00000000ec717e66",
           "NVRM: GPU at PCI:0000:3b:00: GPU-1234",
           "nvidia-smi: command not found",
           "[nvidia]",
           "nv_x+0x1/0x2 [nvidiafoo1]",
           "",
       })
    EXPECT_EQ(classify_fault_line(line), F::kNone) << line;
}

TEST(KernelFault, TheSiteIsTheFunctionAndItsModule) {
  const auto s = fault_site("[ 1.0] RIP: 0010:nvidia_vma_access+0x1b/0x350 [nvidia]");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->symbol, "nvidia_vma_access");
  EXPECT_EQ(s->module, "nvidia");
  const auto old = fault_site("IP: [<ffffffffc075549f>] _nv011745rm+0x1f/0x170");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->symbol, "_nv011745rm");
  EXPECT_EQ(old->module, "");
}

TEST(KernelFault, TheHeaderIsTheReportsMostTellingLineAndItsTask) {
  const FaultHeader h = fault_header_before(
      "[ 1.0] nvidia: loaded\n"
      "[ 2.0] BUG: kernel NULL pointer dereference, address: 0000000000000030\n"
      "[ 2.0] #PF: supervisor read access in kernel mode\n"
      "[ 2.0] Oops: 0000 [#1] SMP NOPTI\n"
      "[ 2.0] CPU: 0 PID: 28651 Comm: python3.14 Tainted: G O 6.18.24 #1\n"
      "[ 2.0] Hardware name: Example\n");
  EXPECT_EQ(h.kind, FaultKind::kCrash);
  EXPECT_EQ(h.text, "BUG: kernel NULL pointer dereference, address: 0000000000000030");
  EXPECT_EQ(h.pid, 28651u);
  EXPECT_EQ(h.comm, "python3.14");
  const FaultHeader w = fault_header_before(
      "------------[ cut here ]------------\nWARNING: CPU: 3 PID: 9 at nvidia/nv.c:12 f+0x1/0x2\n");
  EXPECT_EQ(w.kind, FaultKind::kWarning);
  const FaultHeader cut = fault_header_before(
      "BUG: unable to handle page fault\n---[ end trace 0000000000000000 ]---\nCPU: 1 PID: 2\n");
  EXPECT_EQ(cut.kind, FaultKind::kUnknown) << "an earlier report ended: not this one's header";
  EXPECT_EQ(fault_header_before("").kind, FaultKind::kUnknown);
}

// A whole report as the kernel prints it (dmesg prefix), with its trace and module list.
const char* kReport =
    "[  395.350871] BUG: unable to handle kernel NULL pointer dereference at 00000000000000b1\n"
    "[  395.350973] PGD 5c9846d067 P4D 5c9846d067 PUD 5c9847f067 PMD 0\n"
    "[  395.351068] Oops: 0000 [#1] SMP NOPTI\n"
    "[  395.351100] Modules linked in: nvidia_uvm(POE) nvidia(POE) ext4\n"
    "[  395.351153] CPU: 33 PID: 4564 Comm: sbatchd Tainted: P OE 4.18.0 #1\n"
    "[  395.351681] RIP: 0010:_nv031695rm+0x79/0x940 [nvidia]\n"
    "[  395.351908] RSP: 0018:ffff9bc6dd237950 EFLAGS: 00010202\n"
    "[  395.352000] Call Trace:\n"
    "[  395.352001]  ? _nv031696rm+0x10/0x20 [nvidia]\n"
    "[  395.352002]  nvidia_ioctl+0x5d1/0x8a0 [nvidia]\n"
    "[  395.352003]  do_syscall_64+0x5b/0x1a0\n"
    "[  395.352100] ---[ end trace 3e3e2f0f8a5b2d1c ]---\n";

struct Parsed {
  std::vector<Event> events;
  std::vector<std::string> unread;
};

Parsed parse(const std::string& text) {
  Parsed p;
  KernelLogParseOptions o;
  o.on_unread_gpu_line = [&](size_t, std::string_view l) { p.unread.emplace_back(l); };
  parse_kernel_log_stream(
      text, "dmesg", [&](Event&& e) { p.events.push_back(std::move(e)); }, nullptr, o);
  return p;
}

TEST(KernelFault, TheStreamMakesOneEventPerReportAndReadsItsTrace) {
  const Parsed p = parse(kReport);
  ASSERT_EQ(p.events.size(), 1u);
  const Event& e = p.events[0];
  EXPECT_EQ(e.driver_kind, DriverMessageKind::kKernelFault);
  EXPECT_EQ(e.message,
            "BUG: unable to handle kernel NULL pointer dereference at 00000000000000b1 | "
            "_nv031695rm [nvidia] | RIP: 0010:_nv031695rm+0x79/0x940 [nvidia]");
  EXPECT_EQ(e.pid, 4564u);
  EXPECT_EQ(e.process_name, "sbatchd");
  ASSERT_TRUE(e.uptime_s);
  EXPECT_DOUBLE_EQ(*e.uptime_s, 395.351681);
  EXPECT_TRUE(p.unread.empty()) << p.unread.front();
}

TEST(KernelFault, TheClassOfTheReportCrlfReindentedConcatenatedAndCut) {
  std::string crlf;
  for (char c : std::string(kReport)) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  EXPECT_EQ(parse(crlf).events.size(), 1u);
  std::string indented;
  for (size_t a = 0, b; (b = std::string(kReport).find('\n', a)) != std::string::npos; a = b + 1)
    indented += "    " + std::string(kReport).substr(a, b - a + 1);
  const Parsed ind = parse(indented);
  ASSERT_EQ(ind.events.size(), 1u);
  EXPECT_EQ(ind.events[0].process_name, "sbatchd");
  EXPECT_EQ(parse(std::string(kReport) + kReport).events.size(), 2u);
  const std::string report(kReport);
  const Parsed cut = parse(report.substr(report.find("[  395.351681] RIP")));
  ASSERT_EQ(cut.events.size(), 1u);
  EXPECT_EQ(cut.events[0].message.rfind(" | _nv031695rm [nvidia] | RIP", 0), 0u)
      << "no header: the report was cut before its start";
}

TEST(KernelFault, ATraceWithoutItsReportIsListedUnreadNotTakenAsUnderstood) {
  const Parsed p = parse(
      "[ 1.0]  ? uvm_pmm_gpu_alloc+0x2f5/0x6d0 [nvidia_uvm]\n"
      "[ 1.0]  nvidia_ioctl+0x5d1/0x8a0 [nvidia]\n");
  EXPECT_TRUE(p.events.empty());
  ASSERT_EQ(p.unread.size(), 2u);
  EXPECT_EQ(p.unread[1], "[ 1.0]  nvidia_ioctl+0x5d1/0x8a0 [nvidia]");
}

// ip_marker walks the line's colons once; the four searches it replaced are the reference, over
// every line of every capture and over lines built from the markers at random.
std::optional<size_t> ip_marker_by_search(std::string_view line) {
  for (std::string_view m : {"RIP: ", "EIP: ", "pc : "})
    if (const size_t p = line.find(m); p != std::string_view::npos) return p + m.size();
  const size_t p = line.find("IP: ");
  if (p != std::string_view::npos && (p == 0 || line[p - 1] == ' ' || line[p - 1] == ']'))
    return p + 4;
  return std::nullopt;
}

TEST(KernelFault, IpMarkerFindsWhatTheSearchesFound) {
  size_t lines = 0, found = 0;
  for (const auto& dir : std::filesystem::directory_iterator(std::filesystem::path(GW_SOURCE_DIR) /
                                                             "fixtures" / "captures")) {
    if (!dir.is_directory()) continue;
    for (const auto& f : std::filesystem::directory_iterator(dir.path())) {
      if (!f.is_regular_file() || f.path().extension() == ".gz") continue;
      std::ifstream in(f.path());
      for (std::string line; std::getline(in, line); ++lines) {
        EXPECT_EQ(ip_marker(line), ip_marker_by_search(line)) << f.path() << ": " << line;
        if (ip_marker(line)) ++found;
      }
    }
  }
  EXPECT_GT(lines, 10000u);
  EXPECT_GE(found, 10u);
  std::mt19937 rng(7);
  const std::vector<std::string> parts = {
      "RIP: ", "EIP: ", "pc : ", "IP: ", "IP:", "RIP:", ":", " ",
      "]",     "R",     "E",     "pc",   "x",   "P: ",  ": "};
  for (int i = 0; i < 20000; ++i) {
    std::string line;
    for (int k = static_cast<int>(rng() % 6); k >= 0; --k) line += parts[rng() % parts.size()];
    EXPECT_EQ(ip_marker(line), ip_marker_by_search(line)) << "'" << line << "'";
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace gw::kmsg
