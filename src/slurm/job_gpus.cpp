#include "slurm/job_gpus.h"

#include <charconv>
#include <string>

namespace gw::slurm {
namespace {

bool to_index(std::string_view s, unsigned& out) {
  if (s.empty() || s.size() > 4) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

}  // namespace

Result<std::set<unsigned>> parse_gpu_list(std::string_view text) {
  std::set<unsigned> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    std::string_view item = text.substr(pos, comma - pos);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\r' || item.back() == '\n'))
      item.remove_suffix(1);
    const size_t dash = item.find('-');
    unsigned lo = 0, hi = 0;
    const bool ok =
        dash == std::string_view::npos
            ? to_index(item, lo) && (hi = lo, true)
            : to_index(item.substr(0, dash), lo) && to_index(item.substr(dash + 1), hi) && lo <= hi;
    if (!ok)
      return make_error("slurm.bad_gpu_list",
                        "\"" + std::string(item) + "\" in \"" + std::string(text) +
                            "\" is not a GPU index or range (expected e.g. 0,1 or 0-3)");
    for (unsigned i = lo; i <= hi; ++i) out.insert(i);
    pos = comma + 1;
  }
  return out;
}

}  // namespace gw::slurm
