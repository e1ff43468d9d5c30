// Firmware-first PCIe errors: the kernel's APEI/GHES decoder prints the record the platform
// firmware (BIOS/BMC) handed over, one field per line, all lines tagged with the record's
// sequence number: "{3}[Hardware Error]:   device_id: 0000:01:00.0". On such servers the
// native AER driver stays silent, so these records are the only trace of a GPU's link errors.
// Pure functions over text; the kernel-log stream feeds the lines of one record in order.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/event.h"

namespace gw::kmsg {

// One "[Hardware Error]:" line of a record, its log prefix removed.
struct GhesLine {
  std::optional<unsigned> record;  // "{3}" (kernels before 3.x print none)
  std::string_view key, value;     // "device_id", "0000:01:00.0"; key "" for free text
};

// nullopt when `body` is not a record line ("mce: [Hardware Error]: ..." is the machine-check
// driver's own line, not a record's).
std::optional<GhesLine> parse_ghes_line(std::string_view body);
// A record's first line ("Hardware error from APEI Generic Hardware Error Source: N").
inline bool starts_record(const GhesLine& l) {
  return l.key.substr(0, 24) == "Hardware error from APEI";
}

// The fields of one record, gathered line by line. A record may hold several sections
// ("Error 0, type: ...", "Error 1, ..."); each PCIe section naming a device is one event.
class GhesRecord {
 public:
  explicit GhesRecord(std::optional<unsigned> record) : record_(record) {}
  std::optional<unsigned> record() const { return record_; }
  void add(const GhesLine& l);
  // A line that sets a field the record already has (a second device_id, vendor_id, port_type
  // or event severity): the line of another record under the same tag (a log repeated, or
  // firmware that reuses its numbers).
  bool starts_another(const GhesLine& l) const;
  // Each PCIe section's event (kDriverMessage, kPcieAer): pci_bus_id the device, message
  // "GHES <device>: firmware-first PCIe error ..." with the severity in the words of a native
  // AER report, the port type, vendor and device ids, and the error bits named by the status
  // registers ("[14] CmpltTO"). Times and origin are the caller's.
  std::vector<Event> events() const;

 private:
  struct Section {
    std::string type, severity, section_type, port_type, address, ids;
    std::optional<uint32_t> uncor_status, cor_status;
  };
  Section& current();
  std::optional<unsigned> record_;
  std::string severity_;  // "event severity: ..." (the record's), sections may name their own
  std::vector<Section> sections_;
};

}  // namespace gw::kmsg
