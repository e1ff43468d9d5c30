// libFuzzer target: arbitrary bytes through the trace line parser and every trace format
// (the first byte picks a header so each format's row code is reached). Checks the invariants
// read_trace promises: sorted 0-based submits, ids 1..N, limits >= run times.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/fuzz_check.h"
#include "sim/trace_csv.h"
#include "sim/trace_formats.h"

namespace {

constexpr std::array<std::string_view, 7> kHeaders = {
    "timestamp,duration,num_gpus,gpu_time,cluster\n",
    "job_id,submission_time,duration,num_gpu\n",
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n",
    "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n",
    "name,time,application,num_replicas,batch_size\n",
    "",  // Gavel: headerless, tab-separated
    "",  // raw bytes: header detection itself
};

void check_trace(const gw::sim::Trace& t) {
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    const auto& j = t.jobs[i];
    GW_FUZZ_CHECK(j.id == i + 1);
    GW_FUZZ_CHECK(j.submit_ms >= 0);
    if (i) GW_FUZZ_CHECK(t.jobs[i - 1].submit_ms <= j.submit_ms);
    GW_FUZZ_CHECK(j.gpus > 0);
    if (j.time_limit_ms)
      GW_FUZZ_CHECK(j.actual_runtime_ms && *j.time_limit_ms >= *j.actual_runtime_ms);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  // The line parser on its own.
  gw::sim::csv::LineCursor cur(body);
  std::string_view line;
  std::array<std::string_view, 8> fields{};
  while (cur.next(line)) {
    const size_t n = gw::sim::csv::split_fields(line, ',', fields);
    for (size_t i = 0; i < std::min(n, fields.size()); ++i) {
      (void)gw::sim::csv::parse_int(fields[i]);
      (void)gw::sim::csv::parse_double(fields[i]);
      (void)gw::sim::csv::parse_datetime_s(fields[i]);
    }
  }
  // Whole formats.
  const std::string text = std::string(kHeaders[data[0] % kHeaders.size()]) + std::string(body);
  gw::sim::TraceOptions o;
  o.seed = data[0];
  auto t = gw::sim::parse_trace_text(text, "fuzz.csv", "fuzz", o);
  if (t) check_trace(*t);
  return 0;
}
