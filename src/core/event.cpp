#include "core/event.h"

#include <cctype>
#include <string>

namespace gw {

std::string_view event_kind_name(EventKind k) {
  switch (k) {
    case EventKind::kXid:
      return "xid";
    case EventKind::kSXid:
      return "sxid";
    case EventKind::kFallenOffBus:
      return "fallen_off_bus";
    case EventKind::kGpuLost:
      return "gpu_lost";
    case EventKind::kDriverMessage:
      return "driver_message";
  }
  return "unknown";
}

std::string_view driver_message_kind_name(DriverMessageKind k) {
  switch (k) {
    case DriverMessageKind::kInitFailed:
      return "init_failed";
    case DriverMessageKind::kOpenModulesRequired:
      return "open_modules_required";
    case DriverMessageKind::kResetRequired:
      return "reset_required";
    case DriverMessageKind::kGspTimeout:
      return "gsp_timeout";
    case DriverMessageKind::kDriverAssert:
      return "driver_assert";
    case DriverMessageKind::kApiMismatch:
      return "api_mismatch";
    case DriverMessageKind::kNoDeviceProbed:
      return "no_device_probed";
    case DriverMessageKind::kPcieAer:
      return "pcie_aer";
    case DriverMessageKind::kHungTask:
      return "hung_task";
    case DriverMessageKind::kPcieLinkLimited:
      return "pcie_link_limited";
    case DriverMessageKind::kKernelFault:
      return "kernel_fault";
    case DriverMessageKind::kKernelWarning:
      return "kernel_warning";
    case DriverMessageKind::kGpuUnsupported:
      return "gpu_unsupported";
  }
  return "unknown";
}

namespace {

bool parse_hex(std::string_view s, unsigned long& out) {
  if (s.empty() || s.size() > 8) return false;
  out = 0;
  for (char c : s) {
    const int d = std::isdigit(static_cast<unsigned char>(c))
                      ? c - '0'
                      : (std::isxdigit(static_cast<unsigned char>(c))
                             ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                             : -1);
    if (d < 0) return false;
    out = out * 16 + static_cast<unsigned long>(d);
  }
  return true;
}

}  // namespace

std::optional<std::string> normalize_pci_bus_id(std::string_view text) {
  // Accept [domain:]bus:device[.function]
  std::string_view domain = "0", bus, dev, fn = "0";
  const auto dot = text.rfind('.');
  std::string_view head = text;
  if (dot != std::string_view::npos) {
    fn = text.substr(dot + 1);
    head = text.substr(0, dot);
  }
  const auto c2 = head.rfind(':');
  if (c2 == std::string_view::npos) return std::nullopt;
  dev = head.substr(c2 + 1);
  head = head.substr(0, c2);
  const auto c1 = head.rfind(':');
  if (c1 == std::string_view::npos) {
    bus = head;
  } else {
    bus = head.substr(c1 + 1);
    domain = head.substr(0, c1);
  }
  unsigned long d = 0, b = 0, v = 0, f = 0;
  if (!parse_hex(domain, d) || !parse_hex(bus, b) || !parse_hex(dev, v) || !parse_hex(fn, f))
    return std::nullopt;
  if (b > 0xff || v > 0x1f || f > 7) return std::nullopt;
  // "DDDDDDDD:BB:DD.F" (parse_hex takes at most 8 digits) by hand: snprintf was a sixth of a
  // bug report's parse (callgrind).
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = "00000000:00:00.0";
  for (size_t i = 0; i < 8; ++i) out[7 - i] = kHex[(d >> (4 * i)) & 0xf];
  out[9] = kHex[b >> 4];
  out[10] = kHex[b & 0xf];
  out[12] = kHex[v >> 4];
  out[13] = kHex[v & 0xf];
  out[15] = kHex[f];
  return out;
}

}  // namespace gw
