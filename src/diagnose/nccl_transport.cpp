// NCCL_DEBUG=INFO transport choices judged on their own (AppMessageKind::kNcclTransport, one
// message per transport and input): NET/Socket carries the traffic over TCP through the
// kernel (a few GB/s per node) where InfiniBand/RoCE with GPUDirect RDMA gives tens to hundreds;
// the other transports are said affirmatively, with what they imply.
#include <fmt/format.h>

#include "diagnose/context.h"
#include "diagnose/rules.h"

namespace gw {

namespace {

std::vector<const AppMessage*> transports(const DiagnoseContext& c) {
  return app_messages_of(c, AppMessageKind::kNcclTransport);
}

std::string channel_lines(const AppMessage& m) {
  return fmt::format("{}: {} channel line(s) via {}, first: {}", m.origin, m.steps, m.detail,
                     m.text);
}

// What a transport other than Socket says, in the report's words.
std::string meaning(const AppMessage& m) {
  if (m.detail == "NET/IB")
    return m.text.find("GDRDMA") != std::string::npos
               ? "NET/IB with GPUDirect RDMA (the NIC reads GPU memory directly)"
               : "NET/IB without GPUDirect RDMA (data staged through host memory: check "
                 "nvidia-peermem and NCCL_NET_GDR_LEVEL)";
  if (m.detail == "P2P") return "P2P between GPUs of a node (NVLink or PCIe peer access)";
  if (m.detail == "SHM")
    return "SHM between GPUs of a node (through host memory: P2P is off or unavailable for "
           "these pairs)";
  return m.detail;
}

}  // namespace

void rule_nccl_transport_socket(const DiagnoseContext& c, Findings& out) {
  std::vector<std::string> ev;
  for (const AppMessage* m : transports(c))
    if (m->detail == "NET/Socket") ev.push_back(channel_lines(*m));
  if (ev.empty()) return;
  out.push_back(make_finding("nccl.transport_socket", Severity::kWarning, nullptr,
                             "NCCL sends inter-node traffic over TCP sockets (NET/Socket), not "
                             "InfiniBand/RoCE: a few GB/s per node instead of tens or hundreds",
                             std::move(ev)));
}

void rule_nccl_transport_info(const DiagnoseContext& c, Findings& out) {
  std::vector<std::string> ev, said;
  for (const AppMessage* m : transports(c)) {
    if (m->detail == "NET/Socket") continue;
    ev.push_back(channel_lines(*m));
    said.push_back(meaning(*m));
  }
  if (ev.empty()) return;
  std::string title = "NCCL transports: ";
  for (size_t i = 0; i < said.size(); ++i) title += (i ? "; " : "") + said[i];
  out.push_back(
      make_finding("nccl.transport", Severity::kInfo, nullptr, std::move(title), std::move(ev)));
}

}  // namespace gw
