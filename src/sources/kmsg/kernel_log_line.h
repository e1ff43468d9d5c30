// One kernel-log line -> what it is (an event, the first line of a multi-line driver message,
// driver text that may continue a message, or nothing). Shared by parse_kernel_log_line and
// the stream, which joins continuation lines.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/event.h"
#include "sources/kmsg/log_prefix.h"

namespace gw::kmsg {

enum class LineRole {
  kNone,        // no GPU content
  kEvent,       // ev is an event
  kAnnounce,    // "NVRM: The NVIDIA GPU 0000:18:00.0": what it is comes on the next lines
  kDriverText,  // other NVRM text: may continue the message of the line before
  kBad,         // an Xid/SXid line that could not be read (error says why)
};

struct ParsedLine {
  LineRole role = LineRole::kNone;
  Event ev;  // time fields, pci, code, ... (origin left empty)
  LogPrefix prefix;
  std::string_view body;  // the NVRM text after "NVRM:" (kDriverText / kAnnounce)
  std::string error;
};

ParsedLine parse_line(std::string_view line);

// An NVRM line of firmware or register state the driver dumps around an error it reports
// ("RISC-V CSR State:", "sepc:0x00000000013ebd80  stval:0x0000000000000020", "kfspDumpDebugState_
// GH100: NV_PFSP_FALCON_COMMON_SCRATCH_GROUP_2(0) = 0x9f", "version=0x1, size=0x35c"): values the
// report carries, none judged. `line` is the whole log line.
bool is_driver_dump_line(std::string_view line);

// The kind a (joined) NVRM message announces, if any: fallen off the bus, open modules
// required, ... Used when continuation lines complete an announcement.
void classify_driver_text(std::string_view text, Event& ev);

// The line after an AER report's line, when it belongs to the report: kDriverText (body: the
// text to join) for an untagged detail of the same device ("PCIe Bus Error: severity=...",
// "device [8086:6f04] error status/mask=...", "[ 5] Surprise Down Error (First)"); kEvent for
// another device's line of the same error and recovery ("nvidia 0000:02:00.0: device has no
// AER-aware driver", "nvidia 0000:07:00.0: PCIe Bus Error: ..."), a report of its own; else
// kNone. `device` is the report's device as printed ("0000:00:02.0"). Lines tagged "AER: " are
// events of their own (parse_line).
ParsedLine aer_follow_line(std::string_view line, std::string_view device);
// A line of a PCIe AER report without its log prefix: "<driver> <device>: " and then "AER: ",
// "PCIe Bus Error:", a detail (status, error bits) or a driver's recovery line.
bool is_aer_line(std::string_view body);
// The device as printed in an AER line's "<driver> <device>: " head ("" when none).
std::string_view aer_device_of(std::string_view message);

// "PCI:0000:9b:00", "GPU 0000:2b:00.0", "GPU at PCI:0000:9b:00", "GPU at 0000:01:00.0" anywhere
// in s.
std::optional<std::string> gpu_address_in(std::string_view s);

}  // namespace gw::kmsg
