#include "sources/smi/smi_nvlink.h"

#include <fmt/format.h>

#include <algorithm>

#include "sources/smi/text_util.h"

namespace gw {

namespace {

using text::has;

constexpr size_t kReach = 64;  // link lines this far below their GPU line

// "Link 12: ..." -> "...", when the line is one.
std::optional<std::string_view> link_value(std::string_view t) {
  if (!text::starts_with(t, "Link ")) return std::nullopt;
  size_t used = 0;
  text::leading_digits(t.substr(5), used);
  if (used == 0 || used > 3) return std::nullopt;
  const size_t after = 5 + used;
  if (t.substr(after, 2) == ", ") return t.substr(after + 2);  // "Link 0, P2P is supported: true"
  if (t.substr(after, 1) != ":") return std::nullopt;
  return text::trim(t.substr(after + 1));
}

// "Replay Errors: 0": a counter's value, when the text is one.
std::optional<std::string_view> counter_value(std::string_view v) {
  const size_t colon = v.rfind(": ");
  if (colon == std::string_view::npos || !has(v.substr(0, colon), "Error")) return std::nullopt;
  return text::trim(v.substr(colon + 2));
}

}  // namespace

bool is_nvlink_board(std::string_view n) {
  if (has(n, "PCIe") || has(n, " NVL")) return false;  // PCIe cards, bridged in pairs at most
  return has(n, "SXM") || has(n, "HBM3") || has(n, "B200") || has(n, "B300") || has(n, "GB200") ||
         has(n, "GB300");
}

void NvlinkStatusScanner::settle() {
  if (gpus_.empty()) return;
  const Gpu& g = gpus_.back();
  const auto same = [&g](const Gpu& o) {
    return o.index == g.index && o.active == g.active && o.inactive == g.inactive &&
           o.all_inactive == g.all_inactive && o.name == g.name &&
           std::equal(o.counters.begin(), o.counters.end(), g.counters.begin(), g.counters.end(),
                      [](const Counter& a, const Counter& b) {
                        return a.name == b.name && a.value == b.value;
                      });
  };
  const bool empty = g.active == 0 && g.inactive == 0 && !g.all_inactive && g.counters.empty();
  if (empty || gpus_.size() > kMaxLists || std::any_of(gpus_.begin(), gpus_.end() - 1, same)) {
    gpus_.pop_back();
    current_.reset();
  }
}

bool NvlinkStatusScanner::note(std::string_view t, size_t line_no) {
  if (!text::starts_with(t, "GPU ")) return false;
  const size_t colon = t.find(": ");
  if (colon == std::string_view::npos) return false;
  size_t used = 0;
  const uint64_t index = text::leading_digits(t.substr(4), used);
  if (used == 0 || 4 + used != colon || index > 4096) return false;
  // "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)" is -L's line too; without the UUID (a paste
  // that dropped it) only an NVIDIA name makes it a GPU line.
  size_t end = text::uuid_suffix(t);
  const bool uuid = end != std::string_view::npos && end > colon;
  if (!uuid) {
    if (!text::starts_with(t.substr(colon + 2), "NVIDIA ")) return false;
    end = t.size();
  }
  settle();
  Gpu g;
  g.index = static_cast<unsigned>(index);
  g.name = std::string(text::trim(t.substr(colon + 2, end - colon - 2)));
  gpus_.push_back(std::move(g));
  current_ = gpus_.size() - 1;
  header_line_ = line_no;
  return !uuid;
}

bool NvlinkStatusScanner::take(std::string_view t, std::string_view origin, size_t line_no) {
  if (!current_ || line_no > header_line_ + kReach) return false;
  Gpu& g = gpus_[*current_];
  if (text::starts_with(t, "NVML: Unable to retrieve NVLink information as all links are")) {
    g.all_inactive = true;
    if (g.origin.empty()) g.origin = std::string(origin) + ":" + std::to_string(line_no);
    return true;
  }
  const auto v = link_value(t);
  if (!v) return false;
  header_line_ = line_no;  // a long list of links stays in reach
  if (*v == "<inactive>") {
    ++g.inactive;
    if (g.origin.empty()) g.origin = std::string(origin) + ":" + std::to_string(line_no);
    return true;
  }
  if (text::ends_with(*v, " GB/s") && text::parse_double(v->substr(0, v->size() - 5))) {
    ++g.active;
    return true;
  }
  if (const auto c = counter_value(*v)) {  // judged with DCGM's link counters
    if (!text::parse_u64(*c)) return false;
    const size_t sp = t.find(':');
    g.counters.push_back(
        {std::string(t.substr(0, sp)) + " " + std::string(v->substr(0, v->rfind(": "))),
         std::string(*c), std::string(origin) + ":" + std::to_string(line_no)});
    return true;
  }
  // "-c": "P2P is supported: true", "Remote Device Type: NVSwitch", ... : capabilities.
  return v->find(": ") != std::string_view::npos;
}

void NvlinkStatusScanner::finish(std::vector<DcgmResult>& out) {
  settle();
  for (const Gpu& g : gpus_)
    for (const Counter& c : g.counters) {
      DcgmResult r;
      r.kind = DcgmKind::kReading;
      r.gpu = g.index;
      r.part = "nvidia-smi nvlink -e";
      r.test = c.name;  // "Link 3 Replay Errors"
      r.text = c.value;
      r.origin = c.origin;
      out.push_back(std::move(r));
    }
  for (const Gpu& g : gpus_) {
    const bool some_down = g.inactive > 0 && g.active > 0;
    const bool all_down = g.active == 0 && (g.inactive > 0 || g.all_inactive);
    if (!some_down && !(all_down && is_nvlink_board(g.name))) continue;
    DcgmResult r;
    r.kind = DcgmKind::kNvlinkDown;
    r.gpu = g.index;
    r.part = "nvidia-smi nvlink";
    r.count = static_cast<unsigned>(g.inactive);
    r.of = static_cast<unsigned>(g.inactive + g.active);
    r.origin = g.origin;
    r.text = g.inactive > 0 ? fmt::format("{} ({}): {} link(s) <inactive>, {} active", g.name,
                                          g.index, g.inactive, g.active)
                            : fmt::format(
                                  "{}: NVML: Unable to retrieve NVLink information as all links "
                                  "are inActive",
                                  g.name);
    out.push_back(std::move(r));
  }
}

}  // namespace gw
