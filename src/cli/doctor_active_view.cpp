// The doctor --stress part of the report: per-GPU copy figures beside what the link should
// carry, the load time, and the peer pairs. Pure functions over the Observation.
#include <fmt/format.h>

#include <map>

#include "cli/doctor_report.h"
#include "diagnose/context.h"

namespace gw::cli {
namespace {

std::string gbs(const std::optional<double>& v) {
  return v ? fmt::format("{:.1f}", *v) : std::string("-");
}

std::string link(const std::optional<unsigned>& gen, const std::optional<unsigned>& width) {
  return gen && width ? fmt::format("Gen{} x{}", *gen, *width) : std::string("-");
}

std::string should_carry(const ActiveGpu& a) {
  if (!a.max_gen || !a.max_width) return "-";
  return fmt::format("{} ({:.1f})", link(a.max_gen, a.max_width),
                     pcie_lane_gb_s(*a.max_gen) * *a.max_width);
}

void peers_lines(std::ostream& out, const ActiveReport& r) {
  std::map<std::string, std::vector<const ActivePeer*>> by_path;
  for (const ActivePeer& p : r.peers) by_path[p.expected].push_back(&p);
  for (const auto& [path, pairs] : by_path) {
    size_t access = 0;
    double lo = 1e18, hi = 0;
    std::string none;
    for (const ActivePeer* p : pairs) {
      access += p->access ? 1 : 0;
      if (!p->access) none += fmt::format("{}{}-{}", none.empty() ? "" : ", ", p->a, p->b);
      if (p->gb_s) lo = std::min(lo, *p->gb_s), hi = std::max(hi, *p->gb_s);
    }
    out << fmt::format("  peers over {}: {} pair(s), {} with peer access, {:.1f}-{:.1f} GB/s{}\n",
                       path.empty() ? "unknown path" : path, pairs.size(), access,
                       hi > 0 ? lo : 0.0, hi, none.empty() ? "" : "; no access: " + none);
  }
}

// SM clock and temperature range of one GPU over the samples taken while the load ran.
nlohmann::json load_readings(const DoctorRun& run, unsigned gpu) {
  std::optional<unsigned> clo, chi, max_clock;
  std::optional<int> thi;
  for (const Snapshot& s : run.obs.samples) {
    if (s.time_ms < run.obs.active->load_start_ms) continue;
    for (const GpuState& g : s.gpus) {
      if (g.info.index != gpu || g.access != GpuAccess::kOk) continue;
      if (g.info.max_sm_clock_mhz) max_clock = g.info.max_sm_clock_mhz;
      if (const auto c = g.sample.sm_clock_mhz) {
        clo = std::min(clo.value_or(*c), *c);
        chi = std::max(chi.value_or(*c), *c);
      }
      if (const auto t = g.sample.temp_c) thi = std::max(thi.value_or(*t), *t);
    }
  }
  const auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"max_sm_clock_mhz", opt(max_clock)},
          {"load_sm_clock_min_mhz", opt(clo)},
          {"load_sm_clock_max_mhz", opt(chi)},
          {"load_temp_max_c", opt(thi)}};
}

}  // namespace

void active_block(std::ostream& out, const DoctorRun& run) {
  if (!run.obs.active) return;
  const ActiveReport& r = *run.obs.active;
  out << fmt::format("\nStress: {:.0f} s planned{}\n", r.planned_s,
                     r.cuda_source.empty() ? "" : ", " + r.cuda_source);
  if (r.cuda_error) out << "  not run: " << *r.cuda_error << "\n";
  if (r.stopped) out << "  stopped early: " << *r.stopped << "\n";
  if (!r.xid_watch.empty()) out << "  " << r.xid_watch << "\n";
  out << fmt::format("  {:<4} {:>8} {:>8} {:>8}  {:<17} {:<22} {:>7}\n", "GPU", "H2D GB/s",
                     "D2H GB/s", "both", "link after copies", "link max (GB/s)", "load s");
  for (const ActiveGpu& a : r.gpus) {
    if (a.refused) {
      out << fmt::format("  {:<4} not loaded: {}\n", a.gpu, *a.refused);
      continue;
    }
    out << fmt::format("  {:<4} {:>8} {:>8} {:>8}  {:<17} {:<22} {:>7.1f}\n", a.gpu,
                       gbs(a.h2d_gb_s), gbs(a.d2h_gb_s), gbs(a.bidir_gb_s),
                       link(a.link_gen, a.link_width), should_carry(a), a.load_s);
    if (a.error) out << fmt::format("       error: {}\n", *a.error);
  }
  peers_lines(out, r);
}

nlohmann::json active_json(const DoctorRun& run) {
  if (!run.obs.active) return nullptr;
  const ActiveReport& r = *run.obs.active;
  const auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json gpus = nlohmann::json::array();
  for (const ActiveGpu& a : r.gpus) {
    const bool carry = a.max_gen && a.max_width;
    gpus.push_back({{"gpu", a.gpu},
                    {"name", a.name},
                    {"refused", opt(a.refused)},
                    {"h2d_gb_s", opt(a.h2d_gb_s)},
                    {"d2h_gb_s", opt(a.d2h_gb_s)},
                    {"bidir_gb_s", opt(a.bidir_gb_s)},
                    {"link_gen", opt(a.link_gen)},
                    {"link_width", opt(a.link_width)},
                    {"max_gen", opt(a.max_gen)},
                    {"max_width", opt(a.max_width)},
                    {"link_should_carry_gb_s",
                     carry ? nlohmann::json(pcie_lane_gb_s(*a.max_gen) * *a.max_width)
                           : nlohmann::json(nullptr)},
                    {"load_s", a.load_s},
                    {"error", opt(a.error)}});
    gpus.back().update(load_readings(run, a.gpu));
  }
  nlohmann::json peers = nlohmann::json::array();
  for (const ActivePeer& p : r.peers)
    peers.push_back({{"a", p.a},
                     {"b", p.b},
                     {"access", p.access},
                     {"gb_s", opt(p.gb_s)},
                     {"expected", p.expected},
                     {"error", opt(p.error)}});
  return {{"planned_s", r.planned_s},
          {"cuda", r.cuda_source},
          {"cuda_error", opt(r.cuda_error)},
          {"stopped", opt(r.stopped)},
          {"xid_watch", r.xid_watch},
          {"gpus", gpus},
          {"peers", peers}};
}

}  // namespace gw::cli
