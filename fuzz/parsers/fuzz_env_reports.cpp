// libFuzzer target: arbitrary text into the environment-report readers
// (src/sources/env/env_reports.h): EnvReader line by line (collect_env, nvcc -V,
// /proc/driver/nvidia/version, the nvidia-smi banner) and the banner parser on its own.
// Beyond "no crash, no UB, no leak": versions are text from the input, reports seen are
// bounded by the lines, PCIe speeds finite and >= 0.
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/fuzz_check.h"
#include "core/host.h"
#include "sources/env/env_reports.h"
#include "sources/smi/text_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gw::HostFacts facts;
  gw::EnvReader reader("f");
  gw::text::LineReader rd(text);
  std::string_view line;
  size_t taken = 0;
  while (rd.next(line)) {
    if (reader.take(line, facts)) ++taken;
    if (auto b = gw::parse_smi_banner_line(line)) {
      for (const auto* v : {&b->smi_version, &b->driver_version, &b->cuda_version})
        GW_FUZZ_CHECK(!*v || (*v)->size() <= line.size());
    }
  }
  GW_FUZZ_CHECK(taken <= gw::fuzz::lines_in(text));
  GW_FUZZ_CHECK(reader.reports().size() <= taken);
  GW_FUZZ_CHECK(reader.saw_any() == !reader.reports().empty());
  GW_FUZZ_CHECK(facts.frameworks.size() <= gw::fuzz::lines_in(text));
  GW_FUZZ_CHECK(gw::fuzz::within(gw::parse_gt_s(text), 0, DBL_MAX));
  return 0;
}
