// Kernel-log prefixes and shapes, one test each, from real lines: the project's shared corpus
// of real captures (folders named NNN below; the lines are copied here) and public issue
// threads (URL in the comment). Where no published NVRM line has a given prefix, the real
// prefix is put in front of a real fixture body and the comment says so.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sources/kmsg/kernel_log.h"
#include "sources/kmsg/log_prefix.h"

namespace gw {
namespace {

std::vector<Event> parse(const std::string& text, KernelLogStats* st = nullptr,
                         std::vector<Error>* errors = nullptr) {
  std::vector<Event> out;
  auto s = parse_kernel_log_stream(
      text, "k.log", [&](Event&& e) { out.push_back(std::move(e)); }, errors);
  if (st) *st = s;
  return out;
}

Event one(const std::string& line) {
  Error err;
  auto ev = parse_kernel_log_line(line, "k.log", 1, &err);
  EXPECT_TRUE(ev.has_value()) << line << " " << err.to_string();
  return ev.value_or(Event{});
}

constexpr int64_t kDay = 86'400'000;
int64_t in_year(int days_before_month, int day, int h, int m, int s, int ms = 0) {
  return (days_before_month + day - 1) * kDay + ((h * 60 + m) * 60 + s) * 1000 + ms;
}

// 010: dmesg, seconds since boot.
TEST(KernelLogPrefix, DmesgUptime010) {
  const Event e = one(
      "[6781741.548779] NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has "
      "fallen off the bus.");
  EXPECT_EQ(e.code, 79u);
  EXPECT_NEAR(e.uptime_s.value_or(0), 6781741.548779, 1e-6);
  EXPECT_EQ(e.pci_bus_id, "00000000:91:00.0");
}

// 122: dmesg -T, day padded with a space.
TEST(KernelLogPrefix, DmesgCtime122) {
  const Event e = one(
      "[Mon Aug  5 03:54:13 2024] NVRM: Xid (PCI:0000:00:07): 31, pid=2512125, name=python3.10, "
      "Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_8 faulted @ "
      "0x73ac_1c000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_WRITE");
  EXPECT_EQ(e.time_ms, 1722830053000);  // 2024-08-05T03:54:13Z
  EXPECT_EQ(e.process_name, "python3.10");
}

// 007: dmesg --time-format=iso (comma, 6 digits, +00:00); 008: the same behind --decode.
TEST(KernelLogPrefix, IsoAndDecode007And008) {
  const Event a =
      one("2024-11-15T12:02:03,470068+00:00 NVRM: Xid (PCI:0000:19:00): 48, pid='<unknown>', "
          "name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the "
          "framebuffer at physAddr 0x12bac1c3e0 partition 2, subpartition 1.");
  EXPECT_EQ(a.time_ms, 1731672123470);
  const Event b =
      one("kern  :warn  : 2025-01-21T02:21:33,502278+00:00 NVRM: Xid (PCI:0000:38:00): 43, "
          "pid=2815167, name=pt_main_thread, Ch 00000008");
  EXPECT_EQ(b.time_ms, 1737426093502);
  EXPECT_EQ(b.pid, 2815167u);
}

// 113: a bare line as grepped from syslog, no time.
TEST(KernelLogPrefix, BareLine113) {
  const Event e =
      one("NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, "
          "reset gpu to activate.");
  EXPECT_EQ(e.code, 63u);
  EXPECT_EQ(e.pci_bus_id, "00000000:10:1C.0");
  EXPECT_FALSE(e.time_ms || e.uptime_s || e.time_in_year_ms);
}

// Bare syslog tag "kernel: " with no time or host:
// https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1150
TEST(KernelLogPrefix, BareKernelTag) {
  const Event e = one(
      "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by "
      "previous Xid 149");
  EXPECT_EQ(e.code, 45u);
  EXPECT_EQ(e.process_name, "python3");
  EXPECT_EQ(e.message, "Ch 00000001 caused by previous Xid 149");
}

// journalctl -k (short): month, day, time, host, "kernel:"; no year, so a time in the year.
// https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1151
TEST(KernelLogPrefix, JournalShortWithHost) {
  const Event e =
      one("May 27 16:50:10 fedora kernel: NVRM: GPU 0000:09:00.0: RmInitAdapter failed! "
          "(0x22:0x56:894)");
  EXPECT_EQ(e.kind, EventKind::kDriverMessage);
  EXPECT_EQ(e.driver_kind, DriverMessageKind::kInitFailed);
  EXPECT_EQ(e.pci_bus_id, "00000000:09:00.0");
  EXPECT_EQ(e.time_in_year_ms, in_year(120, 27, 16, 50, 10));
  EXPECT_FALSE(e.time_ms.has_value());
}

// journalctl writes the locale's month: French, German, Spanish, Russian read as the same date.
TEST(KernelLogPrefix, JournalMonthInTheLocalesWords) {
  const std::string body = "NVRM: GPU 0000:09:00.0: RmInitAdapter failed! (0x22:0x56:894)";
  for (const std::string month : {"août", "Aug", "aug", "ago", "авг"}) {
    const Event e = one(month + " 25 19:38:04 fujitsu kernel: " + body);
    EXPECT_EQ(e.driver_kind, DriverMessageKind::kInitFailed) << month;
    EXPECT_EQ(e.time_in_year_ms, in_year(212, 25, 19, 38, 4)) << month;
  }
  for (const std::string month : {"juil.", "Jul", "lip"}) {
    kmsg::LogPrefix p;
    EXPECT_EQ(kmsg::strip_log_prefix(month + " 3 10:00:00 host kernel: x", p), "x") << month;
    EXPECT_EQ(p.time_in_year_ms, in_year(181, 3, 10, 0, 0)) << month;
  }
  // Chinese / Japanese and Korean journalctl (capture 262: "4月 20 19:55:29 host kernel:").
  for (const std::string month : {"8月", "8월", "08月"}) {
    const Event e = one(month + " 25 19:38:04 fujitsu kernel: " + body);
    EXPECT_EQ(e.time_in_year_ms, in_year(212, 25, 19, 38, 4)) << month;
  }
  for (const std::string no : {"13月", "0月", "8日", "8x", "123月"}) {
    kmsg::LogPrefix p;
    const std::string line = no + " 25 19:38:04 x";
    EXPECT_EQ(kmsg::strip_log_prefix(line, p), line) << no;
  }
  kmsg::LogPrefix p;  // a word that is no month leaves the line as it is
  EXPECT_EQ(kmsg::strip_log_prefix("août25 19:38:04 x", p), "août25 19:38:04 x");
}

// 130: journalctl --no-hostname -k, every line indented by 5 spaces.
TEST(KernelLogPrefix, JournalNoHostnameIndented130) {
  const Event e = one(
      "     Mar 21 21:42:01 kernel: NVRM: GPU0 _kgspIsHeartbeatTimedOut: Heartbeat timed out, "
      "currentTimeMs 322227881 heartbeat 0 heartbeatWithOffsetMs 318098841 diff 4129040 timeout "
      "5200");
  EXPECT_EQ(e.driver_kind, DriverMessageKind::kGspTimeout);
  EXPECT_EQ(e.driver_gpu, 0u);
  EXPECT_EQ(e.time_in_year_ms, in_year(59, 21, 21, 42, 1));
}

// GSP and memory-subsystem wordings (capture 469, an H100 at boot) and the driver's own word
// that the GPU is gone (an RTX A6000 host's notes, a public repository).
TEST(KernelLogPrefix, GspRpcTimeoutMemsysErrorAndGpuLost) {
  const Event memsys = one(
      "[   84.300480] NVRM: GPU6 kgmmuCheckMemSubsysError_IMPL: Memory Subsystem Error detected. "
      "kbusSendSysmembarSingle failed.");
  EXPECT_EQ(memsys.driver_kind, DriverMessageKind::kResetRequired);
  EXPECT_EQ(memsys.driver_gpu, 6u);
  const Event rpc = one(
      "[   84.300488] NVRM: GPU6 _kgspLogRpcTimeout: ********************************* GSP Timeout "
      "**********************************");
  EXPECT_EQ(rpc.driver_kind, DriverMessageKind::kGspTimeout);
  const Event lost = one("NVRM: nvCheckOkFailedNoLog: GPU lost from the bus [NV_ERR_GPU_IS_LOST]");
  EXPECT_EQ(lost.kind, EventKind::kFallenOffBus);
}

// A failed call to the GSP names its status: 0x0f (NV_ERR_GPU_IS_LOST) is a GPU gone from the
// bus, 0x65 (NV_ERR_TIMEOUT) the firmware not answering. Lines from an RTX 4080 host's syslog
// (a public forum thread, driver 550.54.14) and the JournalShortPrecise line below.
TEST(KernelLogPrefix, GspCallStatusNamesALostGpuOrATimeout) {
  for (const char* line :
       {"Mar 27 19:52:25 scott-linux-main kernel: NVRM: _issueRpcAndWait: rpcSendMessage failed "
        "with status 0x0000000f for fn 76!",
        "Mar 27 19:52:25 scott-linux-main kernel: NVRM: rpcRmApiFree_GSP: GspRmFree failed: "
        "hClient=0xc1d0003b; hObject=0xbeef0310; paramsStatus=0x00000000; status=0x0000000f",
        "Aug 10 22:40:59.880752 anthill kernel: NVRM: GPU0 rpcRmApiFree_GSP: GspRmFree failed: "
        "hClient=0xc1d00018; hObject=0x5c00002f; paramsStatus=0x00000000; status=0x0000000f"}) {
    EXPECT_EQ(one(line).kind, EventKind::kFallenOffBus) << line;
  }
  const Event timeout =
      one("[ 4130.312551] NVRM: GPU3 _issueRpcAndWait: rpcSendMessage failed with status "
          "0x00000065 for fn 76 sequence 1091!");
  EXPECT_EQ(timeout.driver_kind, DriverMessageKind::kGspTimeout);
  EXPECT_EQ(timeout.driver_gpu, 3u);
  const Event other =
      one("[ 4130.312557] NVRM: GPU0 rpcRmApiControl_GSP: GspRmControl failed: hClient=0xc1d00003; "
          "hObject=0x5c000000; cmd=0x2080a130; paramsSize=8; paramsStatus=0x00000000; "
          "status=0x00000057");
  EXPECT_EQ(other.driver_kind, DriverMessageKind::kDriverAssert);
}

// journalctl -o short-precise (microseconds): https://github.com/Neroued/ninfer/issues/12
TEST(KernelLogPrefix, JournalShortPrecise) {
  kmsg::LogPrefix p;
  const auto body = kmsg::strip_log_prefix(
      "Aug 10 22:40:59.880752 anthill kernel: NVRM: GPU0 rpcRmApiFree_GSP: GspRmFree failed: "
      "hClient=0xc1d00018; hObject=0x5c00002f; paramsStatus=0x00000000; status=0x0000000f",
      p);
  EXPECT_EQ(p.time_in_year_ms, in_year(212, 10, 22, 40, 59, 880));
  EXPECT_EQ(body.substr(0, 10), "NVRM: GPU0");
}

// journalctl -o short-monotonic: uptime bracket, host, "kernel:". The prefix is real, from
// https://github.com/systemd/systemd/issues/22554 ("[ 4274.052063] fovo.local kernel: i915 ...");
// no published NVRM line in this shape was found, so it stands before the body of 010's Xid 79
// line. --no-hostname drops the host (https://github.com/systemd/systemd/issues/34250 shows the
// host form "[    7.636966] LibreELEC kernel: ").
TEST(KernelLogPrefix, JournalShortMonotonic) {
  const std::string body =
      "NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the "
      "bus.";
  for (const std::string prefix :
       {"[ 4274.052063] fovo.local kernel: ", "[    7.636966] LibreELEC kernel: ",
        "[ 4274.052063] kernel: "}) {
    kmsg::LogPrefix p;
    EXPECT_EQ(kmsg::strip_log_prefix(prefix + body, p), body) << prefix;
    EXPECT_TRUE(p.recognised) << prefix;
    ASSERT_TRUE(p.uptime_s.has_value()) << prefix;
    const Event e = one(prefix + body);
    EXPECT_EQ(e.code, 79u) << prefix;
    EXPECT_EQ(e.pci_bus_id, "00000000:91:00.0") << prefix;
    EXPECT_NEAR(e.uptime_s.value_or(0), *p.uptime_s, 1e-9) << prefix;
  }
  // Among the journal's other lines, as that excerpt has them: only the NVRM line counts.
  const auto ev = parse(
      "[ 4274.052063] fovo.local kernel: i915 0000:00:02.0: [drm:__intel_display_power_put_domain "
      "[i915]] disabling always-on\n"
      "[ 4274.089861] fovo.local kernel: ACPI: EC: interrupt blocked\n"
      "[ 4596.683362] fovo.local kernel: " +
      body + "\n");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_NEAR(ev[0].uptime_s.value_or(0), 4596.683362, 1e-6);
}

// ISO time with a space, then "kernel:" glued to an uptime bracket (short-iso style export):
// https://github.com/NVIDIA/open-gpu-kernel-modules/issues/673 ("NVRM " without the colon).
TEST(KernelLogPrefix, IsoSpaceKernelTagUptimeInside) {
  kmsg::LogPrefix p;
  const auto body = kmsg::strip_log_prefix(
      "2024-07-02 18:46:08.681559 kernel:[   21.766727] NVRM "
      "kgspExecuteBooterUnloadIfNeeded_TU102: "
      "failed to execute Booter Unload: 0xffff",
      p);
  EXPECT_EQ(p.time_ms, 1719945968681);
  EXPECT_NEAR(p.uptime_s.value_or(0), 21.766727, 1e-6);
  EXPECT_EQ(body.substr(0, 5), "NVRM ");
}

// Syslog with an uptime bracket inside: https://github.com/ROCm/hip/issues/15 and
// https://github.com/pop-os/pop/issues/3363 (an AER line in the same shape).
TEST(KernelLogPrefix, SyslogWithUptimeBracket) {
  kmsg::LogPrefix p;
  const auto body = kmsg::strip_log_prefix(
      "Mar 24 11:53:43 pandemonium kernel: [   13.184444] NVRM: Your system is not currently "
      "configured to drive a VGA console",
      p);
  EXPECT_NEAR(p.uptime_s.value_or(0), 13.184444, 1e-6);
  EXPECT_EQ(p.time_in_year_ms, in_year(59, 24, 11, 53, 43));
  EXPECT_EQ(body.substr(0, 5), "NVRM:");
  const Event aer = one(
      "Sep 19 16:18:02 bubz kernel: [68183.615790] pcieport 0000:00:03.1: AER: Correctable error "
      "message received from 0000:00:00.0");
  EXPECT_EQ(aer.driver_kind, DriverMessageKind::kPcieAer);
  EXPECT_EQ(aer.pci_bus_id, "00000000:00:03.1");
  EXPECT_NEAR(aer.uptime_s.value_or(0), 68183.615790, 1e-6);
}

// Syslog time with neither host nor tag:
// https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1146
TEST(KernelLogPrefix, SyslogTimeOnly) {
  const Event e =
      one("Sep 18 20:07:01 NVRM: Xid (PCI:0000:02:00): 109, pid=8494,   name=RenderThread, channel "
          "0x0000000d, CTX SWITCH TIMEOUT, Info 0x14c011");
  EXPECT_EQ(e.code, 109u);
  EXPECT_EQ(e.time_in_year_ms, in_year(243, 18, 20, 7, 1));
}

// Node-log prefix (talosctl dmesg): "<node>: kern: <level>: [RFC 3339, 9 digits]: ". The
// prefix is from https://github.com/siderolabs/pkgs/issues/792; no published NVRM line has
// it, so it stands here before the body of 010's Xid 79 line.
TEST(KernelLogPrefix, NodeLogRfc3339NineDigits) {
  kmsg::LogPrefix p;
  const auto body = kmsg::strip_log_prefix(
      "k3s-node5.lab: kern: warning: [2023-08-18T13:36:47.378241465Z]: tpm tpm0: AMD fTPM version "
      "0x3005400000005 causes system stutter; hwrng disabled",
      p);
  EXPECT_EQ(p.time_ms, 1692365807378);
  EXPECT_EQ(body.substr(0, 9), "tpm tpm0:");
  const Event e =
      one("k3s-node5.lab: kern: warning: [2023-08-18T13:36:47.378241465Z]: NVRM: Xid "
          "(PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  EXPECT_EQ(e.code, 79u);
  EXPECT_EQ(e.time_ms, 1692365807378);
  // The "<node-ip>:" form and the padded level of the same tool.
  const Event ip = one(
      "172.20.0.5: kern:    info: [2025-09-13T20:46:45.810476849Z]: NVRM: Xid (PCI:0000:91:00): "
      "79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.");
  EXPECT_EQ(ip.time_ms, 1757796405810);
}

// The node's name is one word of 1 to 80 bytes, ": kern:" right after it; anything else is
// not this prefix (and the line's first word stays in the message).
TEST(KernelLogPrefix, NodeLogNameIsOneWordOfUpTo80Bytes) {
  const std::string rest = ": kern: warning: [2023-08-18T13:36:47.378241465Z]: tpm tpm0: x";
  for (const size_t len : {size_t{1}, size_t{79}, size_t{80}}) {
    kmsg::LogPrefix p;
    const std::string line = std::string(len, 'n') + rest;
    EXPECT_EQ(kmsg::strip_log_prefix(line, p), "tpm tpm0: x") << len;
    EXPECT_EQ(p.time_ms, 1692365807378) << len;
  }
  const std::vector<std::string> not_node_logs = {std::string(81, 'n') + rest, "two words" + rest,
                                                  rest, "host: kern warning: x",
                                                  "host:  kern: warning: x"};
  for (const std::string& line : not_node_logs) {
    kmsg::LogPrefix p;
    const auto body = kmsg::strip_log_prefix(line, p);
    EXPECT_FALSE(p.time_ms.has_value()) << line;
    EXPECT_NE(body.find("kern"), std::string_view::npos) << line;
  }
}

// dmesg -H / -wH: delta lines "[  +0.000844]" (real,
// https://github.com/rwth-i6/returnn/issues/1500) after a minute line. No published capture starts
// with the minute line, so one in the format util-linux prints ("[Jan21 10:19]": month, day without
// padding, hour:minute) opens it.
TEST(KernelLogPrefix, DmesgHumanMinuteAndDeltaLines) {
  const std::string text =
      "[Jan21 10:19] pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) error received: "
      "0000:00:03.0\n"
      "[  +0.000004] pcieport 0000:00:03.0: PCIe Bus Error: severity=Uncorrected (Fatal), "
      "type=Transaction Layer, (Requester ID)\n"
      "[  +0.000921] nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)\n"
      "[  +1.050439] pcieport 0000:00:03.0: AER: Root Port link has been reset (0)\n";
  const auto ev = parse(text);
  ASSERT_EQ(ev.size(), 3u);  // the "PCIe Bus Error" line carries no "AER:"
  const int64_t base = in_year(0, 21, 10, 19, 0);
  EXPECT_EQ(ev[0].time_in_year_ms, base);
  EXPECT_EQ(ev[1].time_in_year_ms, base + 1);  // 0.000004 + 0.000921 s, rounded to ms
  EXPECT_EQ(ev[1].pci_bus_id, "00000000:03:00.0");
  EXPECT_EQ(ev[2].time_in_year_ms, base + 1 + 1050);
  kmsg::LogPrefix p;
  kmsg::strip_log_prefix("[Dec 1 08:14] x", p);
  EXPECT_TRUE(p.minute_line);
  EXPECT_EQ(p.time_in_year_ms, in_year(334, 1, 8, 14, 0));
}

// dmesg --raw keeps the priority: https://github.com/util-linux/util-linux/issues/614
TEST(KernelLogPrefix, RawPriority) {
  kmsg::LogPrefix p;
  const auto body =
      kmsg::strip_log_prefix("<5>[    0.000000] Linux version 4.9.84-1 (builder@ymir-builder)", p);
  EXPECT_TRUE(p.recognised);
  EXPECT_EQ(p.uptime_s, 0.0);
  EXPECT_EQ(body.substr(0, 13), "Linux version");
}

// ---- the class: CRLF, re-indented, behind a prompt or a quote mark, cut, concatenated ----

TEST(KernelLogShape, VariantsOfOneRealLogGiveTheSameEvents) {
  // 122, with the prompt line the fixture's source had (expected.md names it).
  const std::string body =
      "[Wed Jul 31 23:14:18 2024] NVRM: GPU at PCI:0000:00:05: "
      "GPU-efbdfde9-5798-a6e7-4c46-12518fa15375\n"
      "[Wed Jul 31 23:14:18 2024] NVRM: Xid (PCI:0000:00:05): 43, pid=1045242, "
      "name=pt_main_thread, Ch 00000008\n"
      "[Fri Aug  9 13:32:56 2024] NVRM: Xid (PCI:0000:00:08): 94, pid='<unknown>', "
      "name=<unknown>, Contained: SM (0x1). RST: No, D-RST: No\n";
  auto crlf = [](std::string s) {
    std::string o;
    for (char c : s) o += c == '\n' ? std::string("\r\n") : std::string(1, c);
    return o;
  };
  auto indent = [](const std::string& s, const std::string& pre) {
    std::string o, line;
    for (char c : s) {
      line += c;
      if (c == '\n') {
        o += pre + line;
        line.clear();
      }
    }
    return o;
  };
  const std::vector<std::string> variants = {
      body,
      crlf(body),
      indent(body, "     "),
      indent(body, "\t"),
      indent(body, "> "),  // quoted in an issue
      "root@node4:~# dmesg -T |grep NVRM\n" + body,
      body.substr(0, body.size() - 1),  // no final newline
      body + body,                      // two captures concatenated
  };
  for (size_t i = 0; i < variants.size(); ++i) {
    SCOPED_TRACE(i);
    const auto ev = parse(variants[i]);
    ASSERT_EQ(ev.size(), i == 7 ? 4u : 2u);
    EXPECT_EQ(ev[0].code, 43u);
    EXPECT_EQ(ev[0].time_ms, 1722467658000);  // 2024-07-31T23:14:18Z
    EXPECT_EQ(ev[1].code, 94u);
    EXPECT_EQ(ev[1].message, "Contained: SM (0x1). RST: No, D-RST: No");
  }
}

TEST(KernelLogShape, XidWithoutAddressIsOnAnUnidentifiedGpu) {
  // 010's Xid 79 line with the address part as drivers print it when they name no GPU.
  const Event e =
      one("[6781741.548779] NVRM: Xid: 79, pid='<unknown>', name=<unknown>, GPU has "
          "fallen off the bus.");
  EXPECT_EQ(e.kind, EventKind::kXid);
  EXPECT_EQ(e.code, 79u);
  EXPECT_FALSE(e.pci_bus_id.has_value());
}

// ---- multi-line driver messages ----

// 108: continuation lines indented 15 spaces, each with its own "NVRM:".
TEST(KernelLogShape, ApiMismatchJoined108) {
  const std::string text =
      "\n"
      "[ 7386.259769] NVRM: API mismatch: the client has the version 515.48.07, but\n"
      "               NVRM: this kernel module has the version 510.73.05.  Please\n"
      "               NVRM: make sure that this kernel module and all NVIDIA driver\n"
      "               NVRM: components have the same version.\n";
  KernelLogStats st;
  const auto ev = parse(text, &st);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].driver_kind, DriverMessageKind::kApiMismatch);
  EXPECT_NE(ev[0].message.find("client has the version 515.48.07"), std::string::npos);
  EXPECT_NE(ev[0].message.find("kernel module has the version 510.73.05"), std::string::npos);
  EXPECT_EQ(ev[0].origin, "k.log:2");
  EXPECT_EQ(st.gpu_lines, 4u);
  EXPECT_EQ(st.lines, 5u);
}

// 110: continuation lines without a time; two messages 52 s apart.
TEST(KernelLogShape, ProbeNotCalled110) {
  const std::string text =
      "[188497.595099] NVRM: No NVIDIA graphics adapter probed!\n"
      "[188497.595838] nvidia-nvlink: Unregistered the Nvlink Core, major device number 239\n"
      "[188549.975172] nvidia-nvlink: Nvlink Core is being initialized, major device number 239\n"
      "[188549.976351] NVRM: The NVIDIA probe routine was not called for 3 device(s).\n"
      "[188549.977053] NVRM: This can occur when a driver such as: \n"
      "NVRM: nouveau, rivafb, nvidiafb or rivatv \n"
      "NVRM: was loaded and obtained ownership of the NVIDIA device(s).\n"
      "[188549.978961] NVRM: Try unloading the conflicting kernel module (and/or\n"
      "NVRM: reconfigure your kernel without the conflicting\n"
      "NVRM: driver(s)), then try loading the NVIDIA kernel module\n"
      "NVRM: again.\n";
  const auto ev = parse(text);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].driver_kind, DriverMessageKind::kNoDeviceProbed);
  EXPECT_EQ(ev[1].driver_kind, DriverMessageKind::kNoDeviceProbed);
  EXPECT_NE(ev[1].message.find("not called for 3 device(s)"), std::string::npos);
  EXPECT_NE(ev[1].message.find("nouveau, rivafb, nvidiafb or rivatv"), std::string::npos);
  EXPECT_NE(ev[1].message.find("loading the NVIDIA kernel module again."), std::string::npos);
}

