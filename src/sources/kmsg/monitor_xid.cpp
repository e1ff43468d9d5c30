#include "sources/kmsg/monitor_xid.h"

#include <string>

#include "sources/kmsg/kernel_log_line.h"
#include "sources/smi/text_util.h"

namespace gw::kmsg {

namespace {

constexpr std::string_view kDetected = " detected on GPU PCI:";

bool digit(char c) {
  return c >= '0' && c <= '9';
}

bool word_char(char c) {
  return digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

}  // namespace

std::optional<Event> parse_monitor_xid_line(std::string_view line) {
  const size_t at = line.find("XID ");
  if (at == std::string_view::npos || (at > 0 && word_char(line[at - 1]))) return std::nullopt;
  const size_t detected = line.find(kDetected, at);
  if (detected == std::string_view::npos) return std::nullopt;
  std::string_view reason = line.substr(at, line.size() - at);
  size_t used = 0;
  const uint64_t code = text::leading_digits(reason.substr(4), used);
  if (used == 0 || used > 3) return std::nullopt;
  size_t after = 4 + used;  // past the number and its sub-code ("149.38")
  if (after < reason.size() && reason[after] == '.') {
    ++after;
    while (after < reason.size() && digit(reason[after])) ++after;
  }
  if (after < reason.size() && reason[after] != ' ') return std::nullopt;
  auto pci = gpu_address_in(line.substr(detected + kDetected.size() - 4));
  if (!pci) return std::nullopt;
  // The reason ends where a JSON string or a quote closes.
  const size_t end = reason.find_first_of("\"'", detected - at);
  if (end != std::string_view::npos) reason = reason.substr(0, end);
  Event ev;
  ev.kind = EventKind::kXid;
  ev.code = static_cast<unsigned>(code);
  ev.pci_bus_id = std::move(pci);
  ev.message = "gpud: " + std::string(text::trim(reason));
  return ev;
}

}  // namespace gw::kmsg
