// nvidia-smi topo -m: a tab-separated matrix. Header: GPU0..GPUn [NIC0..] "CPU Affinity"
// "NUMA Affinity" ["GPU NUMA ID"]; then one row per GPU (and NIC), then a Legend.
// The header row carries ANSI underline escapes; empty cells (double tabs) are dropped.
#include <string>
#include <vector>

#include "sources/smi/smi_parsers.h"
#include "sources/smi/text_util.h"

namespace gw {

namespace {

std::vector<std::string> cells(std::string_view line) {
  const std::string clean = text::strip_ansi(line);
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= clean.size()) {
    size_t e = clean.find('\t', b);
    if (e == std::string::npos) e = clean.size();
    const auto c = text::trim(std::string_view(clean).substr(b, e - b));
    if (!c.empty()) out.emplace_back(c);
    b = e + 1;
  }
  return out;
}

bool is_gpu_name(std::string_view s) {
  return s.size() > 3 && text::starts_with(s, "GPU") && s[3] >= '0' && s[3] <= '9';
}

}  // namespace

Result<Topology> parse_smi_topo(std::string_view text, std::string_view origin) {
  text::LineReader rd(text::strip_bom(text));
  std::string_view line;
  std::vector<std::string> header;
  size_t header_line = 0;
  while (rd.next(line)) {
    auto c = cells(line);
    if (!c.empty() && is_gpu_name(c.front()) && line.find("Affinity") != std::string_view::npos) {
      header = std::move(c);
      header_line = rd.line_no();
      break;
    }
  }
  if (header.empty())
    return make_error("capture.smi_topo",
                      "expected a header row 'GPU0 ... CPU Affinity NUMA Affinity' (topo -m)",
                      std::string(origin) + ":1");
  size_t ngpu_cols = 0, ndev_cols = 0;
  while (ndev_cols < header.size() && header[ndev_cols].find("Affinity") == std::string::npos &&
         header[ndev_cols] != "GPU NUMA ID") {
    if (is_gpu_name(header[ndev_cols])) ngpu_cols = ndev_cols + 1;
    ++ndev_cols;
  }
  Topology topo;
  while (rd.next(line)) {
    auto c = cells(line);
    if (c.empty() || text::starts_with(c.front(), "Legend")) break;
    if (!is_gpu_name(c.front())) continue;  // NIC rows: not part of the GPU matrix
    if (c.size() < 1 + ndev_cols)
      return make_error("capture.smi_topo",
                        "expected " + std::to_string(ndev_cols) + " link cells after '" +
                            c.front() + "' (header at line " + std::to_string(header_line) + ")",
                        std::string(origin) + ":" + std::to_string(rd.line_no()));
    topo.gpu_names.push_back(c.front());
    topo.links.emplace_back(c.begin() + 1, c.begin() + 1 + static_cast<ptrdiff_t>(ngpu_cols));
    const size_t cpu = 1 + ndev_cols, numa = cpu + 1;
    auto opt = [&](size_t i) -> std::optional<std::string> {
      if (i >= c.size() || text::is_na(c[i])) return std::nullopt;
      return c[i];
    };
    topo.cpu_affinity.push_back(opt(cpu));
    auto n = opt(numa);
    topo.numa_affinity.push_back(n ? text::to_int(text::parse_i64(*n)) : std::nullopt);
  }
  if (topo.gpu_names.empty())
    return make_error("capture.smi_topo", "expected at least one 'GPUn' row after the header",
                      std::string(origin) + ":" + std::to_string(header_line));
  return topo;
}

}  // namespace gw
