// NVIDIA Fabric Manager's own lines -> AppMessage (kFabricManagerFailed / kFabricManagerStarted):
// its journal (`nv-fabricmanager[pid]:`, `nvidia-fabricmanager-start.sh[pid]:`, systemd's lines
// about the unit), `systemctl status nvidia-fabricmanager` blocks and /var/log/fabricmanager.log
// (`[date] [LEVEL] [tid N] message`). Known by those names anywhere in a line, whatever prefix a
// paste gives it. Pure over text; FabricManagerScanner keeps the one thing that spans lines: a
// `systemctl status` header whose `Active:` line follows.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/observation.h"

namespace gw {

// One line -> a message, nullopt for a routine line of the fabric manager (see
// is_fabric_manager_line) or a line that is not one.
std::optional<AppMessage> parse_fabric_manager_line(std::string_view line);

// The line names the fabric manager (its unit, binary, start script or log format).
bool is_fabric_manager_line(std::string_view line);

class FabricManagerScanner {
 public:
  // True when the line was read: a message (appended to `out`) or a routine line. A line that
  // names the fabric manager in words no rule knows is left unread (false), so it is listed.
  bool take(std::string_view line, std::string_view origin, size_t line_no,
            std::vector<AppMessage>& out);

 private:
  std::optional<bool> take_status_line(std::string_view s, std::string_view origin, size_t line_no,
                                       std::vector<AppMessage>& out);
  std::optional<AppMessage> refused_options(const std::string& low, std::string_view origin,
                                            size_t line_no);
  size_t status_header_ = 0;    // line of "● nvidia-fabricmanager.service - ..." (0: none)
  size_t last_line_ = 0;        // the last line of the fabric manager read
  size_t usage_line_ = 0;       // the last line of the start script's usage text (0: none)
  std::string unknown_option_;  // the start script's "Unknown option: ..." and its line
  size_t unknown_option_line_ = 0;
};

}  // namespace gw