// "The NVIDIA GPU <addr>" then what it is, on indented lines. Open-modules block from a
// public Ubuntu install guide (driver 580.105.08, PCI ID 10de:2c58) found by code search;
// fallen-off-the-bus block from https://github.com/NVIDIA/NVSentinel/issues/155.
TEST(KernelLogShape, AnnouncedGpuThenWhatItIs) {
  const std::string text =
      "[    5.499014] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.105.08  Wed Oct 29 "
      "23:15:11 UTC 2025\n"
      "[    5.559842] NVRM: The NVIDIA GPU 0000:02:00.0 (PCI ID: 10de:2c58)\n"
      "               NVRM: installed in this system requires use of the NVIDIA open kernel "
      "modules.\n"
      "[    5.559858] NVRM: GPU 0000:02:00.0: RmInitAdapter failed! (0x22:0x56:884)\n"
      "[    5.560313] NVRM: GPU 0000:02:00.0: rm_init_adapter failed, device minor number 0\n"
      "[ 1843.308145] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
      "               NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
      "               NVRM: fallen off the bus and is not responding to commands.\n"
      "[ 1843.439662] NVRM: The NVIDIA probe routine failed for 1 device(s).\n";
  const auto ev = parse(text);
  ASSERT_EQ(ev.size(), 5u);
  EXPECT_EQ(ev[0].driver_kind, DriverMessageKind::kOpenModulesRequired);
  EXPECT_EQ(ev[0].pci_bus_id, "00000000:02:00.0");
  EXPECT_EQ(ev[0].origin, "k.log:2");
  EXPECT_EQ(ev[1].driver_kind, DriverMessageKind::kInitFailed);
  EXPECT_EQ(ev[2].driver_kind, DriverMessageKind::kInitFailed);
  EXPECT_EQ(ev[3].kind, EventKind::kFallenOffBus);
  EXPECT_EQ(ev[3].pci_bus_id, "00000000:B3:00.0");
  EXPECT_NEAR(ev[3].uptime_s.value_or(0), 1843.308145, 1e-6);
  EXPECT_EQ(ev[4].driver_kind, DriverMessageKind::kNoDeviceProbed);
}

