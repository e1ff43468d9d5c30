// Kernel log parser (every prefix style), the real dmesg captures, and the live reader.
#include "sources/kmsg/kernel_log.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "fixture_util.h"
#include "sources/captures.h"
#include "sources/kmsg/kernel_log_line.h"
#include "sources/kmsg/kmsg_format.h"
#include "sources/kmsg/live_kernel_log.h"
#include "sources/kmsg/monitor_xid.h"

namespace gw {
namespace {

using test::read_fixture;

std::vector<Event> events_of(const std::string& id, std::vector<Error>* errors = nullptr) {
  return parse_kernel_log(read_fixture(id, "dmesg.log"), id, errors);
}

std::map<unsigned, int> xid_counts(const std::vector<Event>& ev, const std::string& bus) {
  std::map<unsigned, int> out;
  for (const auto& e : ev)
    if (e.kind == EventKind::kXid && e.pci_bus_id == bus) ++out[e.code.value_or(0)];
  return out;
}

TEST(KernelLog, DbeRowRemapContained007) {
  std::vector<Error> errors;
  const auto ev = events_of("007-dmesg-xid48-63-94-dbe-row-remap", &errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(xid_counts(ev, "00000000:19:00.0"),
            (std::map<unsigned, int>{{48, 1}, {63, 1}, {94, 9}}));
  EXPECT_EQ(ev.size(), 11u);  // nvidia-peermem lines are not Xids
  const Event& dbe = ev.front();
  EXPECT_EQ(dbe.code, 48u);
  EXPECT_FALSE(dbe.pid.has_value());           // pid='<unknown>'
  EXPECT_FALSE(dbe.process_name.has_value());  // name=<unknown>
  EXPECT_EQ(dbe.time_ms, 1731672123470);       // 2024-11-15T12:02:03,470068+00:00
  EXPECT_EQ(dbe.message.rfind("An uncorrectable double bit error", 0), 0u);
  bool python = false;
  for (const auto& e : ev)
    if (e.pid == 1248209u && e.process_name == "python3.10") python = true;
  EXPECT_TRUE(python);
  EXPECT_EQ(dbe.origin.rfind("007-dmesg-xid48-63-94-dbe-row-remap:", 0), 0u);
}

TEST(KernelLog, RepeatedXid13And43Decode008) {
  const auto ev = events_of("008-dmesg-xid13-43-out-of-range-repeated");
  EXPECT_EQ(xid_counts(ev, "00000000:38:00.0"), (std::map<unsigned, int>{{13, 629}, {43, 7}}));
  int with_pt = 0;
  for (const auto& e : ev) {
    if (e.code == 43u) {
      EXPECT_TRUE(e.pid.has_value());
      with_pt += e.process_name == "pt_main_thread";
    }
  }
  EXPECT_EQ(with_pt, 7);
  for (const auto& e : ev) {
    EXPECT_TRUE(e.time_ms.has_value()) << e.origin;  // "kern  :warn  : 2025-..." prefix
  }
}

TEST(KernelLog, GspTimeoutCtime009) {
  auto all = events_of("009-dmesg-xid119-gsp-rpc-timeout");
  // Five Xid 119 lines, and the driver's "The GPU likely needs to be reset" line.
  ASSERT_EQ(all.size(), 6u);
  EXPECT_TRUE(std::any_of(all.begin(), all.end(), [](const Event& e) {
    return e.driver_kind == DriverMessageKind::kResetRequired;
  }));
  std::vector<Event> ev;
  for (auto& e : all)
    if (e.kind == EventKind::kXid) ev.push_back(e);
  ASSERT_EQ(ev.size(), 5u);
  EXPECT_EQ(xid_counts(ev, "00000000:9B:00.0")[119], 5);
  EXPECT_EQ(ev[0].time_ms, 1740327858000);  // Sun Feb 23 16:24:18 2025
  EXPECT_EQ(ev[0].process_name, "nvidia-smi");
  EXPECT_EQ(ev[4].process_name, "gpud");
  EXPECT_EQ(ev[4].pid, 1240590u);
}

TEST(KernelLog, FallenOffBusAndSxid010) {
  const auto ev = events_of("010-dmesg-xid79-fallen-off-bus-nvswitch-sxid");
  int xid79 = 0, fallen = 0, sxid = 0;
  for (const auto& e : ev) {
    if (e.kind == EventKind::kXid) {
      EXPECT_EQ(e.code, 79u);
      EXPECT_EQ(e.pci_bus_id, "00000000:91:00.0");
      ++xid79;
    } else if (e.kind == EventKind::kFallenOffBus) {
      EXPECT_EQ(e.pci_bus_id, "00000000:91:00.0");
      ++fallen;
    } else if (e.kind == EventKind::kSXid) {
      EXPECT_EQ(e.code, 20034u);
      EXPECT_EQ(e.message.rfind("nvidia-nvswitch", 0), 0u);
      ++sxid;
    }
  }
  EXPECT_EQ(xid79, 1);
  EXPECT_EQ(fallen, 1);
  EXPECT_EQ(sxid, 7);
  EXPECT_NEAR(ev[0].uptime_s.value_or(0), 6781741.548779, 1e-6);
  for (const auto& e : ev) {
    if (e.kind == EventKind::kXid) {
      EXPECT_NE(e.code, 20034u) << "SXid read as Xid";
    }
  }
}

TEST(KernelLog, PytorchCtime011) {
  const auto ev = events_of("011-dmesg-xid13-109-31-pytorch");
  EXPECT_EQ(xid_counts(ev, "00000000:CB:00.0"),
            (std::map<unsigned, int>{{13, 3}, {31, 1}, {109, 2}}));
  for (const auto& e : ev) {
    if (e.code == 109u) {
      EXPECT_EQ(e.process_name, "pt_main_thread");
    }
  }
}

TEST(KernelLog, HealthyBootHasNoEvents012) {
  std::vector<Error> errors;
  EXPECT_TRUE(events_of("012-dmesg-hgx-boot-no-xid-healthy", &errors).empty());
  EXPECT_TRUE(errors.empty());
}

TEST(KernelLog, EveryPrefixStyle) {
  struct Case {
    const char* line;
    std::optional<int64_t> time_ms;
    std::optional<double> uptime;
  };
  const Case cases[] = {
      {"[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
       {},
       1234.56789},
      {"[  130.456250] [ T1946] NVRM: Xid (0000:3b:00): 79, GPU has fallen off the bus.",
       {},
       130.45625},
      {"[Sun Feb 23 16:24:18 2025] NVRM: Xid (PCI:0000:3b:00): 79, x", 1740327858000, {}},
      {"2025-02-23T16:24:18,500000+00:00 NVRM: Xid (PCI:0000:3b:00): 79, x", 1740327858500, {}},
      {"2025-02-23T17:24:18+0100 host kernel: NVRM: Xid (PCI:0000:3b:00): 79, x",
       1740327858000,
       {}},
      {"kern  :err   : 2025-02-23T16:24:18,000000+00:00 NVRM: Xid (PCI:0000:3b:00): 79, x",
       1740327858000,
       {}},
      {"Mar  3 10:00:00 host kernel: [ 55.5] NVRM: Xid (PCI:0000:3b:00): 79, x", {}, 55.5},
      {"Mar  3 10:00:00 host kernel: NVRM: Xid (PCI:0000:3b:00): 79, x", {}, {}},
      {"6,1234,5678901,-;NVRM: Xid (PCI:0000:3b:00): 79, x", {}, 5.678901},
      {"NVRM: Xid (PCI:0000:3b:00): 79, x", {}, {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.line);
    Error err;
    auto ev = parse_kernel_log_line(c.line, "f", 1, &err);
    ASSERT_TRUE(ev.has_value()) << err.to_string();
    EXPECT_EQ(ev->code, 79u);
    EXPECT_EQ(ev->pci_bus_id, "00000000:3B:00.0");
    EXPECT_EQ(ev->time_ms, c.time_ms);
    if (c.uptime) {
      EXPECT_NEAR(ev->uptime_s.value_or(-1), *c.uptime, 1e-6);
    } else {
      EXPECT_FALSE(ev->uptime_s.has_value());
    }
  }
}

TEST(KernelLog, FallenOffBusWithoutXidAndMalformedLines) {
  const std::string text =
      "[ 1.0] usb 1-1: new device\n"
      "[ 2.0] NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.\n"
      "[ 3.0] NVRM: Xid (PCI:0000:2b:00): oops\n"
      "[ 4.0] NVRM: Xid (PCI:0000:2b:00): 13, pid=77, name=train, Graphics Exception\r\n";
  std::vector<Error> errors;
  auto ev = parse_kernel_log(text, "k.log", &errors);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, EventKind::kFallenOffBus);
  EXPECT_EQ(ev[0].pci_bus_id, "00000000:2B:00.0");
  EXPECT_EQ(ev[0].origin, "k.log:2");
  EXPECT_EQ(ev[1].pid, 77u);
  EXPECT_EQ(ev[1].process_name, "train");
  EXPECT_EQ(ev[1].message, "Graphics Exception");  // CR stripped
  EXPECT_EQ(ev[1].origin, "k.log:4");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].where, "k.log:3");
  EXPECT_NE(errors[0].message.find("expected"), std::string::npos);
}

TEST(KernelLog, MultiLineFallenOffBusTakesTheAnnouncedGpu) {
  const std::string text =
      "[ 10.0] NVRM: The NVIDIA GPU 0000:18:00.0\n"
      "[ 10.0] NVRM: (PCI ID: 10de:2330) installed in this system has\n"
      "[ 10.0] NVRM: fallen off the bus and is not responding to commands.\n";
  auto ev = parse_kernel_log(text, "k.log", nullptr);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, EventKind::kFallenOffBus);
  EXPECT_EQ(ev[0].pci_bus_id, "00000000:18:00.0");
  EXPECT_EQ(ev[0].origin, "k.log:1");  // named after the message's first line
}

