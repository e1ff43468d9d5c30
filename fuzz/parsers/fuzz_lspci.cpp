// libFuzzer target: arbitrary text into the `lspci -vv` reader (src/sources/env/lspci.cpp).
// Beyond "no crash, no UB, no leak": at most one device per device line (or per typed
// "lspci -s ADDR" line, whose output may lack the device line), link speeds finite
// and >= 0, widths x0 (link down) to x32, bus ids normalised and non-empty.
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
  size_t device_lines = 0;
  gw::text::LineReader rd(text);
  std::string_view line;
  while (rd.next(line))
    if (gw::looks_like_lspci_device_line(line) || gw::lspci_selected_device(line)) ++device_lines;
  const auto devices = gw::parse_lspci(text);
  GW_FUZZ_CHECK(devices.size() <= device_lines);
  for (const gw::PciDeviceFacts& d : devices) {
    GW_FUZZ_CHECK(!d.pci_bus_id.empty() && d.pci_bus_id.size() <= size + 16);
    GW_FUZZ_CHECK(gw::fuzz::within(d.link_speed_gt_s, 0, 1000));
    GW_FUZZ_CHECK(gw::fuzz::within(d.max_link_speed_gt_s, 0, 1000));
    GW_FUZZ_CHECK(!d.name || d.name->size() <= size);
    for (const auto& w : {d.link_width, d.max_link_width}) GW_FUZZ_CHECK(!w || *w <= 32);
  }
  return 0;
}