// ---- driver messages that are not Xids ----

// Reset required without an Xid: https://github.com/scitix/sichek/issues/51
TEST(KernelLogDriver, ResetRequiredLines) {
  const std::string text =
      "[Sun Jan 11 09:52:01 2026] NVRM: rpcRmApiAlloc_GSP: GspRmAlloc failed: hClient=0xc1d1a616; "
      "hParent=0x5c000054; hObject=0x5c00005b; hClass=0x0000c86f; paramsSize=0x00000170; "
      "paramsStatus=0x00000062; status=0x00000062 \n"
      "[Sun Jan 11 09:52:01 2026] NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required "
      "[NV_ERR_RESET_REQUIRED] (0x00000062) returned from status @ kernel_channel.c:2874 \n";
  const auto ev = parse(text);
  ASSERT_EQ(ev.size(), 2u);
  for (const auto& e : ev) {
    EXPECT_EQ(e.driver_kind, DriverMessageKind::kResetRequired);
    EXPECT_EQ(e.code, static_cast<unsigned>(DriverMessageKind::kResetRequired));
    EXPECT_FALSE(e.pci_bus_id.has_value());
  }
}

// 009: the rate-limit line names the GPU and says it needs a reset.
TEST(KernelLogDriver, RateLimitLineSaysReset009) {
  const Event e =
      one("[Sun Feb 23 16:24:36 2025] NVRM: Rate limiting GSP RPC error prints for GPU at "
          "PCI:0000:9b:00 (printing 1 of every 30).  The GPU likely needs to be reset.");
  EXPECT_EQ(e.driver_kind, DriverMessageKind::kResetRequired);
  EXPECT_EQ(e.pci_bus_id, "00000000:9B:00.0");
}

