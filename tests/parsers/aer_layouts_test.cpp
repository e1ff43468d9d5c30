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

}  // namespace
}  // namespace gw
