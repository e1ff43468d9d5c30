// The report as text for a person and as JSON for the API, the epilog and the web page.
#include <fmt/format.h>

#include "jobreport/jobreport.h"

namespace gw::jobreport {
namespace {

template <class T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string opt_text(const std::optional<double>& v, const char* f) {
  return v ? fmt::format(fmt::runtime(f), *v) : "n/a";
}

void gpu_text(const GpuFigures& g, std::string& out) {
  out += fmt::format("  GPU {} ({})\n", g.index ? std::to_string(*g.index) : "?", g.uuid);
  out +=
      fmt::format("    utilization mean {}  distribution", opt_text(g.util_mean_pct, "{:.0f} %"));
  for (const auto& [bucket, share] : g.util_distribution)
    out += fmt::format("  {}%: {:.0f} %", bucket, share * 100);
  out += fmt::format(
      "\n    peak VRAM {}  energy {}  mean power {}\n",
      opt_text(g.peak_mem_bytes ? std::optional<double>(*g.peak_mem_bytes / 1e9) : std::nullopt,
               "{:.1f} GB"),
      opt_text(g.energy_j ? std::optional<double>(*g.energy_j / 3.6e6) : std::nullopt,
               "{:.3f} kWh"),
      opt_text(g.mean_power_w, "{:.0f} W"));
  for (const ThrottleShare& t : g.throttles)
    out += fmt::format("    throttled by {} {:.0f} % of the time{}\n", t.reason, t.share * 100,
                       t.mean_temp_c ? fmt::format(" at {:.0f} °C", *t.mean_temp_c) : "");
  out +=
      fmt::format("    under load: SM clock {} of max {}, PCIe Gen{} x{}, {}\n",
                  opt_text(g.load_sm_clock_mhz, "{:.0f} MHz"),
                  opt_text(g.max_sm_clock_mhz, "{:.0f} MHz"), opt_text(g.load_pcie_gen, "{:.0f}"),
                  opt_text(g.load_pcie_width, "{:.0f}"), opt_text(g.load_pcie_mb_s, "{:.0f} MB/s"));
  if (!g.shared_with.empty())
    out += "    shared with other jobs: the figures above are the whole GPU's\n";
}

nlohmann::json gpu_json(const GpuFigures& g) {
  nlohmann::json t = nlohmann::json::array();
  for (const ThrottleShare& s : g.throttles)
    t.push_back({{"reason", s.reason}, {"share", s.share}, {"mean_temp_c", opt(s.mean_temp_c)}});
  return {{"uuid", g.uuid},
          {"index", opt(g.index)},
          {"sampled_s", g.sampled_s},
          {"util_mean_pct", opt(g.util_mean_pct)},
          {"util_distribution", g.util_distribution},
          {"idle_share", opt(g.idle_share)},
          {"peak_mem_bytes", opt(g.peak_mem_bytes)},
          {"energy_j", opt(g.energy_j)},
          {"mean_power_w", opt(g.mean_power_w)},
          {"throttled", t},
          {"load_sm_clock_mhz", opt(g.load_sm_clock_mhz)},
          {"max_sm_clock_mhz", opt(g.max_sm_clock_mhz)},
          {"load_pcie_gen", opt(g.load_pcie_gen)},
          {"load_pcie_width", opt(g.load_pcie_width)},
          {"load_pcie_mb_s", opt(g.load_pcie_mb_s)},
          {"hang_s", g.hang_s},
          {"shared_with", g.shared_with},
          {"attributable", g.shared_with.empty()}};
}

}  // namespace

std::string render_text(const JobReport& r) {
  std::string out = fmt::format("Job {}: {:.0f} s", r.job_id,
                                static_cast<double>(r.end_ms - r.start_ms) / 1000.0);
  if (r.cpu_cores) out += fmt::format(", {:.1f} CPU cores on average", *r.cpu_cores);
  out += "\n";
  if (r.no_data)
    out += "  no history samples fall into the job's time span (was the daemon running?)\n";
  out += r.causes.empty() ? "Causes: none found\n" : "Causes, most likely first:\n";
  for (size_t i = 0; i < r.causes.size(); ++i)
    out += fmt::format("  {}. {}\n", i + 1, r.causes[i].text);
  out += "GPUs:\n";
  for (const GpuFigures& g : r.gpus) gpu_text(g, out);
  if (!r.events.empty()) out += "Events:\n";
  for (const EventLine& e : r.events)
    out += fmt::format("  +{:.0f} s {} {}{}: {}\n", e.t_rel_s,
                       e.gpu ? fmt::format("GPU {}", *e.gpu) : "host", e.kind,
                       e.code ? " " + std::to_string(*e.code) : "", e.message);
  return out;
}

nlohmann::json render_json(const JobReport& r) {
  nlohmann::json gpus = nlohmann::json::array(), events = nlohmann::json::array(),
                 causes = nlohmann::json::array();
  for (const GpuFigures& g : r.gpus) gpus.push_back(gpu_json(g));
  for (const EventLine& e : r.events)
    events.push_back({{"t_rel_s", e.t_rel_s},
                      {"gpu", opt(e.gpu)},
                      {"kind", e.kind},
                      {"code", opt(e.code)},
                      {"message", e.message}});
  for (const Cause& c : r.causes)
    causes.push_back({{"code", c.code}, {"score", c.score}, {"gpu", opt(c.gpu)}, {"text", c.text}});
  return {{"job_id", r.job_id},   {"start_ms", r.start_ms},
          {"end_ms", r.end_ms},   {"cpu_cores", opt(r.cpu_cores)},
          {"no_data", r.no_data}, {"causes", causes},
          {"gpus", gpus},         {"events", events}};
}

}  // namespace gw::jobreport
