// Loading one job's window from the history: every metric the report needs, joined by time.
#include <algorithm>
#include <array>
#include <utility>

#include "jobreport/jobreport.h"

namespace gw::jobreport {
namespace {

using Field = std::optional<double> Row::*;

struct Column {
  const char* metric;
  Field field;
  bool use_max;  // rollups: the reason bits and the peak are read from the minute's max
};

constexpr std::array<Column, 12> kColumns = {{
    {"util_gpu_pct", &Row::util, false},
    {"util_mem_pct", &Row::util_mem, false},
    {"power_w", &Row::power_w, false},
    {"mem_used_bytes", &Row::mem_used, true},
    {"energy_mj", &Row::energy_mj, true},
    {"clock_reasons", &Row::reasons, true},
    {"temp_c", &Row::temp_c, false},
    {"sm_clock_mhz", &Row::sm_clock, false},
    {"pcie_gen", &Row::pcie_gen, false},
    {"pcie_width", &Row::pcie_width, false},
    {"pcie_tx_kb_s", &Row::pcie_tx, false},
    {"pcie_rx_kb_s", &Row::pcie_rx, false},
}};

Result<GpuSeries> load_gpu(const store::Store& st, const JobGpu& g, int64_t from, int64_t to) {
  std::map<int64_t, Row> rows;
  for (const Column& c : kColumns) {
    auto pts = st.query({g.uuid, c.metric, from, to});
    if (!pts) return pts.error();
    for (const store::HistoryPoint& p : *pts) {
      Row& r = rows[p.t_ms];
      r.t_ms = p.t_ms;
      r.*(c.field) = c.use_max ? p.max : p.avg;
    }
  }
  GpuSeries out{g, {}};
  out.rows.reserve(rows.size());
  for (auto& [t, r] : rows) out.rows.push_back(r);
  return out;
}

bool event_on_job_gpu(const store::StoredEvent& e, const std::vector<GpuSeries>& gpus) {
  if (!e.event.gpu_index) return true;  // host-wide (or unresolved) events are context too
  return std::any_of(gpus.begin(), gpus.end(),
                     [&](const GpuSeries& g) { return g.gpu.index == e.event.gpu_index; });
}

}  // namespace

Result<Series> load_series(const store::Store& st, const JobWindow& w) {
  Series s{w, {}, {}};
  for (const JobGpu& g : w.gpus) {
    auto one = load_gpu(st, g, w.start_ms, w.end_ms);
    if (!one) return one.error();
    s.gpus.push_back(std::move(*one));
  }
  auto ev = st.events(w.start_ms, 10'000);
  if (!ev) return ev.error();
  for (store::StoredEvent& e : *ev)
    if (e.t_ms <= w.end_ms && event_on_job_gpu(e, s.gpus)) s.events.push_back(std::move(e));
  std::reverse(s.events.begin(), s.events.end());  // the store answers newest first
  return s;
}

Result<JobReport> build(const store::Store& st, const JobWindow& w) {
  auto s = load_series(st, w);
  if (!s) return s.error();
  return analyse(*s);
}

}  // namespace gw::jobreport