TEST(Kmsg, RecordsBecomeDmesgLinesFilteredBySince) {
  const std::string raw =
      "6,1,1000000,-;early line\n"
      " SUBSYSTEM=pci\n"
      "4,2,90000000,-;NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n";
  EXPECT_EQ(kmsg_records_to_dmesg(raw, 50.0),
            "[   90.000000] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n");
  auto all = kmsg_records_to_dmesg(raw, std::nullopt);
  EXPECT_NE(all.find("[    1.000000] early line\n"), std::string::npos);
  auto ev = parse_kernel_log(all, "kmsg", nullptr);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_NEAR(*ev[0].uptime_s, 90.0, 1e-9);
}

class LiveKernelLog : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("gw-kmsg-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) {
    std::filesystem::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  std::filesystem::path root_;
};

TEST_F(LiveKernelLog, ReadsKmsgAndFiltersSince) {
  write("proc/uptime", "7300.00 100.00\n");
  write("dev/kmsg",
        "6,1,100000000,-;old line\n"
        "4,2,7200000000,-;NVRM: Xid (PCI:0000:3b:00): 48, DBE\n");
  KernelLogOptions o{root_, std::chrono::hours(1), false};
  auto r = read_live_kernel_log(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->origin, "/dev/kmsg");
  EXPECT_EQ(r->text.find("old line"), std::string::npos);
  auto ev = parse_kernel_log(r->text, r->origin, nullptr);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].code, 48u);
}

