// libFuzzer target: arbitrary bytes into parse_smi_dmon. Must never crash, hang or leak; each
// GPU reading comes from its own row, and the count returned is the count delivered. The same
// bytes read as the capture reader reads a dmon block (parse_smi_dmon_at, most rows from one
// pass over their bytes) give the same snapshots wherever that block runs to the text's end.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/fuzz_check.h"
#include "sources/smi/smi_parsers.h"

namespace {

// What a snapshot says, enough to tell two readings of a row apart.
std::string digest(const gw::Snapshot& s) {
  std::string d = std::to_string(s.time_ms);
  const auto add = [&d](const auto& v) { d += v ? "," + std::to_string(*v) : std::string(",-"); };
  for (const gw::GpuState& g : s.gpus) {
    d += ";" + std::to_string(g.info.index);
    add(g.sample.power_mw);
    add(g.sample.temp_c);
    add(g.sample.mem_temp_c);
    add(g.sample.util_gpu_pct);
    add(g.sample.util_mem_pct);
    add(g.sample.graphics_clock_mhz);
    add(g.sample.sm_clock_mhz);
    add(g.sample.mem_clock_mhz);
    add(g.sample.mem_used_bytes);
    add(g.sample.pcie_rx_kb_s);
    add(g.sample.ecc_sbe_aggregate);
  }
  return d;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<gw::Error> errors;
  size_t gpus = 0, snapshots = 0, lasts = 0;
  bool last_was_last = true;
  std::vector<std::string> row_by_row, one_pass;
  auto r = gw::parse_smi_dmon(
      text, "fuzz",
      [&](const gw::Snapshot& s, bool last) {
        if (lasts > 0) last_was_last = false;
        lasts += last ? 1 : 0;
        ++snapshots;
        gpus += s.gpus.size();
        row_by_row.push_back(digest(s));
      },
      &errors);
  std::vector<gw::Error> errors_at;
  gw::text::BlockStop stop;
  const size_t huge = size_t{1} << 40;
  auto r_at = gw::parse_smi_dmon_at(
      text, 0, 1, {huge, huge}, "fuzz",
      [&](const gw::Snapshot& s, bool) { one_pass.push_back(digest(s)); }, &errors_at, stop);
  GW_FUZZ_CHECK(stop.end <= text.size());
  // Where the block is the whole text (and no BOM, which parse_smi_dmon drops first), both
  // read the same lines.
  if (stop.end == text.size() && !(size >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF")) {
    GW_FUZZ_CHECK(static_cast<bool>(r) == static_cast<bool>(r_at));
    GW_FUZZ_CHECK(one_pass == row_by_row);
    GW_FUZZ_CHECK(errors.size() == errors_at.size());
  }
  if (r) GW_FUZZ_CHECK(*r == snapshots);
  GW_FUZZ_CHECK(last_was_last && lasts == (snapshots == 0 ? 0u : 1u));
  GW_FUZZ_CHECK(gpus <= gw::fuzz::lines_in(text));
  GW_FUZZ_CHECK(errors.size() <= gw::fuzz::lines_in(text));
  return 0;
}
