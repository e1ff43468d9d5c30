// NCCL_DEBUG=INFO transport lines (issue 19): one kNcclTransport message per transport and
// input with its channel count, and the class transformations (cut, re-indented, CRLF, after
// another family, inside a bug report). Inputs: the training fixtures 211 and 213.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "fixture_util.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::lines_of;
using test::read_fixture;

const char* const kSocket = "211-nccl-info-ib-no-device-socket-inter-node";
const char* const kP2p = "213-nccl-info-p2p-direct-pointer-8-gpus";

// transport -> channel lines, over the input.
std::map<std::string, size_t> transports(const std::string& text) {
  Observation obs;
  add_capture(text, "app.log", obs);
  std::map<std::string, size_t> out;
  for (const AppMessage& m : obs.app_messages)
    if (m.kind == AppMessageKind::kNcclTransport) out[m.detail] += m.steps;
  return out;
}

TEST(NcclTransport, ChannelLinesCountedPerTransport) {
  const auto t = transports(read_fixture(kSocket, "app.log"));
  ASSERT_EQ(t.count("NET/Socket"), 1u);
  EXPECT_EQ(t.at("NET/Socket"), 2u);
  EXPECT_GT(t.at("P2P"), 0u);
  const auto p = transports(read_fixture(kP2p, "app.log"));
  EXPECT_EQ(p.count("NET/Socket"), 0u);
  EXPECT_GT(p.at("P2P"), 0u);
}

TEST(NcclTransport, TransportLinesAreRead) {
  Observation obs;
  add_capture(read_fixture(kSocket, "app.log"), "app.log", obs);
  for (const UnreadLine& u : obs.coverage.at(0).gpu_unread)
    EXPECT_EQ(u.excerpt.find(" via "), std::string::npos) << u.excerpt;
}

TEST(NcclTransport, ClassTransformationsKeepTheTransports) {
  const std::string log = read_fixture(kSocket, "app.log");
  const auto base = transports(log);
  std::string crlf, indented;
  for (const std::string& l : lines_of(log)) {
    crlf += l + "\r\n";
    indented += "   " + l + "\n";
  }
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  const std::string sep(44, '_');
  const std::vector<std::pair<std::string, std::string>> variants = {
      {"crlf", crlf},
      {"indented", indented},
      {"after-dmesg", dmesg + log},
      {"before-dmesg", log + dmesg},
      {"bug-report",
       sep + "\n\nmpirun ./all_reduce_perf\n\n" + log + sep + "\n\ndmesg:\n\n" + dmesg},
  };
  for (const auto& [tag, text] : variants) EXPECT_EQ(transports(text), base) << tag;
  // Cut at any line: the socket channels are counted while one is left.
  const auto lines = lines_of(log);
  for (size_t cut = 1; cut < lines.size(); ++cut) {
    std::string rest;
    size_t sockets = 0;
    for (size_t i = cut; i < lines.size(); ++i) {
      rest += lines[i] + "\n";
      if (lines[i].find("via NET/Socket") != std::string::npos) ++sockets;
    }
    const auto t = transports(rest);
    EXPECT_EQ(t.count("NET/Socket") ? t.at("NET/Socket") : 0u, sockets) << cut;
  }
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

// fact -> lines stating it, over the input (kNcclSetting).
std::map<std::string, size_t> nccl_settings(const std::string& text) {
  Observation obs;
  add_capture(text, "app.log", obs);
  std::map<std::string, size_t> out;
  for (const AppMessage& m : obs.app_messages)
    if (m.kind == AppMessageKind::kNcclSetting) out[m.detail] += m.steps;
  return out;
}

TEST(NcclSettings, WhatTheEnvironmentSetAndTheNetworkChosen) {
  // Capture 402: three knobs from the environment, the loopback socket, the Socket network.
  const auto s = nccl_settings(
      read_fixture("402-ncclinfo-dgx-ib-disabled-socket-ifname-lo-127001-maxbw-1.2", "app.log"));
  for (const char* want : {"NCCL_IBEXT_DISABLE=1", "NCCL_IB_DISABLE=1", "NCCL_SOCKET_IFNAME=lo",
                           "network=Socket", "socket interface=lo"})
    EXPECT_EQ(s.count(want), 1u) << want;
  // Capture 401: every host's "NET/Socket : Using [0]ens3:<its ip>" is one fact, counted.
  const auto aws = nccl_settings(
      read_fixture("401-ncclinfo-aws-64node-1gpu-ib-none-socket-ens3-nccl247", "app.log"));
  ASSERT_EQ(aws.count("socket interface=ens3"), 1u);
  EXPECT_GT(aws.at("socket interface=ens3"), 1u);
  EXPECT_EQ(aws.count("NET/IB: no device"), 1u);
}

TEST(NcclSettings, ClassTransformationsKeepTheSettings) {
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  for (const char* c : {"397-ncclinfo-2node-mixed-socket-vs-ib-net-mismatch-wrong-type",
                        "402-ncclinfo-dgx-ib-disabled-socket-ifname-lo-127001-maxbw-1.2"}) {
    const std::string log = read_fixture(c, "app.log");
    const auto base = nccl_settings(log);
    ASSERT_FALSE(base.empty()) << c;
    for (const auto& [tag, text] : test::class_variants(log, dmesg))
      EXPECT_EQ(nccl_settings(text), base) << c << " " << tag;
  }
}

}  // namespace
}  // namespace gw
