#include "sources/app/nccl_topology.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "sources/smi/text_util.h"

namespace gw {
namespace {

// "0-4e000" / "4E000" -> "4E000": NCCL names a PCI device by bus id, newer versions with the
// domain first.
std::string bus_key(std::string_view id) {
  const size_t dash = id.rfind('-');
  if (dash != std::string_view::npos) id = id.substr(dash + 1);
  std::string out(id);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool is_hex_id(std::string_view s) {
  return !s.empty() && s.size() <= 24 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) || c == '-';
  });
}

// "5/10.0/SYS" -> {"5", "10.0", "SYS"}.
std::vector<std::string_view> slash_parts(std::string_view s) {
  std::vector<std::string_view> out;
  for (size_t b = 0;;) {
    const size_t e = s.find('/', b);
    out.push_back(s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
    if (e == std::string_view::npos) break;
    b = e + 1;
  }
  return out;
}

// "maxBw 24.0 totalBw 24.0" inside "=== System : ... ===".
bool take_system(std::string_view body, NcclTopology& t) {
  if (!text::starts_with(body, "=== System :")) return false;
  const auto w = text::words(body);
  for (size_t i = 0; i + 1 < w.size(); ++i) {
    if (w[i] == "maxBw") t.max_bw_gbs = text::parse_double(w[i + 1]);
    if (w[i] == "totalBw") t.total_bw_gbs = text::parse_double(w[i + 1]);
  }
  return t.max_bw_gbs.has_value();
}

// "GPU/CE000 :GPU/0-4e000 (5/10.0/SYS) CPU/0-1 (2/24.0/PHB) ...": one node's paths.
bool take_paths(std::string_view body, NcclTopology& t) {
  const size_t colon = body.find(" :");
  if (!text::starts_with(body, "GPU/") || colon == std::string_view::npos) return false;
  const std::string from = bus_key(body.substr(4, colon - 4));
  const auto w = text::words(body.substr(colon + 2));
  if (w.empty() || w.size() % 2 != 0) return false;
  std::vector<NcclPath> paths;
  for (size_t i = 0; i < w.size(); i += 2) {
    const std::string_view node = w[i], stats = w[i + 1];
    const size_t slash = node.find('/');
    if (slash == std::string_view::npos || stats.size() < 7 || stats.front() != '(' ||
        stats.back() != ')')
      return false;
    const auto parts = slash_parts(stats.substr(1, stats.size() - 2));
    if (parts.size() != 3) return false;
    const auto bw = text::parse_double(parts[1]);
    if (!bw || !is_hex_id(node.substr(slash + 1))) return false;
    if (node.substr(0, slash) == "GPU" && parts[2] != "LOC")
      paths.push_back({from, bus_key(node.substr(slash + 1)), *bw, std::string(parts[2])});
  }
  // Each rank of each run prints the paths again: the first print of a pair is kept.
  constexpr size_t kMaxPaths = 4096;
  for (auto& p : paths) {
    const bool known = std::any_of(t.gpu_paths.begin(), t.gpu_paths.end(), [&p](const NcclPath& q) {
      return q.from == p.from && q.to == p.to;
    });
    if (!known && t.gpu_paths.size() < kMaxPaths) t.gpu_paths.push_back(std::move(p));
  }
  return true;
}

// The tree dump: "CPU/0-0 (1/1/2)", "+ PCI[24.0] - GPU/0-4e000 (0)", "+ SYS[10.0] - CPU/0-1".
bool take_tree(std::string_view body, NcclTopology& t) {
  if (text::starts_with(body, "+ ")) {
    const size_t open = body.find('[');
    const size_t close = body.find("] - ");
    if (open == std::string_view::npos || close == std::string_view::npos || open > 8 ||
        close < open || !text::parse_double(body.substr(open + 1, close - open - 1)))
      return false;
    std::string kind(text::trim(body.substr(2, open - 2)));
    if (std::find(t.link_kinds.begin(), t.link_kinds.end(), kind) == t.link_kinds.end())
      t.link_kinds.push_back(std::move(kind));
    return true;
  }
  // "CPU/0-0 (1/1/2)", "NET/0 (...)", "NIC/0-..." heads of the tree.
  const size_t slash = body.find('/');
  const size_t space = body.find(" (");
  if (slash == std::string_view::npos || slash > 4 || space == std::string_view::npos ||
      body.back() != ')')
    return false;
  const std::string_view kind = body.substr(0, slash);
  return (kind == "CPU" || kind == "NET" || kind == "NIC" || kind == "PCI" || kind == "NVS") &&
         is_hex_id(body.substr(slash + 1, space - slash - 1));
}

}  // namespace

bool take_nccl_topology_line(std::string_view line, NcclTopology& t) {
  const size_t at = line.find("NCCL INFO ");
  if (at == std::string_view::npos) return false;
  const std::string_view body = text::trim(line.substr(at + 10));
  if (body.empty()) return false;
  return take_system(body, t) || take_paths(body, t) || take_tree(body, t);
}

}  // namespace gw
