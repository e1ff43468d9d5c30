// Rules over what DCGM's tools said (gw::DcgmResult): diag failures, warnings and skipped
// tests per GPU, health incidents, NVLink links down, Xids read by dcgmi dmon. Where another
// part of the capture said all was well (a health report "Healthy", a diag table without a
// failure), the fault still wins and its evidence says which part said what.
#include <fmt/format.h>

#include <map>

#include "diagnose/context.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

std::string gpu_name(const std::optional<unsigned>& g) {
  return g ? fmt::format("GPU {}", *g) : std::string("every GPU");
}

// The parts that said nothing was wrong: kept as evidence beside a fault.
void fault_wins_evidence(const DiagnoseContext& c, Finding& f) {
  gw::all_clear_evidence(c.obs, std::nullopt, "the fault above wins", f);
}

// A result the input repeats (a looped diagnostic): said once, with its count.
void copies_evidence(const DcgmResult& r, Finding& f) {
  if (auto t = copies_text(r.copies, "result")) f.evidence.push_back(std::move(*t));
}

Finding base(const DcgmResult& r, std::string code, Severity s) {
  Finding f;
  f.code = std::move(code);
  f.severity = s;
  f.gpu = r.gpu;
  return f;
}

void diag_results(const DiagnoseContext& c, Findings& out, DcgmKind kind, const char* code,
                  Severity sev, const char* verb, const char* remedy) {
  for (const DcgmResult& r : c.obs.dcgm) {
    if (r.kind != kind) continue;
    Finding f = base(r, code, sev);
    f.title = fmt::format("DCGM diagnostic '{}' {} on {}", r.test, verb, gpu_name(r.gpu));
    if (!r.text.empty()) f.evidence.push_back(fmt::format("dcgmi says: {}", r.text));
    f.evidence.push_back(fmt::format("{} result at {}", r.part, r.origin));
    copies_evidence(r, f);
    if (kind != DcgmKind::kDiagSkip) fault_wins_evidence(c, f);
    f.remedy = remedy;
    out.push_back(std::move(f));
  }
}

}  // namespace

void rule_dcgm_diag_fail(const DiagnoseContext& c, Findings& out) {
  diag_results(c, out, DcgmKind::kDiagFail, "dcgm.diag_fail", Severity::kCritical, "failed",
               "Act on dcgmi's text: drain the GPU, check the kernel log for Xids on it, reset "
               "it and rerun `dcgmi diag -r 3`; a repeated hardware failure is an RMA case.");
}

void rule_dcgm_diag_warn(const DiagnoseContext& c, Findings& out) {
  diag_results(c, out, DcgmKind::kDiagWarn, "dcgm.diag_warn", Severity::kWarning, "warned",
               "Read dcgmi's text and fix what it names (cooling, clocks, configuration), then "
               "rerun the diagnostic.");
}

void rule_dcgm_diag_skip(const DiagnoseContext& c, Findings& out) {
  diag_results(c, out, DcgmKind::kDiagSkip, "dcgm.diag_skipped", Severity::kInfo, "was skipped",
               "A skipped test says nothing about the GPU: check DCGM's test configuration "
               "(diag-skus.yaml, is_allowed) and rerun it before trusting the GPU.");
}

namespace {
bool links_down_incident(const DcgmResult& r) {
  return (r.test.find("NVLINK") != std::string::npos ||
          r.test.find("NVLink") != std::string::npos) &&
         r.text.find("is currently down") != std::string::npos;
}
}  // namespace

void rule_dcgm_health(const DiagnoseContext& c, Findings& out) {
  for (const DcgmResult& r : c.obs.dcgm) {
    if (r.kind != DcgmKind::kHealth) continue;
    const bool failure =
        r.level.find("ail") != std::string::npos || r.level.find("AIL") != std::string::npos;
    Finding f = base(r, "dcgm.health", failure ? Severity::kCritical : Severity::kWarning);
    f.title = fmt::format("DCGM health {}{} on {}", r.level, r.test.empty() ? "" : " in " + r.test,
                          gpu_name(r.gpu));
    f.evidence.push_back(fmt::format("{} at {}: {}", r.part, r.origin, r.text));
    copies_evidence(r, f);
    if (links_down_incident(r))
      f.evidence.push_back(
          "DCGM's NVLink watch reports the links of a GPU that has none in use as down too (a "
          "PCIe card without an NVLink bridge): check nvidia-smi nvlink -s and the product "
          "before treating this as a link fault");
    f.remedy = r.test == "Thermal"
                   ? "Check the cooling of that GPU: fans present and spinning, airflow, "
                     "thermal paste; watch its clock event reasons."
                   : "Follow the health system named: check the kernel log and nvidia-smi -q "
                     "for that GPU.";
    if (r.test.find("IMEX") != std::string::npos || r.text.find("IMEX") != std::string::npos)
      f.remedy =
          "The IMEX daemon (nvidia-imex) is not ready on this node: multi-node NVLink jobs "
          "(ComputeDomains, NVL72 racks) cannot share GPU memory across nodes until it runs. On "
          "a node that runs no such job this is expected; otherwise check systemctl status "
          "nvidia-imex, its node list (nodes_config.cfg) and the fabric manager.";
    out.push_back(std::move(f));
  }
}

void rule_dcgm_nvlink_down(const DiagnoseContext& c, Findings& out) {
  for (const DcgmResult& r : c.obs.dcgm) {
    if (r.kind != DcgmKind::kNvlinkDown) continue;
    Finding f = base(r, "dcgm.nvlink_down", Severity::kCritical);
    f.title = r.of > 0
                  ? fmt::format("NVLink: {} of {} links down on {}", r.count, r.of, gpu_name(r.gpu))
                  : fmt::format("NVLink: every link down on {}", gpu_name(r.gpu));
    f.evidence.push_back(fmt::format("{} at {}: {}", r.part, r.origin, r.text));
    f.evidence.push_back(
        "GPU-to-GPU traffic falls back to PCIe (NCCL P2P over PCIe or through the host): "
        "collectives lose most of their bandwidth");
    fault_wins_evidence(c, f);
    f.remedy =
        "Check the NVLink bridges or baseboard and the fabric manager (NVSwitch "
        "systems); `nvidia-smi nvlink -s` and `-e` per link; reset the GPUs, and if the "
        "links stay down, file it with the vendor.";
    out.push_back(std::move(f));
  }
}

void rule_dcgm_xid(const DiagnoseContext& c, Findings& out) {
  for (const DcgmResult& r : c.obs.dcgm) {
    if (r.kind != DcgmKind::kXid) continue;
    Finding f = base(r, "dcgm.xid", Severity::kCritical);
    f.title = fmt::format("DCGM reads Xid {} on {}", r.count, gpu_name(r.gpu));
    f.evidence.push_back(fmt::format("{} field XIDER at {}: {}", r.part, r.origin, r.text));
    copies_evidence(r, f);
    fault_wins_evidence(c, f);
    f.remedy =
        "Look the Xid up (the kernel log has its text); for GSP (119/120) or "
        "uncontained errors, drain the GPU and reset it.";
    out.push_back(std::move(f));
  }
}

}  // namespace gw
