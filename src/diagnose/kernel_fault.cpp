// Kernel fault reports whose code is in an NVIDIA module (DriverMessageKind::kKernelFault and
// kKernelWarning, read by sources/kmsg/kernel_fault.h): the driver crashed inside the kernel,
// or the kernel warned about it and went on. Each event's message is "header | site | line".
#include <fmt/format.h>

#include <set>

#include "diagnose/context.h"
#include "diagnose/driver_groups.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

using K = DriverMessageKind;

struct Report {
  std::string header, site, line;
};

Report split(const std::string& message) {
  Report r;
  const size_t a = message.find(" | ");
  const size_t b = a == std::string::npos ? a : message.find(" | ", a + 3);
  if (b == std::string::npos) {
    r.line = message;
    return r;
  }
  r.header = message.substr(0, a);
  r.site = message.substr(a + 3, b - a - 3);
  r.line = message.substr(b + 3);
  return r;
}

// What the group's reports say: their distinct sites and tasks, and whether any has its
// header (a cut paste may begin at the RIP line).
struct Summary {
  std::vector<std::string> evidence;
  std::string first_header, first_site;
  bool headed = false;
};

Summary summarize(const DriverGroup& g) {
  Summary s;
  std::set<std::string> sites, tasks;
  for (const Event* e : g.events) {
    const Report r = split(e->message);
    if (!r.header.empty() && !s.headed) {
      s.headed = true;
      s.first_header = r.header;
    }
    if (s.first_site.empty()) s.first_site = r.site;
    if (!r.site.empty()) sites.insert(r.site);
    if (e->process_name)
      tasks.insert(*e->process_name + (e->pid ? fmt::format(" (pid {})", *e->pid) : ""));
  }
  s.evidence.push_back(g.total > 1 ? fmt::format("{} report(s), first {}, last {}", g.total,
                                                 event_when(*g.events.front()),
                                                 event_when(*g.events.back()))
                                   : "at " + event_when(*g.events.front()));
  if (s.headed) s.evidence.push_back("kernel: " + s.first_header);
  for (const std::string& site : sites) s.evidence.push_back("in " + site);
  for (const std::string& t : tasks) s.evidence.push_back("task: " + t);
  s.evidence.push_back("log: " + split(g.events.front()->message).line.substr(0, 200));
  return s;
}

}  // namespace

void rule_driver_kernel_fault(const DiagnoseContext& c, Findings& out) {
  if (!any_driver_event(c, K::kKernelFault)) return;
  const DriverGpuMap m = driver_gpu_map(c);
  for (const DriverGroup& g : driver_groups(c, m, K::kKernelFault)) {
    Summary s = summarize(g);
    const std::string where = s.first_site.empty() ? "the NVIDIA driver" : s.first_site;
    if (!s.headed) {
      s.evidence.push_back(
          "the start of the report (BUG:, Oops:, WARNING:) is not in the input: whether the "
          "kernel went on is not known");
      out.push_back(make_driver_finding(
          "driver.kernel_fault", Severity::kWarning, g,
          fmt::format("Kernel fault report with its instruction pointer in {}", where),
          std::move(s.evidence),
          "Find the whole report in the kernel log (dmesg or journalctl -k, from the BUG:/Oops:/"
          "WARNING: line to '---[ end trace'): an Oops or BUG means the driver crashed; then "
          "drain the node, reboot and update the driver as for a crash."));
      continue;
    }
    out.push_back(make_driver_finding(
        "driver.kernel_fault", Severity::kCritical, g,
        fmt::format("The NVIDIA driver crashed in the kernel: {} in {}",
                    s.first_header.substr(0, 80), where),
        std::move(s.evidence),
        fmt::format("The driver is in an undefined state after a fault in its own code: GPU "
                    "work on this host may hang or fail until a reboot. Drain the node and "
                    "reboot. A fault in the driver is a driver bug: update to the newest driver "
                    "of the branch (look for {} in the release notes and the driver's issue "
                    "tracker), and if it persists send the whole report (from the BUG:/Oops: "
                    "line to '---[ end trace') with nvidia-bug-report.sh to NVIDIA.",
                    s.first_site.empty() ? std::string("the function") : s.first_site)));
  }
}

void rule_driver_kernel_warning(const DiagnoseContext& c, Findings& out) {
  if (!any_driver_event(c, K::kKernelWarning)) return;
  const DriverGpuMap m = driver_gpu_map(c);
  for (const DriverGroup& g : driver_groups(c, m, K::kKernelWarning)) {
    Summary s = summarize(g);
    const Report first = split(g.events.front()->message);
    const std::string what = s.headed ? s.first_header : first.line;
    s.evidence.push_back("a warning: the kernel went on, and the driver with it");
    out.push_back(make_driver_finding(
        "driver.kernel_warning", Severity::kWarning, g,
        fmt::format("The kernel warned about the NVIDIA driver: {}", what.substr(0, 100)),
        std::move(s.evidence),
        "Not a crash. If GPU work failed around that time, update the driver (the warning is "
        "a driver bug, often fixed in a later release of the branch); otherwise report it to "
        "NVIDIA with the trace. A kernel built with sanitizers (UBSAN) reports what a normal "
        "build would not."));
  }
}

}  // namespace gw