TEST_F(LiveKernelLog, FallsBackToKernLogThenSyslog) {
  write("var/log/syslog", "Mar  3 10:00:00 h kernel: NVRM: Xid (PCI:0000:3b:00): 31, x\n");
  KernelLogOptions o{root_, std::chrono::hours(24), false};
  auto r = read_live_kernel_log(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->origin, "/var/log/syslog");
  write("var/log/kern.log", "Mar  3 10:00:00 h kernel: NVRM: Xid (PCI:0000:3b:00): 43, x\n");
  r = read_live_kernel_log(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->origin, "/var/log/kern.log");
  EXPECT_EQ(parse_kernel_log(r->text, r->origin, nullptr).at(0).code, 43u);
}

TEST_F(LiveKernelLog, NothingReadableIsAnError) {
  KernelLogOptions o{root_, std::chrono::hours(24), false};
  auto r = read_live_kernel_log(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "kmsg.unreadable");
}

TEST(KernelLogDump, RegisterAndFirmwareStateLinesAreDumpsAndMessagesAreNot) {
  for (const char* dump : {
           "[605633.376803] NVRM:     RISC-V CSR State:",
           "[605633.376806] NVRM:         sepc:0x00000000013ebd80     stval:0x0000000000000020",
           "[  279.949534] NVRM: kfspDumpDebugState_GH100: "
           "NV_PFSP_FALCON_COMMON_SCRATCH_GROUP_2(0) "
           "= 0x9f",
           "[  279.949533] NVRM: kfspDumpDebugState_GH100: GPU 0000:01:00",
           "[  286.345367] NVRM: kfspSendBootCommands_GH100: version=0x1, size=0x35c, "
           "gspFmcSysmemOffset=0x110680000",
           "Jun  3 10:00:00 host kernel: NVRM: GPU0 _kgspDump: a0:0x2 a1:0x2",
       })
    EXPECT_TRUE(kmsg::is_driver_dump_line(dump)) << dump;
  for (const char* message : {
           "[ 1.0] NVRM: Xid (PCI:0000:06:00): 120, GSP task exception: store access page fault",
           "[ 1.0] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x62:0x40:2168)",
           "[ 1.0] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15",
           "[ 1.0] NVRM: kgspInitRm_IMPL: unexpected WPR2 already up, cannot proceed",
           "[ 1.0] NVRM: nvAssertFailed: Assertion failed: 0 @ g_kern_bus_nvoc.h:2020",
           "[ 1.0] NVRM: rpcRmApiControl_GSP: status=0x65 timeout",
           "[ 1.0] nvidia 0000:01:00.0: a0:0x2",
       })
    EXPECT_FALSE(kmsg::is_driver_dump_line(message)) << message;
}

