// libFuzzer target: arbitrary bytes into every /proc and /sys parser of host facts
// (src/sources/host/host_parse.h). Must never crash, hang or leak, and every number they
// return must be one a real kernel could have written: finite, in range, never NaN.
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/fuzz_check.h"
#include "sources/host/host_parse.h"

namespace h = gw::host;
using gw::fuzz::within;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto v = h::parse_nvidia_driver_version(text))
    GW_FUZZ_CHECK(!v->empty() && v->size() <= size);
  (void)h::parse_proc_modules(text);
  (void)h::cgroup_says_container(text);
  GW_FUZZ_CHECK(within(h::parse_link_speed_gt_s(text), 0, DBL_MAX));
  (void)h::parse_hex(text);
  (void)h::parse_int(text);
  GW_FUZZ_CHECK(within(h::parse_loadavg1(text), 0, DBL_MAX));
  GW_FUZZ_CHECK(within(h::parse_uptime_s(text), 0, DBL_MAX));
  GW_FUZZ_CHECK(within(h::parse_psi_some_avg10(text), 0, 100));
  if (auto st = h::parse_proc_stat(text)) {
    // Since boot (before = zeros) and between two readings: a share, whatever the counters.
    GW_FUZZ_CHECK(within(h::iowait_pct(h::CpuTimes{}, st->cpu), 0, 100));
    h::CpuTimes later = st->cpu;
    later.iowait += 7;
    later.idle += 5;
    GW_FUZZ_CHECK(within(h::iowait_pct(st->cpu, later), 0, 100));
  }
  if (auto p = h::parse_pid_stat(text)) GW_FUZZ_CHECK(p->comm.size() < size);
  if (auto v = h::parse_cuda_version_json(text)) GW_FUZZ_CHECK(v->size() <= size);
  if (auto v = h::parse_cuda_version_txt(text)) GW_FUZZ_CHECK(!v->empty() && v->size() <= size);
  if (auto t = h::parse_torch_version_py(text)) GW_FUZZ_CHECK(t->version.size() <= size);
  if (auto v = h::parse_tf_build_info_cuda(text)) GW_FUZZ_CHECK(v->size() <= size);
  if (auto d = h::parse_dist_info_name(text))
    GW_FUZZ_CHECK(!d->first.empty() && !d->second.empty());
  (void)h::is_gpu_env_var(text);
  return 0;
}
