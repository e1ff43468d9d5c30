// lspci -vv (optionally -D, -nn, -k): a device line at column 0, then tab-indented details.
//   3b:00.0 3D controller [0302]: NVIDIA Corporation GA100 [A100 SXM4 80GB] [10de:20b2] (rev a1)
//           LnkCap: Port #0, Speed 16GT/s, Width x16, ASPM not supported
//           LnkSta: Speed 2.5GT/s (downgraded), Width x16 (ok)
//           Kernel driver in use: nvidia
#include <cmath>
#include <cstdlib>
#include <string>

#include "core/event.h"
#include "sources/env/env_reports.h"
#include "sources/smi/text_util.h"

namespace gw {

namespace {

bool hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// "3b:00.0 " or "0000:3b:00.0 " at the start: the length of the address, 0 when absent.
size_t address_len(std::string_view s) {
  auto bdf = [&](size_t at) {
    return s.size() > at + 7 && hex(s[at]) && hex(s[at + 1]) && s[at + 2] == ':' &&
           hex(s[at + 3]) && hex(s[at + 4]) && s[at + 5] == '.' && s[at + 6] >= '0' &&
           s[at + 6] <= '7' && s[at + 7] == ' ';
  };
  if (bdf(0)) return 7;
  if (s.size() > 5 && hex(s[0]) && hex(s[1]) && hex(s[2]) && hex(s[3]) && s[4] == ':' && bdf(5))
    return 12;
  return 0;
}

// "Speed 16GT/s, Width x16" fields of LnkCap / LnkSta.
void link_fields(std::string_view v, std::optional<double>& speed, std::optional<unsigned>& width) {
  if (const size_t p = v.find("Speed "); p != std::string_view::npos)
    speed = parse_gt_s(v.substr(p + 6));
  if (const size_t p = v.find("Width x"); p != std::string_view::npos)
    width = text::to_unsigned(text::parse_u64(v.substr(p + 7)));
  // PCIe links are x1..x32; lspci prints x0 for a link that is down. Anything else is not a
  // width.
  if (width && *width > 32) width.reset();
}

}  // namespace

std::optional<double> parse_gt_s(std::string_view v) {
  v = text::trim(v);
  const size_t p = v.find("GT/s");
  if (p == std::string_view::npos || p == 0) return std::nullopt;
  // "infGT/s", "-5GT/s", "1e300GT/s": no link runs at those (PCIe 7.0 is 128 GT/s).
  const auto gt = text::parse_double(v.substr(0, p));
  if (!gt || !std::isfinite(*gt) || *gt < 0 || *gt > 1000) return std::nullopt;
  return gt;
}

namespace {

// A device line re-indented by a paste ("    01:00.0 VGA ..."): up to 4 leading spaces go.
std::string_view device_text(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && i < 4 && line[i] == ' ') ++i;
  return line.substr(i);
}

}  // namespace

bool looks_like_lspci_device_line(std::string_view line) {
  line = device_text(line);
  const size_t n = address_len(line);
  if (n == 0) return false;
  // "<class>: <vendor> <device>" after the address.
  return line.find(": ", n) != std::string_view::npos;
}

std::optional<std::string> lspci_selected_device(std::string_view line) {
  const std::string_view t = text::trim(line);
  const size_t cmd = t.find("lspci ");
  if (cmd == std::string_view::npos || cmd > 40) return std::nullopt;
  const size_t s = t.find(" -s ", cmd);
  if (s == std::string_view::npos) return std::nullopt;
  std::string_view addr = text::trim(t.substr(s + 4));
  addr = addr.substr(0, addr.find_first_of(" \t)"));
  return normalize_pci_bus_id(addr);
}

std::vector<PciDeviceFacts> parse_lspci(std::string_view text) {
  std::vector<PciDeviceFacts> out;
  text::LineReader rd(text);
  std::string_view line;
  PciDeviceFacts* cur = nullptr;
  while (rd.next(line)) {
    if (looks_like_lspci_device_line(line)) {
      cur = nullptr;
      line = device_text(line);
      const size_t n = address_len(line);
      const std::string_view desc = line.substr(n + 1);
      const bool nvidia = desc.find("NVIDIA") != std::string_view::npos ||
                          desc.find("[10de:") != std::string_view::npos;
      const bool display = desc.find("VGA compatible controller") != std::string_view::npos ||
                           desc.find("3D controller") != std::string_view::npos ||
                           desc.find("Display controller") != std::string_view::npos;
      if (!nvidia || !display) continue;
      auto id = normalize_pci_bus_id(line.substr(0, n));
      if (!id) continue;
      PciDeviceFacts d;
      d.pci_bus_id = *id;
      const size_t colon = desc.find(": ");
      d.name = std::string(text::trim(desc.substr(colon + 2)));
      if (const size_t p = desc.find("[10de:");
          p != std::string_view::npos && p + 10 <= desc.size())
        d.device_id = "0x" + std::string(desc.substr(p + 6, 4));
      out.push_back(std::move(d));
      cur = &out.back();
      continue;
    }
    if (const auto id = lspci_selected_device(line)) {
      // Its output without the device's own line: an NVIDIA GPU only when the command's line
      // says so (a script's "(GPU function)", "NVIDIA ..."), else another device.
      cur = nullptr;
      if (line.find("GPU") == std::string_view::npos &&
          line.find("NVIDIA") == std::string_view::npos)
        continue;
      PciDeviceFacts d;
      d.pci_bus_id = *id;
      out.push_back(std::move(d));
      cur = &out.back();
      continue;
    }
    if (!cur) continue;
    const std::string_view t = text::trim(line);
    if (text::starts_with(t, "LnkCap:")) {
      link_fields(t.substr(7), cur->max_link_speed_gt_s, cur->max_link_width);
    } else if (text::starts_with(t, "LnkSta:")) {
      link_fields(t.substr(7), cur->link_speed_gt_s, cur->link_width);
      cur->link_downgraded = t.find("downgraded") != std::string_view::npos;
      // "Speed 5GT/s (downgraded), Width x1 (downgraded)": the mark follows its field.
      const size_t width_at = t.find("Width ");
      const size_t mark = t.find("(downgraded)");
      const size_t mark2 = mark == std::string_view::npos ? mark : t.find("(downgraded)", mark + 1);
      for (size_t m : {mark, mark2}) {
        if (m == std::string_view::npos) continue;
        if (width_at != std::string_view::npos && m > width_at)
          cur->width_downgraded = true;
        else
          cur->speed_downgraded = true;
      }
    } else if (text::starts_with(t, "Kernel driver in use:")) {
      cur->driver = std::string(text::trim(t.substr(21)));
    } else if (text::starts_with(t, "NUMA node:")) {
      cur->numa_node = text::to_int(text::parse_i64(t.substr(10)));
    }
  }
  return out;
}

}  // namespace gw
