// nvidia-smi topo -m: a matrix. Header: GPU0..GPUn [NIC0..] "CPU Affinity" "NUMA Affinity"
// ["GPU NUMA ID"]; then one row per GPU and per NIC, then a Legend and a NIC Legend.
// Cells are tab-separated as printed, but pasted copies often have the tabs expanded to
// spaces (cells then sit one or more spaces apart) and a prompt or title line above the header:
// rows are read as whitespace-separated tokens (no data cell has a space) and the header's
// multi-word names are re-joined. The header row carries ANSI underline escapes.
#include <string>
#include <vector>

#include "sources/smi/smi_parsers.h"
#include "sources/smi/text_util.h"

namespace gw {

namespace {

std::vector<std::string> tokens(std::string_view line) {
  const std::string clean = text::has_escape(line) ? text::strip_ansi(line) : std::string(line);
  std::vector<std::string> out;
  size_t i = 0;
  while (i < clean.size()) {
    while (i < clean.size() && text::is_space(clean[i])) ++i;
    size_t e = i;
    while (e < clean.size() && !text::is_space(clean[e])) ++e;
    if (e > i) out.emplace_back(clean.substr(i, e - i));
    i = e;
  }
  return out;
}

// Header tokens with "CPU Affinity", "NUMA Affinity", "GPU NUMA ID" joined back.
std::vector<std::string> header_cells(std::string_view line) {
  auto t = tokens(line);
  std::vector<std::string> out;
  for (size_t i = 0; i < t.size(); ++i) {
    if ((t[i] == "CPU" || t[i] == "NUMA") && i + 1 < t.size() && t[i + 1] == "Affinity") {
      out.push_back(t[i] + " Affinity");
      ++i;
    } else if (t[i] == "GPU" && i + 2 < t.size() && t[i + 1] == "NUMA" && t[i + 2] == "ID") {
      out.emplace_back("GPU NUMA ID");
      i += 2;
    } else {
      out.push_back(t[i]);
    }
  }
  return out;
}

bool numbered(std::string_view s, std::string_view prefix) {
  if (s.size() <= prefix.size() || !text::starts_with(s, prefix)) return false;
  for (char c : s.substr(prefix.size()))
    if (c < '0' || c > '9') return false;
  return true;
}

bool is_gpu_name(std::string_view s) {
  return numbered(s, "GPU");
}
bool is_nic_name(std::string_view s) {
  return numbered(s, "NIC");
}

std::optional<std::string> opt_cell(const std::vector<std::string>& c, size_t i) {
  if (i >= c.size() || text::is_na(c[i])) return std::nullopt;
  return c[i];
}

}  // namespace

bool looks_like_topo_header(std::string_view line) {
  const auto c = header_cells(line);
  if (c.empty() || !is_gpu_name(c.front())) return false;
  if (line.find("Affinity") != std::string_view::npos) return true;
  for (const auto& x : c)
    if (!is_gpu_name(x) && !is_nic_name(x)) return false;
  return c.size() >= 2;
}

namespace {

// A NIC Legend line, "NIC0: mlx5_0": the device behind that NIC column.
void read_nic_legend(std::string_view t, Topology& topo) {
  const size_t colon = t.find(':');
  if (colon == std::string_view::npos || !is_nic_name(t.substr(0, colon))) return;
  const std::string name(t.substr(0, colon));
  for (size_t k = 0; k < topo.nic_names.size(); ++k)
    if (topo.nic_names[k] == name)
      topo.nic_devices[k] = std::string(text::trim(t.substr(colon + 1)));
}

}  // namespace

Result<Topology> parse_smi_topo(std::string_view text, std::string_view origin) {
  text::LineReader rd(text::strip_bom(text));
  std::string_view line;
  std::vector<std::string> header;
  size_t header_line = 0;
  while (rd.next(line)) {
    if (looks_like_topo_header(line)) {
      header = header_cells(line);
      header_line = rd.line_no();
      break;
    }
  }
  if (header.empty())
    return make_error("capture.smi_topo",
                      "expected a header row 'GPU0 ... CPU Affinity NUMA Affinity' (topo -m)",
                      std::string(origin) + ":1");
  size_t ngpu = 0, nnic = 0, ndev = 0;
  while (ndev < header.size() && (is_gpu_name(header[ndev]) || is_nic_name(header[ndev]))) {
    if (is_gpu_name(header[ndev])) ++ngpu;
    if (is_nic_name(header[ndev])) ++nnic;
    ++ndev;
  }
  // Affinity columns after the device columns, by name (old drivers lack some).
  size_t cpu_col = 0, numa_col = 0, gpu_numa_col = 0;
  for (size_t i = ndev; i < header.size(); ++i) {
    if (header[i] == "CPU Affinity") cpu_col = i + 1;  // +1: the row's own name comes first
    if (header[i] == "NUMA Affinity") numa_col = i + 1;
    if (header[i] == "GPU NUMA ID") gpu_numa_col = i + 1;
  }
  Topology topo;
  for (size_t i = ngpu; i < ndev; ++i) topo.nic_names.push_back(header[i]);
  topo.nic_devices.assign(topo.nic_names.size(), std::nullopt);
  bool in_legend = false;
  while (rd.next(line)) {
    const std::string_view t = text::trim(line);
    if (t.empty()) continue;
    if (text::starts_with(t, "Legend") || text::starts_with(t, "NIC Legend")) {
      in_legend = true;
      continue;
    }
    if (in_legend) {
      read_nic_legend(t, topo);
      continue;
    }
    auto c = tokens(line);
    if (c.empty()) continue;  // only terminal control sequences (found by fuzz_smi_topo)
    const bool gpu_row = is_gpu_name(c.front()), nic_row = is_nic_name(c.front());
    if (!gpu_row && !nic_row) continue;
    if (c.size() < 1 + ndev)
      return make_error("capture.smi_topo",
                        "expected " + std::to_string(ndev) + " link cells after '" + c.front() +
                            "' (header at line " + std::to_string(header_line) + ")",
                        std::string(origin) + ":" + std::to_string(rd.line_no()));
    // Older drivers wrote "SOC" for a path across CPU sockets where today's write "SYS".
    for (auto& cell : c)
      if (cell == "SOC") cell = "SYS";
    const auto first = c.begin() + 1;
    if (nic_row) {
      topo.nic_links.emplace_back(first + static_cast<ptrdiff_t>(ngpu),
                                  first + static_cast<ptrdiff_t>(ndev));
      continue;
    }
    topo.gpu_names.push_back(c.front());
    topo.links.emplace_back(first, first + static_cast<ptrdiff_t>(ngpu));
    topo.gpu_nic_links.emplace_back(first + static_cast<ptrdiff_t>(ngpu),
                                    first + static_cast<ptrdiff_t>(ndev));
    topo.cpu_affinity.push_back(cpu_col ? opt_cell(c, cpu_col) : std::nullopt);
    auto n = numa_col ? opt_cell(c, numa_col) : std::nullopt;
    topo.numa_affinity.push_back(n ? text::to_int(text::parse_i64(*n)) : std::nullopt);
    auto g = gpu_numa_col ? opt_cell(c, gpu_numa_col) : std::nullopt;
    topo.gpu_numa_id.push_back(g ? text::to_int(text::parse_i64(*g)) : std::nullopt);
  }
  if (topo.gpu_names.empty())
    return make_error("capture.smi_topo", "expected at least one 'GPUn' row after the header",
                      std::string(origin) + ":" + std::to_string(header_line));
  return topo;
}

}  // namespace gw
