// NCCL_DEBUG=INFO configuration judged on its own (AppMessageKind::kNcclSetting, one message
// per fact and input): what the environment set, the network NCCL chose, whether it found an
// InfiniBand/RoCE device. Rules as data: each known setting with the values that cost bandwidth
// and what they cost; the rest is listed as configuration.
#include <fmt/format.h>

#include <array>

#include "diagnose/context.h"
#include "diagnose/rules.h"

namespace gw {

namespace {

struct CostlySetting {
  std::string_view name;                // "NCCL_P2P_DISABLE"
  std::array<std::string_view, 3> bad;  // values that cost ("" pads)
  std::string_view cost;                // what it costs, in the report's words
};

constexpr std::array kCostly = {
    CostlySetting{"NCCL_P2P_DISABLE",
                  {"1", "", ""},
                  "GPUs of one node exchange data through host memory (SHM) instead of NVLink or "
                  "PCIe peer-to-peer: a fraction of the bandwidth"},
    CostlySetting{"NCCL_IB_DISABLE",
                  {"1", "", ""},
                  "NCCL's InfiniBand/RoCE transport is off: between nodes it uses TCP sockets, a "
                  "few GB/s per node"},
    CostlySetting{"NCCL_SOCKET_IFNAME",
                  {"lo", "=lo", ""},
                  "the socket interface is the loopback: 127.0.0.1 is reachable from this host "
                  "only, so ranks on other nodes cannot connect"},
    CostlySetting{"NCCL_NET_GDR_LEVEL",
                  {"LOC", "0", ""},
                  "GPUDirect RDMA is off: network traffic is staged through host memory"},
};

// "NCCL_P2P_DISABLE=1" -> the cost, when the value is one that costs.
const CostlySetting* costly(std::string_view fact) {
  const size_t eq = fact.find('=');
  if (eq == std::string_view::npos) return nullptr;
  const std::string_view name = fact.substr(0, eq), value = fact.substr(eq + 1);
  for (const CostlySetting& c : kCostly)
    if (c.name == name)
      for (std::string_view b : c.bad)
        if (!b.empty() && b == value) return &c;
  return nullptr;
}

std::vector<const AppMessage*> settings(const DiagnoseContext& c) {
  return app_messages_of(c, AppMessageKind::kNcclSetting);
}

std::string fact_line(const AppMessage& m) {
  return fmt::format("{} ({} line(s), first {}: {})", m.detail, m.steps, m.origin, m.text);
}

// What a fact means when it costs nothing by itself.
std::string meaning(std::string_view fact) {
  if (fact == "NET/IB: no device")
    return "no InfiniBand/RoCE device found: between nodes NCCL would use TCP sockets (a "
           "single-node run does not need one)";
  if (fact.substr(0, 11) == "IB devices=")
    return "InfiniBand/RoCE devices NCCL uses between nodes: " + std::string(fact.substr(11));
  if (fact.substr(0, 11) == "NET plugin ")
    return std::string(fact) +
           " (NCCL found no usable device or library for it and uses the next network)";
  if (fact.substr(0, 8) == "network=")
    return "network transport for inter-node traffic: " + std::string(fact.substr(8));
  if (fact.substr(0, 17) == "socket interface=")
    return "socket (bootstrap) interface: " + std::string(fact.substr(17));
  return "set by the environment: " + std::string(fact);
}

}  // namespace

void rule_nccl_settings(const DiagnoseContext& c, Findings& out) {
  const auto ms = settings(c);
  if (ms.empty()) return;
  std::vector<std::string> ev, costs, facts;
  for (const AppMessage* m : ms) {
    if (m->detail.substr(0, 8) == "network=") continue;  // said by nccl.network_mismatch too
    if (const CostlySetting* k = costly(m->detail))
      costs.push_back(fmt::format("{}: {}", m->detail, k->cost));
    else
      facts.push_back(meaning(m->detail));
    ev.push_back(fact_line(*m));
  }
  for (const AppMessage* m : ms)
    if (m->detail.substr(0, 8) == "network=") {
      facts.push_back(meaning(m->detail));
      ev.push_back(fact_line(*m));
    }
  for (std::string& f : facts) ev.push_back(std::move(f));
  std::string title;
  if (!costs.empty()) {
    title = "NCCL runs with settings that cost bandwidth: " + costs.front();
    for (size_t i = 1; i < costs.size(); ++i) ev.insert(ev.begin(), costs[i]);
  } else {
    title = fmt::format("NCCL configuration: {} fact(s) read, none that costs bandwidth by itself",
                        ms.size());
  }
  out.push_back(make_finding("nccl.settings", costs.empty() ? Severity::kInfo : Severity::kWarning,
                             nullptr, std::move(title), std::move(ev)));
}

void rule_nccl_network_mismatch(const DiagnoseContext& c, Findings& out) {
  std::vector<const AppMessage*> nets;
  for (const AppMessage* m : settings(c))
    if (m->detail.substr(0, 8) == "network=") nets.push_back(m);
  if (nets.size() < 2) return;
  std::vector<std::string> ev;
  std::string names;
  for (const AppMessage* m : nets) {
    ev.push_back(fact_line(*m));
    names += (names.empty() ? "" : " and ") + m->detail.substr(8);
  }
  ev.push_back(
      "every rank must use the same network transport: ranks on IB cannot connect to ranks on "
      "Socket (NCCL's 'wrong type' warnings, a hang or an error at the first inter-node "
      "collective)");
  out.push_back(make_finding("nccl.network_mismatch", Severity::kWarning, nullptr,
                             "NCCL ranks chose different networks: " + names, std::move(ev)));
}

}  // namespace gw
