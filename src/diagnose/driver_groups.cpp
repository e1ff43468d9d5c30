#include "diagnose/driver_groups.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "diagnose/context.h"

namespace gw {

std::string DriverGroup::who() const {
  return gpu_words(gpu, pci_bus_id, driver_gpu);
}

std::vector<std::string> DriverGroup::summary() const {
  std::vector<std::string> out;
  const Event& first = *events.front();
  if (total > 1)
    out.push_back(fmt::format("{} line(s), first {}, last {}", total, event_when(first),
                              event_when(*events.back())));
  else
    out.push_back("at " + event_when(first));
  out.push_back("log: " + first.message.substr(0, 200));
  return out;
}

bool any_driver_event(const DiagnoseContext& c, DriverMessageKind kind) {
  return std::any_of(c.obs.events.begin(), c.obs.events.end(), [kind](const Event& e) {
    return e.kind == EventKind::kDriverMessage && e.driver_kind == kind;
  });
}

std::vector<DriverGroup> driver_groups(const DiagnoseContext& c, const DriverGpuMap& m,
                                       DriverMessageKind kind) {
  std::vector<DriverGroup> out;
  std::map<std::string, size_t> by_key;
  for (const Event& e : c.obs.events) {
    if (e.kind != EventKind::kDriverMessage || e.driver_kind != kind) continue;
    const std::string key = gpu_key(c, e, m);
    auto [it, fresh] = by_key.try_emplace(key, out.size());
    if (fresh) {
      DriverGroup g;
      g.kind = kind;
      g.key = key;
      g.pci_bus_id = normalise_event_pci(e.pci_bus_id);
      if (!g.pci_bus_id && e.driver_gpu) {
        if (auto p = m.find(*e.driver_gpu); p != m.end()) g.pci_bus_id = p->second;
      }
      g.gpu = e.gpu_index;
      if (!g.gpu && g.pci_bus_id) g.gpu = c.gpu_by_pci(*g.pci_bus_id);
      if (!g.pci_bus_id) g.driver_gpu = e.driver_gpu;
      out.push_back(std::move(g));
    }
    out[it->second].events.push_back(&e);
  }
  for (DriverGroup& g : out) {
    g.total = g.events.size();
    for (const EventCount& n : c.obs.event_counts) {
      if (n.kind != EventKind::kDriverMessage || n.code != static_cast<unsigned>(kind)) continue;
      if (normalise_event_pci(n.pci_bus_id) != normalise_event_pci(g.events.front()->pci_bus_id))
        continue;
      if (n.count > g.total) g.total = n.count;
    }
  }
  return out;
}

Finding make_driver_finding(std::string code, Severity sev, const DriverGroup& g, std::string title,
                            std::vector<std::string> evidence, std::string remedy) {
  Finding f;
  f.code = std::move(code);
  f.severity = sev;
  f.gpu = g.gpu;
  f.pci_bus_id = g.pci_bus_id;
  f.title = std::move(title);
  f.evidence = std::move(evidence);
  f.remedy = std::move(remedy);
  return f;
}

}  // namespace gw