// GSP boot failure of GPU6: https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1230
TEST(KernelLogDriver, GspBootFailure) {
  const std::string text =
      "[  115.083711] NVRM: GPU6 _kgspBootGspRm: unexpected WPR2 already up, cannot proceed with "
      "booting GSP\n"
      "[  115.083720] NVRM: GPU6 _kgspBootGspRm: (the GPU is likely in a bad state and may need "
      "to be reset)\n"
      "[  115.083750] NVRM: GPU6 RmInitAdapter: Cannot initialize GSP firmware RM\n"
      "[  115.084348] NVRM: GPU 0000:a1:00.0: RmInitAdapter failed! (0x62:0x40:2168)\n";
  const auto ev = parse(text);
  ASSERT_EQ(ev.size(), 4u);
  EXPECT_EQ(ev[0].driver_kind, DriverMessageKind::kDriverAssert);
  EXPECT_EQ(ev[0].driver_gpu, 6u);
  EXPECT_EQ(ev[1].driver_kind, DriverMessageKind::kResetRequired);
  EXPECT_EQ(ev[2].driver_kind, DriverMessageKind::kDriverAssert);
  EXPECT_EQ(ev[3].driver_kind, DriverMessageKind::kInitFailed);
  EXPECT_EQ(ev[3].pci_bus_id, "00000000:A1:00.0");
}

