#include "sources/smi/smi_csv_plan.h"

namespace gw::smi {

namespace {

using F = CsvField;
using S = GpuSample;

FastColumn unsigned_col(std::optional<unsigned> S::*slot) {
  FastColumn c;
  c.op = FastOp::kUnsigned;
  c.u = slot;
  return c;
}
FastColumn u64_col(FastOp op, std::optional<uint64_t> S::*slot) {
  FastColumn c;
  c.op = op;
  c.u64 = slot;
  return c;
}
FastColumn int_col(std::optional<int> S::*slot) {
  FastColumn c;
  c.op = FastOp::kInt;
  c.i = slot;
  return c;
}
FastColumn watts_col(std::optional<uint32_t> S::*slot) {
  FastColumn c;
  c.op = FastOp::kWatts;
  c.w = slot;
  return c;
}
FastColumn bool_col(std::optional<bool> S::*slot) {
  FastColumn c;
  c.op = FastOp::kBool;
  c.b = slot;
  return c;
}

// The sample slot a column writes, when it writes exactly one with a value parsed from the
// field alone. Aliases that "fill" (power.draw.average after power.draw) map to the same
// slot, so a header naming both is caught as a shared slot.
FastColumn fast_column(F f) {
  switch (f) {
    case F::kIgnore:
    case F::kTimestamp:
      return {};
    case F::kIndex:
      return FastColumn{FastOp::kIndex};
    case F::kName:
      return FastColumn{FastOp::kName};
    case F::kUuid:
      return FastColumn{FastOp::kUuid};
    case F::kBusId:
      return FastColumn{FastOp::kBusId};
    case F::kTemp:
      return int_col(&S::temp_c);
    case F::kTempTlimit:
      return int_col(&S::tlimit_margin_c);
    case F::kMemTemp:
      return int_col(&S::mem_temp_c);
    case F::kPowerDraw:
    case F::kPowerDrawAverage:
    case F::kPowerDrawInstant:
      return watts_col(&S::power_mw);
    case F::kPowerLimit:
    case F::kEnforcedLimit:
      return watts_col(&S::power_limit_mw);
    case F::kUtilGpu:
      return unsigned_col(&S::util_gpu_pct);
    case F::kUtilMem:
      return unsigned_col(&S::util_mem_pct);
    case F::kUtilEnc:
      return unsigned_col(&S::util_enc_pct);
    case F::kUtilDec:
      return unsigned_col(&S::util_dec_pct);
    case F::kClkGr:
      return unsigned_col(&S::graphics_clock_mhz);
    case F::kClkSm:
      return unsigned_col(&S::sm_clock_mhz);
    case F::kClkMem:
      return unsigned_col(&S::mem_clock_mhz);
    case F::kClkAppGr:
      return unsigned_col(&S::app_graphics_clock_mhz);
    case F::kClkAppMem:
      return unsigned_col(&S::app_mem_clock_mhz);
    case F::kPcieGen:
      return unsigned_col(&S::pcie_gen);
    case F::kPcieWidth:
      return unsigned_col(&S::pcie_width);
    case F::kFan:
      return unsigned_col(&S::fan_pct);
    case F::kRetiredSbe:
      return unsigned_col(&S::retired_pages_sbe);
    case F::kRetiredDbe:
      return unsigned_col(&S::retired_pages_dbe);
    case F::kRemapCorr:
      return unsigned_col(&S::remapped_rows_correctable);
    case F::kRemapUnc:
      return unsigned_col(&S::remapped_rows_uncorrectable);
    case F::kEccSbeVol:
    case F::kEccSbeVolTotal:
      return u64_col(FastOp::kU64, &S::ecc_sbe_volatile);
    case F::kEccDbeVol:
    case F::kEccDbeVolTotal:
      return u64_col(FastOp::kU64, &S::ecc_dbe_volatile);
    case F::kEccSbeAgg:
    case F::kEccSbeAggTotal:
      return u64_col(FastOp::kU64, &S::ecc_sbe_aggregate);
    case F::kEccDbeAgg:
    case F::kEccDbeAggTotal:
      return u64_col(FastOp::kU64, &S::ecc_dbe_aggregate);
    case F::kEccSramUncVol:
      return u64_col(FastOp::kU64, &S::ecc_sram_uncorrectable_volatile);
    case F::kEccSramUncAgg:
      return u64_col(FastOp::kU64, &S::ecc_sram_uncorrectable_aggregate);
    case F::kMemUsed:
      return u64_col(FastOp::kMem, &S::mem_used_bytes);
    case F::kMemFree:
      return u64_col(FastOp::kMem, &S::mem_free_bytes);
    case F::kMemReserved:
      return u64_col(FastOp::kMem, &S::mem_reserved_bytes);
    case F::kMemTotal:
      return u64_col(FastOp::kMemTotal, &S::mem_total_bytes);
    case F::kReasonsActive:
      return u64_col(FastOp::kHex, &S::clock_reasons);
    case F::kPstate: {
      FastColumn c = unsigned_col(&S::pstate);
      c.op = FastOp::kPstate;
      return c;
    }
    case F::kEccCurrent:
      return bool_col(&S::ecc_enabled);
    case F::kEccPending:
      return bool_col(&S::ecc_pending_enabled);
    case F::kRetiredPending:
      return bool_col(&S::retired_pages_pending);
    case F::kEccSramThreshold:
      return bool_col(&S::ecc_sram_threshold_exceeded);
    case F::kRemapPending:
      return bool_col(&S::remapped_rows_pending);
    case F::kRemapFailure:
      return bool_col(&S::remapped_rows_failure);
    case F::kPersistence:
      return bool_col(&S::persistence_mode);
    case F::kMigCurrent:
      return bool_col(&S::mig_enabled);
    case F::kMigPending:
      return bool_col(&S::mig_pending);
    default: {
      FastColumn c;
      c.op = FastOp::kGeneric;
      return c;
    }
  }
}

// Identity columns (these and kIndex..kBusId) keep their value across rows in both paths
// (compare-then-assign, or Snapshot-level), so they do not need the per-row reset.
bool reset_free_generic(F f) {
  return f == F::kIndex || f == F::kName || f == F::kUuid || f == F::kBusId || f == F::kDriver ||
         f == F::kHostname;
}

bool same_slot(const FastColumn& a, const FastColumn& b) {
  return (a.u && a.u == b.u) || (a.u64 && a.u64 == b.u64) || (a.i && a.i == b.i) ||
         (a.w && a.w == b.w) || (a.b && a.b == b.b);
}

}  // namespace

CsvPlan make_csv_plan(const std::vector<CsvColumn>& cols) {
  CsvPlan plan;
  plan.lean = true;
  for (const auto& col : cols) {
    plan.cols.push_back(fast_column(col.field));
    if (plan.cols.back().op == FastOp::kGeneric && !reset_free_generic(col.field))
      plan.lean = false;
  }
  for (size_t a = 0; a < plan.cols.size(); ++a)
    for (size_t b = a + 1; b < plan.cols.size(); ++b)
      if (same_slot(plan.cols[a], plan.cols[b])) plan.lean = false;
  if (!plan.lean) {
    // Columns that fill, OR or take a minimum depend on the reset and on each other: the
    // fast path then resets the GpuState and applies every column like the reference does.
    for (size_t k = 0; k < cols.size(); ++k)
      if (plan.cols[k].op != FastOp::kSkip) plan.cols[k] = FastColumn{FastOp::kGeneric};
  }
  return plan;
}

}  // namespace gw::smi
