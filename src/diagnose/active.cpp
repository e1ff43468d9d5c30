// Rules over what doctor --stress measured (Observation::active): the measurement is the
// evidence. The NVML samples taken during the load are judged by every other rule too, with
// the load now known.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "diagnose/context.h"
#include "diagnose/figures.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

// What the link can carry per direction at its best (the GPU's and slot's maximum).
std::optional<double> link_should_carry(const ActiveGpu& a) {
  if (!a.max_gen || !a.max_width) return std::nullopt;
  const double v = pcie_lane_gb_s(*a.max_gen) * *a.max_width;
  return v > 0 ? std::optional(v) : std::nullopt;
}

Finding gpu_finding(const DiagnoseContext& c, std::string_view code, Severity sev, unsigned gpu,
                    std::string title, std::vector<std::string> evidence) {
  if (const GpuSeries* g = c.gpu(gpu))
    return make_finding(code, sev, g, std::move(title), std::move(evidence));
  Finding f = make_finding(code, sev, nullptr, std::move(title), std::move(evidence));
  f.gpu = gpu;
  return f;
}

std::string copies_text(const ActiveGpu& a) {
  std::string s = fmt::format("host-to-device {:.1f} GB/s", a.h2d_gb_s.value_or(0));
  if (a.d2h_gb_s) s += fmt::format(", device-to-host {:.1f} GB/s", *a.d2h_gb_s);
  if (a.bidir_gb_s) s += fmt::format(", both at once {:.1f} GB/s", *a.bidir_gb_s);
  return s + " (pinned memory)";
}

bool below_link(const ActiveGpu& a) {
  const auto should = link_should_carry(a);
  const double worst = std::min(a.h2d_gb_s.value_or(1e9), a.d2h_gb_s.value_or(1e9));
  return should && (a.h2d_gb_s || a.d2h_gb_s) && worst < 0.6 * *should;
}

}  // namespace

void rule_active_copy_below_link(const DiagnoseContext& c, Findings& out) {
  if (!c.obs.active) return;
  for (const ActiveGpu& a : c.obs.active->gpus) {
    if (!below_link(a)) continue;
    const double should = *link_should_carry(a);
    std::vector<std::string> ev{copies_text(a),
                                fmt::format("a Gen{} x{} link should carry about {:.1f} GB/s per "
                                            "direction; copies normally reach 80-90% of that",
                                            *a.max_gen, *a.max_width, should)};
    if (a.link_gen && a.link_width && (*a.link_gen < *a.max_gen || *a.link_width < *a.max_width))
      ev.push_back(
          fmt::format("the link ran at Gen{} x{} (about {:.1f} GB/s) right after the "
                      "copies: it trained below its Gen{} x{}",
                      *a.link_gen, *a.link_width, pcie_lane_gb_s(*a.link_gen) * *a.link_width,
                      *a.max_gen, *a.max_width));
    else if (a.link_gen && a.link_width)
      ev.push_back(
          fmt::format("the link reads Gen{} x{}, so the loss is past the link: IOMMU, "
                      "a shared PCIe switch or the host memory's NUMA node",
                      *a.link_gen, *a.link_width));
    const double worst = std::min(a.h2d_gb_s.value_or(1e9), a.d2h_gb_s.value_or(1e9));
    out.push_back(gpu_finding(
        c, "active.copy_below_link", Severity::kWarning, a.gpu,
        fmt::format("{} {:.1f} GB/s, a Gen{} x{} link should carry about {:.0f}: check the slot",
                    worst == a.h2d_gb_s.value_or(-1) ? "host-to-device" : "device-to-host", worst,
                    *a.max_gen, *a.max_width, should),
        std::move(ev)));
  }
}

void rule_active_copy_below_peers(const DiagnoseContext& c, Findings& out) {
  if (!c.obs.active) return;
  std::map<std::string, std::vector<const ActiveGpu*>> by_model;
  for (const ActiveGpu& a : c.obs.active->gpus)
    if (a.h2d_gb_s) by_model[a.name].push_back(&a);
  for (const auto& [model, gpus] : by_model) {
    if (gpus.size() < 3) continue;
    for (const ActiveGpu* a : gpus) {
      if (below_link(*a)) continue;  // already said, with the link as the cause
      std::vector<double> others;
      for (const ActiveGpu* o : gpus)
        if (o != a) others.push_back(*o->h2d_gb_s);
      const double m = median(others);
      if (!(*a->h2d_gb_s < 0.75 * m)) continue;
      const auto [lo, hi] = std::minmax_element(others.begin(), others.end());
      out.push_back(gpu_finding(
          c, "active.copy_below_peers", Severity::kWarning, a->gpu,
          fmt::format("host-to-device {:.1f} GB/s, the other {} {} carry {:.1f}-{:.1f}",
                      *a->h2d_gb_s, others.size(), model, *lo, *hi),
          {copies_text(*a), fmt::format("median of the other {}: {:.1f} GB/s", model, m)}));
    }
  }
}