// Hung tasks: https://github.com/leptonai/gpud/pull/117 and a task name with a colon,
// https://github.com/NVIDIA/k8s-device-plugin/issues/77
TEST(KernelLogDriver, HungTasks) {
  const Event a =
      one("[Sat Oct 12 18:38:44 2024] INFO: task cache_mgr_event:620917 blocked for more than 120 "
          "seconds.");
  EXPECT_EQ(a.driver_kind, DriverMessageKind::kHungTask);
  EXPECT_EQ(a.process_name, "cache_mgr_event");
  EXPECT_EQ(a.pid, 620917u);
  const Event b =
      one("[  721.028170] INFO: task nvc:[driver]:5403 blocked for more than 120 seconds.");
  EXPECT_EQ(b.process_name, "nvc:[driver]");
  EXPECT_EQ(b.pid, 5403u);
}

// 114: the PCI core's bandwidth line.
TEST(KernelLogDriver, PcieBandwidthLimited114) {
  const Event e = one(
      "[   10.735323] pci 0000:04:00.0: 252.048 Gb/s available PCIe bandwidth, limited by 16.0 "
      "GT/s PCIe x16 link at 0000:01:00.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)");
  EXPECT_EQ(e.driver_kind, DriverMessageKind::kPcieLinkLimited);
  EXPECT_EQ(e.pci_bus_id, "00000000:04:00.0");
  // The phrase counts only after a blank: glued to a word first, then as the kernel prints it.
  const Event glued =
      one("[   10.735323] pci 0000:04:00.0: x252.048Gb/s available PCIe bandwidth, limited by 16.0 "
          "GT/s PCIe x16 link at 0000:01:00.0 (capable of 504.112 Gb/s available PCIe bandwidth, "
          "limited by 32.0 GT/s PCIe x16 link)");
  EXPECT_EQ(glued.driver_kind, DriverMessageKind::kPcieLinkLimited);
  EXPECT_EQ(glued.pci_bus_id, "00000000:04:00.0");
  EXPECT_TRUE(parse("[ 1.0] pci 0000:04:00.0: 8Gb/s available PCIe bandwidth, limited by 2.5 "
                    "GT/s PCIe x1 link at 0000:01:00.0\n")
                  .empty());
}

