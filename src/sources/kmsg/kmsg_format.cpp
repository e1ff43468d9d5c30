#include "sources/kmsg/kmsg_format.h"

#include <cstdio>

#include "sources/smi/text_util.h"

namespace gw {

std::string kmsg_records_to_dmesg(std::string_view raw, std::optional<double> min_uptime_s) {
  std::string out;
  out.reserve(raw.size());
  text::LineReader rd(raw);
  std::string_view line;
  while (rd.next(line)) {
    if (line.empty() || line.front() == ' ') continue;  // continuation "KEY=value" lines
    const size_t semi = line.find(';');
    if (semi == std::string_view::npos) continue;
    const auto head = line.substr(0, semi);
    const size_t c1 = head.find(',');
    const size_t c2 = c1 == std::string_view::npos ? c1 : head.find(',', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    const size_t c3 = head.find(',', c2 + 1);
    const auto usec = text::parse_u64(
        head.substr(c2 + 1, c3 == std::string_view::npos ? head.npos : c3 - c2 - 1));
    if (!usec) continue;
    const double up = static_cast<double>(*usec) / 1e6;
    if (min_uptime_s && up < *min_uptime_s) continue;
    char stamp[48];
    std::snprintf(stamp, sizeof stamp, "[%12.6f] ", up);
    out += stamp;
    out.append(line.substr(semi + 1));
    out.push_back('\n');
  }
  return out;
}

}  // namespace gw