// gpud's reading of an Xid, in its wordings (sub-code and error status, a catalog name, the
// description in parentheses, a UUID after the address), wherever it stands in a line.
TEST(MonitorXid, GpudReasonsAreXidsOnTheirGpu) {
  const struct {
    std::string_view line;
    unsigned code;
    std::string_view bus;
  } cases[] = {
      {"- XID 149.38 (err status 0x00000000) NVLINK_NETIR_ERROR detected on GPU PCI:0000:00:00",
       149, "00000000:00:00.0"},
      {"XID 79 ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS GPU has fallen off the bus detected on "
       "GPU PCI:0000:01:00",
       79, "00000000:01:00.0"},
      {"  \"reason\": \"XID 123 (SPI PMU RPC Write Failure) detected on GPU PCI:0000:9b:00 "
       "UUID:GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7\",",
       123, "00000000:9B:00.0"},
  };
  for (const auto& c : cases) {
    const auto ev = kmsg::parse_monitor_xid_line(c.line);
    ASSERT_TRUE(ev.has_value()) << c.line;
    EXPECT_EQ(ev->kind, EventKind::kXid);
    EXPECT_EQ(ev->code, c.code) << c.line;
    EXPECT_EQ(ev->pci_bus_id, std::string(c.bus)) << c.line;
    EXPECT_EQ(ev->message.rfind("gpud: XID ", 0), 0u) << ev->message;
    EXPECT_EQ(ev->message.find('"'), std::string::npos) << ev->message;
  }
  // Not a reading: no address, no number, a word that only ends in XID, a tool's own name.
  for (std::string_view line :
       {"XID 79 detected on GPU", "XID errors detected on GPU PCI:0000:01:00",
        "SXID 12028 detected on GPU PCI:0000:01:00", "NOXID 79 detected on GPU PCI:0000:01:00",
        "XID 1234 detected on GPU PCI:0000:01:00"})
    EXPECT_FALSE(kmsg::parse_monitor_xid_line(line).has_value()) << line;
}