// ---- what was understood: mixed content counted line by line ----

// lsmod output and a shell session around kernel lines:
// https://github.com/NVIDIA/open-gpu-kernel-modules/issues/326 (lsmod) and 122 (the lines).
TEST(KernelLogCoverage, UnreadLinesAreCountedAndHandedOn) {
  const std::string text =
      "lsmod | grep nvidia\n"
      "\n"
      "nvidia_drm             69632  0\n"
      "nvidia_modeset       1064960  1 nvidia_drm\n"
      "[Wed Jul 31 23:14:18 2024] NVRM: Xid (PCI:0000:00:05): 43, pid=1045242, "
      "name=pt_main_thread, Ch 00000008\n"
      "[Wed Jul 31 23:14:18 2024] NVRM: GPU Board Serial Number: 1650423013443\n"
      "Sep 19 16:18:02 bubz kernel: [68183.615790] pcieport 0000:00:03.1: AER: Correctable error "
      "message received from 0000:00:00.0\n"
      "Mar 21 21:43:00 kernel: nvidia 0000:05:00.0: Enabling HDA controller\n"
      "ERROR: Encountered errors while bringing up the project.\n";
  KernelLogParseOptions opt;
  opt.classify_lines = true;
  std::vector<size_t> unread;
  opt.on_unread = [&](size_t n, std::string_view) { unread.push_back(n); };
  size_t events = 0;
  const auto st = parse_kernel_log_stream(
      text, "mix", [&](Event&&) { ++events; }, nullptr, opt);
  EXPECT_EQ(events, 2u);
  EXPECT_EQ(st.lines, 9u);
  EXPECT_EQ(st.kernel_lines, 4u);
  EXPECT_EQ(st.unread_lines, 4u);  // the blank line is not counted
  EXPECT_EQ(st.first_unread_line, 1u);
  EXPECT_EQ(unread, (std::vector<size_t>{1, 3, 4, 9}));
  // Without classify_lines the same events, nothing counted per line.
  KernelLogStats fast;
  EXPECT_EQ(parse(text, &fast).size(), 2u);
  EXPECT_EQ(fast.kernel_lines, 0u);
  EXPECT_EQ(fast.lines, 9u);
  EXPECT_EQ(fast.gpu_lines, 2u);
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

// Time brackets no kernel writes: the prefix is still stripped, the line is read without a time
// and counted (found by reading strip_bracket: "[+1e300]" overflowed the dmesg -H clock).
TEST(KernelLogPrefix, ImpossibleTimesAreReadUntimed) {
  for (const std::string line :
       {"[  +1e300] NVRM: Xid (PCI:0000:03:00): 79, GPU has fallen off the bus.",
        "[+31700000.5] NVRM: Xid (PCI:0000:03:00): 79, GPU has fallen off the bus.",
        "[99999999999999999999.000000] NVRM: Xid (PCI:0000:03:00): 79, GPU has fallen off",
        "6,1,18446744073709551615,-;NVRM: Xid (PCI:0000:03:00): 79, GPU has fallen off"}) {
    kmsg::LogPrefix p;
    const auto body = kmsg::strip_log_prefix(line, p);
    EXPECT_TRUE(p.recognised) << line;
    EXPECT_TRUE(p.time_refused) << line;
    EXPECT_FALSE(p.delta_s || p.uptime_s || p.time_ms || p.time_in_year_ms) << line;
    EXPECT_EQ(body.substr(0, 5), "NVRM:") << line;
  }
  // The largest real ones are still times.
  kmsg::LogPrefix year;
  kmsg::strip_log_prefix("[+31536000.000000] x", year);
  EXPECT_EQ(year.delta_s, 31536000.0);
  EXPECT_FALSE(year.time_refused);
  kmsg::LogPrefix up;
  kmsg::strip_log_prefix("[3153600000.000000] x", up);
  EXPECT_EQ(up.uptime_s, 3153600000.0);
}

TEST(KernelLogPrefix, HumanClockSurvivesAHugeDelta) {
  const std::string text =
      "[Jan21 10:19] pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) error received\n"
      "[  +1e300] nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)\n"
      "[  +0.500000] nvidia 0000:03:00.0: AER: can't recover (no error_detected callback)\n";
  KernelLogStats st;
  const auto ev = parse(text, &st);
  ASSERT_EQ(ev.size(), 3u);
  const int64_t base = in_year(0, 21, 10, 19, 0);
  EXPECT_EQ(ev[0].time_in_year_ms, base);
  EXPECT_FALSE(ev[1].time_in_year_ms);  // read, without a time
  EXPECT_EQ(ev[2].time_in_year_ms, base + 500);
  EXPECT_EQ(st.untimed_lines, 1u);
}

}  // namespace
}  // namespace gw
