// libFuzzer target: arbitrary text, line by line, into the gpu_burn, nccl-tests and bandwidth
// matrix readers (src/sources/app/gpu_burn.h, nccl_tests.h, bw_matrix.h). Beyond "no crash, no UB,
// no leak": a progress line names no more GPUs than it has characters, a run's GPUs are indexed
// 0..n-1, rows come in tables whose sizes rise, matrices are square or as wide as their header, and
// every figure is one the input could state.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/fuzz_check.h"
#include "sources/app/bw_matrix.h"
#include "sources/app/gpu_burn.h"
#include "sources/app/nccl_tests.h"
#include "sources/smi/text_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gw::BurnScanner burn;
  gw::NcclTestsScanner nccl;
  gw::BandwidthMatrixScanner matrices;
  gw::text::LineReader rd(text);
  std::string_view line;
  size_t line_no = 0;
  while (rd.next(line)) {
    ++line_no;
    if (auto p = gw::parse_burn_progress(line)) GW_FUZZ_CHECK(p->gpus.size() <= line.size());
    if (auto r = gw::parse_nccl_tests_row(line)) {
      GW_FUZZ_CHECK(r->busbw_gbs >= 0 && r->busbw_gbs <= 1e5);
    }
    (void)burn.take(line, "f", line_no);
    (void)nccl.take(line, "f", line_no);
    (void)matrices.take(line, "f", line_no);
  }
  if (auto run = burn.finish()) {
    for (size_t i = 0; i < run->gpus.size(); ++i) {
      GW_FUZZ_CHECK(run->gpus[i].index == i);
      GW_FUZZ_CHECK(run->gpus[i].best_gflops >= run->gpus[i].last_gflops ||
                    run->gpus[i].last_gflops != run->gpus[i].last_gflops);
    }
    GW_FUZZ_CHECK(run->progress_lines <= line_no);
  }
  for (const gw::CollectiveRun& t : nccl.finish()) {
    GW_FUZZ_CHECK(!t.rows.empty() || t.avg_busbw_gbs || !t.devices.empty() || !t.origin.empty());
    for (size_t i = 1; i < t.rows.size(); ++i) GW_FUZZ_CHECK(t.rows[i].bytes > t.rows[i - 1].bytes);
  }
  for (const gw::BandwidthMatrix& m : matrices.finish()) {
    GW_FUZZ_CHECK(!m.cells.empty());
    for (const auto& row : m.cells) GW_FUZZ_CHECK(row.size() == m.cells[0].size());
    GW_FUZZ_CHECK(m.cells.size() <= line_no || m.title.rfind("Device=", 0) == 0);
  }
  return 0;
}
