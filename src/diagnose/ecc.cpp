// Memory-health rules: uncorrectable ECC errors, page retirement limits and pending
// retirements, row remapping pending (reset needed) and failed (replace the GPU).
// Lifetime corrected (single-bit) errors alone are history, not a fault (fixture 023).
#include <fmt/format.h>

#include "diagnose/context.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

// DCGM's page-retirement policy: a GPU with 64 retired pages has used up its retirement
// budget (>= 63 is the RMA line), and more than 15 double-bit retirements (at a rate above one a
// week) also qualifies for replacement.
constexpr unsigned kRetiredPagesLimit = 63;
constexpr unsigned kRetiredDbeLimit = 15;
constexpr double kWeekS = 7.0 * 24 * 3600;

}  // namespace

void rule_ecc_dbe_volatile(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    if (g.samples.empty()) continue;
    const auto& dbe = g.last()->ecc_dbe_volatile;
    if (!dbe || *dbe == 0) continue;
    std::vector<std::string> ev{
        fmt::format("{} uncorrectable (double-bit) ECC error(s) since the last driver load", *dbe)};
    if (const auto& agg = g.last()->ecc_dbe_aggregate)
      ev.push_back(fmt::format("{} lifetime", *agg));
    out.push_back(make_finding("ecc.dbe_volatile", Severity::kCritical, &g,
                               fmt::format("{} had uncorrectable memory errors", gpu_label(g)),
                               std::move(ev)));
  }
}

void rule_ecc_retired_pages_limit(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    if (g.samples.empty()) continue;
    const GpuSample& s = *g.last();
    if (!s.retired_pages_sbe && !s.retired_pages_dbe) continue;
    const unsigned sbe = s.retired_pages_sbe.value_or(0);
    const unsigned dbe = s.retired_pages_dbe.value_or(0);
    const unsigned total = sbe + dbe;
    // The DBE rate is visible only when the window shows retirements arriving.
    const auto first_dbe = g.samples.front()->retired_pages_dbe.value_or(dbe);
    const double win = window_s(g);
    const bool fast =
        win > 0 && dbe > first_dbe && static_cast<double>(dbe - first_dbe) * kWeekS / win > 1.0;
    std::vector<std::string> ev{
        fmt::format("{} retired pages ({} single-bit, {} double-bit)", total, sbe, dbe)};
    if (total >= kRetiredPagesLimit) {
      ev.push_back(fmt::format("limit {} pages reached", kRetiredPagesLimit));
    } else if (dbe > kRetiredDbeLimit) {
      ev.push_back(fmt::format("more than {} double-bit retirements{}", kRetiredDbeLimit,
                               fast ? ", still rising faster than one a week"
                                    : "; the rate (more than one a week means replace) is not "
                                      "visible in this window"));
    } else {
      continue;
    }
    const bool replace = total >= kRetiredPagesLimit || fast;
    out.push_back(make_finding(
        "ecc.retired_pages_limit", replace ? Severity::kCritical : Severity::kWarning, &g,
        fmt::format("{} has retired {} memory pages", gpu_label(g), total), std::move(ev)));
  }
}

void rule_ecc_retirement_pending(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    if (g.samples.empty() || !g.last()->retired_pages_pending.value_or(false)) continue;
    out.push_back(
        make_finding("ecc.retirement_pending", Severity::kWarning, &g,
                     fmt::format("{} has a memory page waiting to be retired", gpu_label(g)),
                     {"pending page retirement: Yes (takes effect at the next driver reload)"}));
  }
}

void rule_ecc_row_remap_pending(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    if (g.samples.empty()) continue;
    const GpuSample& s = *g.last();
    if (!s.remapped_rows_pending.value_or(false)) continue;
    std::vector<std::string> ev{"row remapping pending: Yes"};
    if (s.remapped_rows_uncorrectable)
      ev.push_back(fmt::format("{} row(s) remapped for uncorrectable errors, {} for correctable",
                               *s.remapped_rows_uncorrectable,
                               s.remapped_rows_correctable.value_or(0)));
    if (s.remapped_rows_failure == false) ev.push_back("no remapping failure: not an RMA case yet");
    out.push_back(
        make_finding("ecc.row_remap_pending", Severity::kWarning, &g,
                     fmt::format("{} needs a reset to activate a memory row remap", gpu_label(g)),
                     std::move(ev)));
  }
}

void rule_ecc_row_remap_failure(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    if (g.samples.empty() || !g.last()->remapped_rows_failure.value_or(false)) continue;
    out.push_back(make_finding(
        "ecc.row_remap_failure", Severity::kCritical, &g,
        fmt::format("{} ran out of spare memory rows (row remapping failed)", gpu_label(g)),
        {"remapping failure occurred: Yes"}));
  }
}

}  // namespace gw
