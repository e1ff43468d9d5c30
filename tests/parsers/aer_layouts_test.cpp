// PCIe AER reports in all their layouts (issue 19): older kernels' reports without "AER: " on
// their detail lines, reports from the root port alone, a prefix-less paste, and the lines the
// GPU's own functions print for the same error. Inputs: captures 387-391 (393 and 394 are held
// out), with the class transformations (CRLF, re-indented, after and before another kernel log, in
// a bug report, cut at every line).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fixture_util.h"
#include "sources/captures.h"
#include "sources/kmsg/ghes_record.h"

namespace gw {
namespace {

using test::lines_of;
using test::read_fixture;

std::vector<Event> aer_events(const std::string& text) {
  Observation obs;
  add_capture(text, "dmesg.log", obs);
  std::vector<Event> out;
  for (const Event& e : obs.events)
    if (e.kind == EventKind::kDriverMessage && e.driver_kind == DriverMessageKind::kPcieAer)
      out.push_back(e);
  return out;
}

std::vector<std::string> messages(const std::vector<Event>& es) {
  std::vector<std::string> out;
  for (const Event& e : es) out.push_back(e.message);
  return out;
}

TEST(AerLayouts, UntaggedDetailsJoinTheirReport) {
  // Capture 388: a corrected and a fatal report of root port 00:02.0 with untagged details,
  // then the GPU below: "nvidia 0000:02:00.0: device has no AER-aware driver", then Xid 79.
  const auto es = aer_events(
      read_fixture("388-aer-old-format-id0010-surprise-down-root-port-tesla-xid79", "dmesg.log"));
  ASSERT_EQ(es.size(), 3u);
  EXPECT_NE(es[0].message.find("severity=Corrected"), std::string::npos) << es[0].message;
  EXPECT_NE(es[0].message.find("[12] Replay Timer Timeout"), std::string::npos);
  EXPECT_NE(es[1].message.find("[ 5] Surprise Down Error"), std::string::npos) << es[1].message;
  EXPECT_NE(es[1].message.find("broadcast error_detected message"), std::string::npos);
  // The GPU's own line is a report of its own, and the NVRM lines after it are not joined.
  EXPECT_EQ(es[2].message, "nvidia 0000:02:00.0: device has no AER-aware driver");
  EXPECT_EQ(es[2].pci_bus_id, normalize_pci_bus_id("0000:02:00.0"));
}

TEST(AerLayouts, EachDeviceOfOneErrorReportsOnItsOwn) {
  // Capture 387: the port's report, then the GPU's and its audio function's own "PCIe Bus
  // Error" lines (no "AER: "), each with its details.
  const auto es = aer_events(read_fixture(
      "387-aer-root-port-and-gtx1660-correctable-dll-flood-fallen-off-bus", "dmesg.log"));
  std::vector<std::string> heads;
  for (const Event& e : es) heads.push_back(e.message.substr(0, e.message.find(": ")));
  ASSERT_GE(es.size(), 3u);
  EXPECT_EQ(heads[0], "pcieport 0000:00:03.1");
  EXPECT_EQ(heads[1], "nvidia 0000:07:00.0");
  EXPECT_EQ(heads[2], "snd_hda_intel 0000:07:00.1");
  EXPECT_NE(es[1].message.find("[12] Timeout"), std::string::npos) << es[1].message;
}

TEST(AerLayouts, APrefixlessPasteIsAKernelLog) {
  // Capture 390: the root port's fatal report pasted without timestamps, cut by the reporter.
  const auto es = aer_events(
      read_fixture("390-aer-fatal-sdes-root-port-only-2080ti-vgpu-host-abridged", "dmesg.log"));
  ASSERT_EQ(es.size(), 1u);
  EXPECT_NE(es[0].message.find("severity=Uncorrected (Fatal)"), std::string::npos);
  EXPECT_NE(es[0].message.find("error status/mask=00000020"), std::string::npos) << es[0].message;
}

TEST(AerLayouts, ClassTransformationsKeepTheReports) {
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  for (const char* c : {"387-aer-root-port-and-gtx1660-correctable-dll-flood-fallen-off-bus",
                        "388-aer-old-format-id0010-surprise-down-root-port-tesla-xid79",
                        "390-aer-fatal-sdes-root-port-only-2080ti-vgpu-host-abridged",
                        "391-aer-root-port-only-corrected-dll-timeout-flood-gpu-unknown-error"}) {
    const std::string log = read_fixture(c, "dmesg.log");
    const auto base = messages(aer_events(log));
    ASSERT_FALSE(base.empty()) << c;
    for (const auto& [tag, text] : test::class_variants(log, dmesg))
      EXPECT_EQ(messages(aer_events(text)), base) << c << " " << tag;
    // Cut after any line: never more reports than the whole, and the first one from its line.
    const auto lines = lines_of(log);
    for (size_t keep = 1; keep <= lines.size(); ++keep) {
      std::string head;
      for (size_t i = 0; i < keep; ++i) head += lines[i] + "\n";
      EXPECT_LE(aer_events(head).size(), base.size()) << c << " " << keep;
    }
  }
}

// Firmware-first records (APEI/GHES): the kernel prints the record the firmware handed over, one
// field per line, tagged "{N}[Hardware Error]:"; the native AER driver says nothing.
TEST(AerLayouts, AFirmwareRecordIsOneReportOnItsDevice) {
  // Capture 392: a record cut to its device lines, an RTX 3090 (10de:2204), no severity.
  const auto es = aer_events(read_fixture(
      "392-aer-ghes-firmware-first-hardware-error-rtx3090-device-id-only", "dmesg.log"));
  ASSERT_EQ(es.size(), 1u);
  EXPECT_EQ(es[0].pci_bus_id, normalize_pci_bus_id("0000:01:00.0"));
  EXPECT_EQ(es[0].message.substr(0, 19), "GHES 0000:01:00.0: ") << es[0].message;
  EXPECT_NE(es[0].message.find("vendor_id: 0x10de, device_id: 0x2204"), std::string::npos);
  EXPECT_NE(es[0].message.find("severity: unknown"), std::string::npos) << es[0].message;
  EXPECT_EQ(es[0].origin, "dmesg.log:2");  // the record's first line (line 1 is blank)
  ASSERT_TRUE(es[0].time_in_year_ms || es[0].time_ms);
}

TEST(AerLayouts, ARecordInterleavedWithOtherLinesStaysWhole) {
  // Capture 395: an NVMe drive's recoverable record, with a machine-check line inside it.
  const auto es = aer_events(read_fixture(
      "395-aer-ghes-recoverable-pcie-error-nvme-on-gpu-node-with-edac-ue", "dmesg.log"));
  ASSERT_EQ(es.size(), 1u);
  EXPECT_EQ(es[0].pci_bus_id, normalize_pci_bus_id("0000:5e:00.0"));
  EXPECT_NE(es[0].message.find("severity: Uncorrected (Non-Fatal) ('recoverable')"),
            std::string::npos)
      << es[0].message;
  EXPECT_NE(es[0].message.find("port_type: 0, PCIe end point"), std::string::npos);
  EXPECT_NE(es[0].message.find("vendor_id: 0x144d, device_id: 0xa808"), std::string::npos);
  EXPECT_EQ(es[0].uptime_s, 11219.196524);
}

TEST(AerLayouts, ARecordNamesItsErrorBitsAndEachRecordIsItsOwn) {
  // The kernel's layout of a complete record (drivers/firmware/efi/cper.c): two records, the
  // second a root port's, syslog-prefixed; the status registers name the errors.
  const std::string log =
      "Apr  9 04:50:00 gpu7 kernel: {4}[Hardware Error]: Hardware error from APEI Generic "
      "Hardware Error Source: 1\n"
      "Apr  9 04:50:00 gpu7 kernel: {4}[Hardware Error]: It has been corrected by h/w and "
      "requires no further action\n"
      "Apr  9 04:50:00 gpu7 kernel: {4}[Hardware Error]: event severity: corrected\n"
      "Apr  9 04:50:00 gpu7 kernel: {4}[Hardware Error]:  Error 0, type: corrected\n"
      "Apr  9 04:50:00 gpu7 kernel: {4}[Hardware Error]:   section_type: PCIe error\n"
      "Apr  9 04:50:00 gpu7 kernel: {4}[Hardware Error]:   port_type: 0, PCIe end point\n"
      "Apr  9 04:50:00 gpu7 kernel: {4}[Hardware Error]:   device_id: 0000:17:00.0\n"
      "Apr  9 04:50:00 gpu7 kernel: {4}[Hardware Error]:   vendor_id: 0x10de, device_id: 0x2330\n"
      "Apr  9 04:50:00 gpu7 kernel: {4}[Hardware Error]:   aer_cor_status: 0x00000041, "
      "aer_cor_mask: 0x00002000\n"
      "Apr  9 04:50:00 gpu7 kernel: {4}[Hardware Error]:   aer_uncor_status: 0x00100000, "
      "aer_uncor_mask: 0x00100000\n"
      "Apr  9 04:50:01 gpu7 kernel: {5}[Hardware Error]: Hardware error from APEI Generic "
      "Hardware Error Source: 1\n"
      "Apr  9 04:50:01 gpu7 kernel: {5}[Hardware Error]: event severity: fatal\n"
      "Apr  9 04:50:01 gpu7 kernel: {5}[Hardware Error]:  Error 0, type: fatal\n"
      "Apr  9 04:50:01 gpu7 kernel: {5}[Hardware Error]:   section_type: PCIe error\n"
      "Apr  9 04:50:01 gpu7 kernel: {5}[Hardware Error]:   port_type: 4, root port\n"
      "Apr  9 04:50:01 gpu7 kernel: {5}[Hardware Error]:   device_id: 0000:16:01.0\n"
      "Apr  9 04:50:01 gpu7 kernel: {5}[Hardware Error]:   vendor_id: 0x8086, device_id: 0x352a\n"
      "Apr  9 04:50:01 gpu7 kernel: {5}[Hardware Error]:   aer_uncor_status: 0x00004020, "
      "aer_uncor_mask: 0x00000000\n"
      "Apr  9 04:50:01 gpu7 kernel: mce: [Hardware Error]: Machine check events logged\n";
  const auto es = aer_events(log);
  ASSERT_EQ(es.size(), 2u);
  // Corrected: the correctable bits only (the masked uncorrectable bit is not an error here).
  EXPECT_NE(es[0].message.find("severity: Corrected ('corrected')"), std::string::npos);
  EXPECT_NE(es[0].message.find("errors:  [ 0] RxErr  [ 6] BadTLP"), std::string::npos)
      << es[0].message;
  EXPECT_EQ(es[0].message.find("UnsupReq"), std::string::npos) << es[0].message;
  EXPECT_NE(es[1].message.find("severity: Uncorrected (Fatal)"), std::string::npos);
  EXPECT_NE(es[1].message.find("port_type: 4, root port"), std::string::npos);
  EXPECT_NE(es[1].message.find("[ 5] SDES  [14] CmpltTO"), std::string::npos) << es[1].message;
  EXPECT_EQ(es[1].origin, "dmesg.log:11");
  // The class: CRLF, re-indented, next to another kernel log, in a bug report; cut anywhere,
  // never more reports than the whole.
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  for (const std::string& one :
       {log, read_fixture("392-aer-ghes-firmware-first-hardware-error-rtx3090-device-id-only",
                          "dmesg.log")}) {
    const auto base = messages(aer_events(one));
    for (const auto& [tag, text] : test::class_variants(one, dmesg))
      EXPECT_EQ(messages(aer_events(text)), base) << tag;
    const auto lines = lines_of(one);
    for (size_t keep = 1; keep <= lines.size(); ++keep) {
      std::string head;
      for (size_t i = 0; i < keep; ++i) head += lines[i] + "\n";
      EXPECT_LE(aer_events(head).size(), base.size()) << keep;
    }
  }
}

TEST(AerLayouts, NotEveryHardwareErrorLineIsARecord) {
  for (const char* body :
       {"mce: [Hardware Error]: Machine check events logged", "[Hardware Error]x: nothing",
        "{}[Hardware Error]: empty tag", "{12345678901}[Hardware Error]: tag too long"})
    EXPECT_FALSE(kmsg::parse_ghes_line(body)) << body;
  const auto l = kmsg::parse_ghes_line("{3}[Hardware Error]:   device_id: 0000:01:00.0");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->record, 3u);
  EXPECT_EQ(l->key, "device_id");
  EXPECT_EQ(l->value, "0000:01:00.0");
  // A record without a PCIe section (a memory error) is no PCIe report.
  EXPECT_TRUE(aer_events("[ 1.0] {1}[Hardware Error]: event severity: corrected\n"
                         "[ 1.0] {1}[Hardware Error]:  Error 0, type: corrected\n"
                         "[ 1.0] {1}[Hardware Error]:   section_type: memory error\n"
                         "[ 1.0] {1}[Hardware Error]:   physical_address: 0x0000001234\n")
                  .empty());
}

}  // namespace
}  // namespace gw