// A reading after the kernel's own line restates it: one event, both lines read. Alone, the
// reading is the event.
TEST(MonitorXid, AReadingOfAKernelLineIsNoSecondEvent) {
  const std::string kernel =
      "[ 10.000000] NVRM: Xid (PCI:0000:00:00): 149, NETIR_LINK_EVT Fatal XC0 i0 Link 00 "
      "(0x026001c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)\n";
  const std::string reading =
      "- XID 149.38 (err status 0x00000000) NVLINK_NETIR_ERROR detected on GPU PCI:0000:00:00\n";
  for (const std::string& text : {kernel + reading, reading, reading + kernel}) {
    std::vector<Event> events;
    std::vector<size_t> unread;
    KernelLogParseOptions opt;
    opt.on_unread_gpu_line = [&](size_t no, std::string_view) { unread.push_back(no); };
    const auto st = parse_kernel_log_stream(
        text, "t", [&](Event&& e) { events.push_back(std::move(e)); }, nullptr, opt);
    EXPECT_TRUE(unread.empty()) << text;
    EXPECT_EQ(st.gpu_lines, text == reading ? 1u : 2u) << text;
    // The reading before the kernel's line is its own event (the order a person cannot
    // tell apart from two incidents).
    EXPECT_EQ(events.size(), text == reading + kernel ? 2u : 1u) << text;
    for (const Event& e : events) EXPECT_EQ(e.code, 149u);
  }
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

// The routine patterns are found wherever they lie in a line (the walk looks for the byte pair
// each begins with): alone, first, after a journal's prefix, last; never once cut by a byte.
TEST(RoutineDriverLines, FoundAnywhereInTheLineAndNeverWhenCut) {
  const std::string prefix = "Dec  5 07:12:33 gpu-node-17 kernel: ";
  for (const std::string p :
       {"NVRM: loading NVIDIA UNIX", ": open (major=", ".nvidia.com/", "[nvidia-drm] [GPU ID",
        "PCI INT ", "vgaarb:", "FBHUB Interrupt detected. Clearing it",
        "apparmor=", "module verification failed", "nvlink driver close", "snd_hda"}) {
    SCOPED_TRACE(p);
    EXPECT_TRUE(is_routine_driver_line(p));
    EXPECT_TRUE(is_routine_driver_line(p + " and more"));
    EXPECT_TRUE(is_routine_driver_line(prefix + p));
    EXPECT_TRUE(is_routine_driver_line(prefix + "x" + p + "\r"));
    const std::string cut = p.substr(0, p.size() - 1);
    EXPECT_FALSE(is_routine_driver_line(cut));
    EXPECT_FALSE(is_routine_driver_line(prefix + cut));
  }
  EXPECT_FALSE(is_routine_driver_line(""));
  EXPECT_FALSE(is_routine_driver_line("N"));
  EXPECT_FALSE(is_routine_driver_line(prefix + "NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has "
                                               "fallen off the bus."));
}

// Lines of every length up to 100 with a pattern at every offset, amid filler that begins
// pattern pairs without a pattern ("nv", "NV", ": "): lines of 33 bytes and more are scanned 32
// positions a step where the CPU has AVX2, the last bytes as one more step.
TEST(RoutineDriverLines, FoundAtEveryOffsetOfEveryLength) {
  const std::string filler = "nvNV: mo[nLo.nxx";
  for (const std::string p : {": open (major=", "vgaarb:", "PCI INT ", "snd_hda"}) {
    for (size_t len = 0; len <= 100; ++len) {
      std::string line;
      while (line.size() < len) line += filler;
      line.resize(len);
      ASSERT_FALSE(is_routine_driver_line(line)) << len;
      for (size_t at = 0; at + p.size() <= len; ++at) {
        std::string with = line;
        with.replace(at, p.size(), p);
        ASSERT_TRUE(is_routine_driver_line(with)) << p << " at " << at << " of " << len;
        with[at + p.size() - 1] = '#';  // the pattern's last byte gone
        ASSERT_FALSE(is_routine_driver_line(with)) << p << " cut at " << at << " of " << len;
      }
    }
  }
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

TEST(KernelLogLine, EachAnchorIsFoundAtEveryOffsetOfItsLine) {
  // parse_line asks first whether a line may hold an anchor at all, by its first two bytes,
  // 16 positions a step, then byte by byte: each kind, after 0 to 47 bytes of other text (over
  // the steps and the tail), is read as it is without them.
  const char* bodies[] = {
      "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, GPU has fallen off the bus.",
      "nvidia-nvswitch1: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 30 LTSSM Fault Up",
      "pcieport 0000:00:03.0: AER: Uncorrected (Fatal) error received: 0000:04:00.0",
      "pcieport 0000:00:03.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction",
      "pci 0000:04:00.0: 252.048 Gb/s available PCIe bandwidth, limited by 16.0 GT/s PCIe x16 "
      "link at 0000:00:03.0 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)",
      "INFO: task nvc:[driver]:5403 blocked for more than 120 seconds."};
  for (const char* body : bodies) {
    const kmsg::ParsedLine alone = kmsg::parse_line(std::string("[  721.028170] ") + body);
    ASSERT_NE(alone.role, kmsg::LineRole::kNone) << body;
    for (size_t pad = 0; pad < 48; ++pad) {
      const std::string line = "[  721.028170] " + std::string(pad, 'x') + " " + body;
      EXPECT_NE(kmsg::parse_line(line).role, kmsg::LineRole::kNone) << line;
    }
  }
  // An anchor in a line's last bytes, where the 16-byte steps end and bytes are looked at alone.
  for (size_t pad = 0; pad < 48; ++pad) {
    const std::string line = std::string(pad, 'x') + " NVRM: GPU at x";
    EXPECT_NE(kmsg::parse_line(line).role, kmsg::LineRole::kNone) << line;
  }
  EXPECT_EQ(kmsg::parse_line("[  721.028170] nvidia-nvswitch3: open (major=509)").role,
            kmsg::LineRole::kNone);
}

}  // namespace
}  // namespace gw
