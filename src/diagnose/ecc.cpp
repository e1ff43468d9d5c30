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
// NVIDIA's SRAM RMA policy counts more than 4 unique uncorrectable events in one address bank
// of parity-protected SRAM (the driver raises "SRAM Threshold Exceeded" then). Without that
// flag only the aggregate count is known, so more than 4 of them is the same line, read as a
// candidate to confirm with DCGM, not as proof.
constexpr uint64_t kSramRmaCount = 4;

// "1 (SRAM 1, DRAM 0)" where the driver splits SRAM from DRAM, else "1".
std::string split_of(uint64_t total, const std::optional<uint64_t>& sram) {
  if (!sram || *sram > total) return fmt::format("{}", total);
  return fmt::format("{} (SRAM {}, DRAM {})", total, *sram, total - *sram);
}

}  // namespace

void rule_ecc_dbe_volatile(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    if (g.samples.empty()) continue;
    const auto& dbe = g.last()->ecc_dbe_volatile;
    if (!dbe || *dbe == 0) continue;
    const GpuSample& s = *g.last();
    std::vector<std::string> ev{
        fmt::format("{} uncorrectable ECC error(s) since the last driver load",
                    split_of(*dbe, s.ecc_sram_uncorrectable_volatile))};
    if (const auto& agg = s.ecc_dbe_aggregate)
      ev.push_back(fmt::format("{} lifetime", split_of(*agg, s.ecc_sram_uncorrectable_aggregate)));
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

// Lifetime (aggregate) uncorrectable errors say whether the fault recurs: SRAM ones have no
// remap or retirement behind them, so past NVIDIA's SRAM threshold the GPU is an RMA case;
// DRAM ones are what retirement and remapping handle (rules above), so a recurring count is a
// warning to watch, not an RMA call.
void rule_ecc_uncorrectable_lifetime(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    if (g.samples.empty()) continue;
    const GpuSample& s = *g.last();
    const uint64_t agg = s.ecc_dbe_aggregate.value_or(0);
    const uint64_t sram = s.ecc_sram_uncorrectable_aggregate.value_or(0);
    const bool flag = s.ecc_sram_threshold_exceeded.value_or(false);
    const uint64_t vol = s.ecc_dbe_volatile.value_or(0);
    // dmon gives only the aggregate: how many are recent is then not known.
    std::vector<std::string> ev{fmt::format(
        "{} uncorrectable ECC error(s) over the GPU's life (aggregate), {} since the last driver "
        "load",
        split_of(agg, s.ecc_sram_uncorrectable_aggregate),
        s.ecc_dbe_volatile ? std::to_string(vol) : std::string("unknown how many"))};
    if (flag || sram > kSramRmaCount) {
      ev.push_back(flag ? std::string("the driver reports SRAM Threshold Exceeded: Yes")
                        : fmt::format("more than {} SRAM uncorrectable errors: NVIDIA's SRAM "
                                      "replacement line (it counts unique errors per address bank)",
                                      kSramRmaCount));
      out.push_back(make_finding(
          "ecc.uncorrectable_lifetime", flag ? Severity::kCritical : Severity::kWarning, &g,
          sram > 0 ? fmt::format(
                         "{} has had {} uncorrectable SRAM errors: a replacement (RMA) candidate",
                         gpu_label(g), sram)
                   : gpu_label(g) + " is past the driver's SRAM error threshold: replace (RMA) it",
          std::move(ev),
          flag ? "Drain the GPU and open a replacement (RMA) case; attach nvidia-bug-report.sh "
                 "and the DCGM diagnostic (dcgmi diag -r 3) results."
               : "Reset the GPU (nvidia-smi -r) and run DCGM diagnostics (dcgmi diag -r 3); "
                 "if the errors return or the SRAM Threshold Exceeded flag turns Yes, replace "
                 "(RMA) the GPU."));
      continue;
    }
    // DRAM, or a driver without the split: recurring when the lifetime count exceeds this
    // session's, which the page-retirement and row-remap counters then account for.
    if (agg == 0 || agg <= vol) continue;
    ev.push_back(s.ecc_dbe_volatile
                     ? "uncorrectable errors in earlier driver sessions too (the fault recurs)"
                     : "check whether they are recent: nvidia-smi -q -d ECC gives the count since "
                       "the driver load");
    out.push_back(make_finding(
        "ecc.uncorrectable_lifetime", Severity::kWarning, &g,
        gpu_label(g) + (s.ecc_dbe_volatile ? " has had uncorrectable memory errors before"
                                           : " has had uncorrectable memory errors over its life"),
        std::move(ev),
        "Run DCGM diagnostics (dcgmi diag -r 3) and watch retired pages / remapped rows; replace "
        "(RMA) the GPU if uncorrectable errors keep returning."));
  }
}

}  // namespace gw
