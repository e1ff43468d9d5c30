// Plain `nvidia-smi`: a box-drawn table. Each GPU takes two or three '|'-separated lines:
//   |   0  NVIDIA H100 80GB HBM3   On  |   00000000:19:00.0 Off |          0 |
//   | N/A   27C    P0    72W /  700W   |    1MiB /  81559MiB    |  0%  Default |
//   |                                  |                        |     Disabled |  (MIG M.)
// then a Processes table.
#include <array>
#include <string>
#include <vector>

#include "core/event.h"
#include "sources/smi/csv_fields.h"
#include "sources/smi/model_util.h"
#include "sources/smi/smi_parsers.h"
#include "sources/smi/text_util.h"

namespace gw {

namespace {

std::vector<std::string_view> split(std::string_view s, char sep, bool skip_empty) {
  std::vector<std::string_view> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(sep, b);
    if (e == std::string_view::npos) e = s.size();
    const auto c = text::trim(s.substr(b, e - b));
    if (!skip_empty || !c.empty()) out.push_back(c);
    b = e + 1;
  }
  return out;
}

std::vector<std::string_view> words(std::string_view s) {
  return split(s, ' ', true);
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

void header_line(std::string_view line, Snapshot& snap) {
  if (auto p = line.find("Driver Version:"); p != std::string_view::npos) {
    auto w = words(line.substr(p + 15));
    if (!w.empty()) snap.driver_version = std::string(w.front());
  }
  if (auto p = line.find("CUDA Version:"); p != std::string_view::npos) {
    auto w = words(line.substr(p + 13));
    if (!w.empty()) snap.cuda_driver_version = smi::parse_cuda_version(w.front());
    // nvidia-smi could not ask libcuda for its version: the CUDA user-mode driver is broken.
    if (!w.empty() && w.front() == "ERR!") snap.cuda_version_failed = true;
  }
}

// "|   0  NVIDIA H100 80GB HBM3   On  |   00000000:19:00.0 Off |   0 |"
bool gpu_first_line(const std::vector<std::string_view>& cells, Snapshot& snap) {
  if (cells.size() < 3) return false;
  auto w = words(cells[0]);
  if (w.size() < 2 || !all_digits(w.front())) return false;
  auto bus = words(cells[1]);
  if (bus.empty() || !normalize_pci_bus_id(bus.front())) return false;
  GpuState g;
  g.info.index = text::to_unsigned(text::parse_u64(w.front())).value_or(0);
  size_t name_end = w.size();
  if (w.back() == "On" || w.back() == "Off") {
    g.sample.persistence_mode = w.back() == "On";
    --name_end;
  }
  for (size_t i = 1; i < name_end; ++i) {
    if (!g.info.name.empty()) g.info.name += ' ';
    g.info.name += w[i];
  }
  g.info.pci_bus_id = *normalize_pci_bus_id(bus.front());
  g.sample.ecc_dbe_volatile = text::parse_u64(cells[2]);
  if (g.info.name == "ERR!") smi::note_failed_reading("name", g.info.name, g);
  smi::note_failed_reading("ecc.errors.uncorrected.volatile", cells[2], g);
  snap.gpus.push_back(std::move(g));
  return true;
}

// ERR! where a value should be: the cell's fields in the table's order ("Fan Temp Perf
// Pwr:Usage/Cap", "Memory-Usage", "GPU-Util Compute M.").
void note_err_cells(const std::vector<std::string_view>& cells, GpuState& g) {
  static constexpr std::array<std::string_view, 4> kLeft = {"fan.speed", "temperature.gpu",
                                                            "pstate", "power.draw"};
  const auto w = words(cells[0]);
  size_t at = 0;
  bool after_slash = false;
  for (const std::string_view t : w) {
    if (t == "/") {
      after_slash = true;
      continue;
    }
    if (after_slash)
      smi::note_failed_reading("power.limit", t, g);
    else if (at < kLeft.size())
      smi::note_failed_reading(kLeft[at++], t, g);
  }
  for (const std::string_view t : words(cells[1])) smi::note_failed_reading("memory", t, g);
  const auto u = words(cells[2]);
  if (!u.empty()) smi::note_failed_reading("utilization.gpu", u.front(), g);
}

// "| N/A   27C    P0    72W /  700W |   1MiB /  81559MiB |   0%   Default |"
void gpu_second_line(const std::vector<std::string_view>& cells, GpuState& g) {
  note_err_cells(cells, g);
  GpuSample& s = g.sample;
  for (auto t : words(cells[0])) {
    if (text::ends_with(t, "%"))
      s.fan_pct = text::to_unsigned(text::parse_u64(t));
    else if (text::ends_with(t, "C") && t.size() > 1 && t[0] >= '0' && t[0] <= '9')
      s.temp_c = text::to_int(text::parse_i64(t));
    else if (t.size() >= 2 && t[0] == 'P' && t[1] >= '0' && t[1] <= '9')
      s.pstate = text::parse_pstate(t);
  }
  if (auto slash = cells[0].find(" / "); slash != std::string_view::npos) {  // not N/A
    auto left = words(cells[0].substr(0, slash));
    auto right = words(cells[0].substr(slash + 3));
    if (!left.empty()) s.power_mw = text::parse_watts_mw(left.back());
    if (!right.empty()) s.power_limit_mw = text::parse_watts_mw(right.front());
  }
  if (auto m = split(cells[1], '/', false); m.size() == 2) {
    s.mem_used_bytes = text::parse_mem_bytes(m[0]);
    s.mem_total_bytes = text::parse_mem_bytes(m[1]);
    g.info.mem_total_bytes = s.mem_total_bytes;
  }
  auto u = words(cells[2]);
  if (!u.empty()) s.util_gpu_pct = text::to_unsigned(text::parse_u64(u.front()));
  if (u.size() >= 2) {
    const auto cm = u.back();
    if (cm == "Default")
      s.compute_mode = ComputeMode::kDefault;
    else if (cm == "Prohibited")
      s.compute_mode = ComputeMode::kProhibited;
    else if (cm == "Process")
      s.compute_mode = ComputeMode::kExclusiveProcess;
  }
}

// "|    0   N/A  N/A     12345      C   python     1234MiB |"
void process_line(std::string_view body, Snapshot& snap) {
  auto w = words(body);
  if (w.size() < 4 || !all_digits(w.front())) return;
  const auto gpu = text::to_unsigned(text::parse_u64(w.front()));
  size_t type = 0;
  for (size_t i = 2; i + 1 < w.size() && type == 0; ++i)
    if ((w[i] == "C" || w[i] == "G" || w[i] == "C+G" || w[i] == "M" || w[i] == "M+C") &&
        all_digits(w[i - 1]))
      type = i;
  if (type == 0) return;
  ProcessInfo p;
  p.pid = static_cast<uint32_t>(text::parse_u64(w[type - 1]).value_or(0));
  p.graphics = smi::process_type_is_graphics(w[type]);
  std::string name;
  for (size_t i = type + 1; i + 1 < w.size(); ++i)
    name += (name.empty() ? "" : " ") + std::string(w[i]);
  if (!name.empty()) p.name = name;
  p.used_mem_bytes = text::parse_mem_bytes(w.back());
  for (auto& g : snap.gpus)
    if (gpu && g.info.index == *gpu && g.sample.processes) g.sample.processes->push_back(p);
}

}  // namespace

Result<Snapshot> parse_smi_table(std::string_view text, std::string_view origin) {
  Snapshot snap;
  snap.source = "smi-table:" + std::string(origin);
  text::LineReader rd(text::strip_bom(text));
  std::string_view line;
  int gpu_line = 0;  // which line of the current GPU block comes next
  bool in_procs = false;
  while (rd.next(line)) {
    const auto t = text::trim(line);
    if (snap.time_ms == 0 && snap.gpus.empty())
      if (auto ts = text::parse_ctime_ms(t)) snap.time_ms = *ts;
    if (t.find("NVIDIA-SMI") != std::string_view::npos) header_line(t, snap);
    if (t.find("Processes:") != std::string_view::npos) {
      in_procs = true;
      for (auto& g : snap.gpus) g.sample.processes.emplace();
      continue;
    }
    if (t.size() < 2 || t.front() != '|') {
      gpu_line = 0;
      continue;
    }
    const auto body = t.substr(1, t.size() - 2);
    if (in_procs) {
      process_line(body, snap);
      continue;
    }
    auto cells = split(body, '|', false);
    if (gpu_first_line(cells, snap))
      gpu_line = 1;
    else if (gpu_line == 1 && cells.size() >= 3) {
      gpu_second_line(cells, snap.gpus.back());
      gpu_line = 2;
    } else if (gpu_line == 2 && cells.size() >= 3) {
      snap.gpus.back().sample.mig_enabled = text::parse_bool(cells[2]);
      gpu_line = 0;
    }
  }
  if (snap.gpus.empty())
    return make_error("capture.smi_table",
                      "expected GPU rows like '|   0  <name>  On | <bus id> ...' in the table",
                      std::string(origin) + ":" + std::to_string(rd.line_no()));
  for (auto& g : snap.gpus) smi::derive_capabilities(g);
  return snap;
}

}  // namespace gw