// What a missing peer access means on each kind of path (ActivePeer::expected): over NVLink it is
// a fault; under PCIe switches P2P normally works, so ACS or the IOMMU is redirecting it; through
// host bridges and across CPUs many platforms do not route it at all.
struct PeerPath {
  std::string_view expected;
  Severity severity;
  std::string_view title;  // after "no peer access"
  std::string_view why;
};
constexpr PeerPath kPeerPaths[] = {
    {"NVLink", Severity::kCritical, " although NVLink connects them",
     "both GPUs have active NVLinks: the path should be NVLink"},
    {"PIX", Severity::kWarning, " under one PCIe switch (PIX)",
     "topology PIX: the GPUs share one PCIe switch, where peer-to-peer normally works; PCIe ACS "
     "or the IOMMU is probably sending it up to the CPU (check `lspci -vvv` for ACSCtl "
     "SrcValid+, and iommu=pt)"},
    {"PXB", Severity::kWarning, " under PCIe switches (PXB)",
     "topology PXB: the GPUs share PCIe switches below the CPU, where peer-to-peer normally works; "
     "PCIe ACS or the IOMMU is probably sending it up to the CPU (check `lspci -vvv` for ACSCtl "
     "SrcValid+, and iommu=pt)"},
    {"PHB", Severity::kInfo, " through the PCIe host bridge (PHB)",
     "topology PHB: the path crosses the CPU's PCIe host bridge; many platforms do not route "
     "peer-to-peer there"},
    {"NODE", Severity::kInfo, " between host bridges (NODE)",
     "topology NODE: the path crosses host bridges of one NUMA node; many platforms do not route "
     "peer-to-peer there"},
    {"SYS", Severity::kInfo, " across CPU sockets (SYS)",
     "topology SYS: the path crosses the interconnect between CPU sockets; peer-to-peer is "
     "rarely supported there"},
};

const PeerPath& peer_path(const std::string& expected) {
  static constexpr PeerPath kUnknown{"PCIe", Severity::kInfo, " over PCIe",
                                     "the GPUs talk over PCIe (no NVLink between them)"};
  for (const PeerPath& p : kPeerPaths)
    if (p.expected == expected) return p;
  return kUnknown;
}

void rule_active_peer_access(const DiagnoseContext& c, Findings& out) {
  if (!c.obs.active) return;
  for (const ActivePeer& p : c.obs.active->peers) {
    if (p.access || p.error) continue;
    const PeerPath& path = peer_path(p.expected);
    std::vector<std::string> ev{
        fmt::format("cuDeviceCanAccessPeer / cuCtxEnablePeerAccess: no peer access from GPU {} "
                    "to GPU {}",
                    p.a, p.b)};
    if (p.gb_s)
      ev.push_back(fmt::format("copies went through host memory at {:.1f} GB/s", *p.gb_s));
    ev.emplace_back(path.why);
    out.push_back(gpu_finding(
        c, "active.peer_access_missing", path.severity, p.a,
        fmt::format("GPU {} and GPU {}: no peer access{}", p.a, p.b, path.title), std::move(ev)));
  }
}

void rule_active_peer_slow(const DiagnoseContext& c, Findings& out) {
  if (!c.obs.active) return;
  std::map<std::string, std::vector<const ActivePeer*>> by_path;
  for (const ActivePeer& p : c.obs.active->peers)
    if (p.access && p.gb_s) by_path[p.expected].push_back(&p);
  for (const auto& [path, pairs] : by_path) {
    if (pairs.size() < 3) continue;
    std::vector<double> all;
    for (const ActivePeer* p : pairs) all.push_back(*p->gb_s);
    const double m = median(all);
    for (const ActivePeer* p : pairs) {
      if (!(*p->gb_s < 0.5 * m)) continue;
      out.push_back(gpu_finding(
          c, "active.peer_slow", Severity::kWarning, p->a,
          fmt::format("GPU {} to GPU {}: {:.1f} GB/s, other {} pairs carry about {:.0f}", p->a,
                      p->b, *p->gb_s, path, m),
          {fmt::format("peer copies GPU {} -> GPU {}: {:.1f} GB/s", p->a, p->b, *p->gb_s),
           fmt::format("median of the {} {} pairs measured: {:.1f} GB/s", pairs.size(), path, m)}));
    }
  }
}

}  // namespace gw
