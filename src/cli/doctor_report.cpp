#include "cli/doctor_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <ostream>

#include "diagnose/diagnose.h"
#include "diagnose/topology.h"

namespace gw::cli {
namespace {

std::vector<std::string> coverage_reasons(const DoctorRun& run);

struct Paint {
  bool on;
  std::string operator()(std::string_view code, std::string_view text) const {
    return on ? fmt::format("\033[{}m{}\033[0m", code, text) : std::string(text);
  }
};

std::string_view sev_color(Severity s) {
  switch (s) {
    case Severity::kCritical:
      return "1;31";
    case Severity::kWarning:
      return "33";
    case Severity::kInfo:
      return "36";
  }
  return "0";
}

std::string upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

// Who a finding is about: "GPU 3", "PCI 00000000:19:00.0" or "host".
std::string subject_of(const Finding& f) {
  if (f.gpu) return fmt::format("GPU {}", *f.gpu);
  if (f.pci_bus_id) return "PCI " + *f.pci_bus_id;
  return "host";
}

// The order of the verdict lines: GPUs by index (GPU 2 before GPU 10), then GPUs known by their
// PCI address alone, then the host.
bool subject_before(const std::string& a, const std::string& b) {
  auto rank = [](const std::string& s) -> std::pair<int, unsigned long> {
    if (s.rfind("GPU ", 0) == 0) return {0, std::stoul(s.substr(4))};
    return {s == "host" ? 2 : 1, 0};
  };
  const auto ra = rank(a), rb = rank(b);
  return ra != rb ? ra < rb : a < b;
}

// The title without its leading "GPU 3 (00000000:81:00.0) " (the verdict line names the GPU).
std::string short_title(const Finding& f) {
  if (!f.gpu) return f.title;
  std::string prefix = fmt::format("GPU {} ", *f.gpu);
  if (f.pci_bus_id) {
    const std::string with_pci = fmt::format("GPU {} ({}) ", *f.gpu, *f.pci_bus_id);
    if (f.title.rfind(with_pci, 0) == 0) return f.title.substr(with_pci.size());
  }
  if (f.title.rfind(prefix, 0) == 0) return f.title.substr(prefix.size());
  return f.title;
}

struct Counts {
  size_t critical = 0, warning = 0, info = 0;
};

Counts count(const std::vector<Finding>& fs) {
  Counts c;
  for (const Finding& f : fs) {
    if (f.severity == Severity::kCritical)
      ++c.critical;
    else if (f.severity == Severity::kWarning)
      ++c.warning;
    else
      ++c.info;
  }
  return c;
}

std::string headline(const DoctorRun& run, const Paint& paint) {
  const Counts c = count(run.findings);
  const int code = doctor_exit_code(run);
  std::string verdict = code == kDoctorNoInput      ? paint("1;31", "NO DIAGNOSIS")
                        : code == kDoctorCritical   ? paint("1;31", "CRITICAL")
                        : code == kDoctorWarning    ? paint("33", "WARNING")
                        : code == kDoctorIncomplete ? paint("33", "INCOMPLETE")
                                                    : paint("32", "HEALTHY");
  // Worse findings keep their verdict; the missing part is still said up front.
  const size_t missing = incomplete_reasons(run).size();
  if (missing > 0 && code != kDoctorIncomplete && code != kDoctorNoInput)
    verdict += " (incomplete)";
  std::string line =
      fmt::format("{}: {} critical, {} warning, {} info", verdict, c.critical, c.warning, c.info);
  if (code == kDoctorIncomplete)
    line += " (nothing wrong in what was read, but part of the input could not be read)";
  return line;
}

std::string source_line(const DoctorRun& run) {
  size_t gpus = run.obs.samples.empty() ? 0 : run.obs.samples.back().gpus.size();
  std::string s =
      fmt::format("source: {} | {} GPU(s)", run.source.empty() ? "none" : run.source, gpus);
  if (run.obs.samples.size() > 1 && run.window_s > 0)
    s += fmt::format(" | {:.0f} s window, {} samples", run.window_s, run.obs.samples.size());
  else if (run.obs.samples.size() > 1)
    s += fmt::format(" | {} samples", run.obs.samples.size());
  else if (run.obs.samples.size() == 1)
    s += " | one snapshot";
  if (!run.obs.events.empty()) s += fmt::format(" | {} kernel-log event(s)", run.obs.events.size());
  return s;
}

// The affirmative answer in a GPU's line: the figures its last sample carries, said when no
// rule found anything wrong with them ("ok  34 C, 71 W of 700 W, 0 % busy, 1.2 of 80 GiB").
std::string normal_figures(const GpuSample& s) {
  std::vector<std::string> parts;
  if (s.temp_c) parts.push_back(fmt::format("{} C", *s.temp_c));
  if (s.power_mw && s.power_limit_mw)
    parts.push_back(fmt::format("{} W of {} W", *s.power_mw / 1000, *s.power_limit_mw / 1000));
  else if (s.power_mw)
    parts.push_back(fmt::format("{} W", *s.power_mw / 1000));
  if (s.util_gpu_pct) parts.push_back(fmt::format("{} % busy", *s.util_gpu_pct));
  if (s.mem_used_bytes && s.mem_total_bytes && *s.mem_total_bytes > 0)
    parts.push_back(fmt::format("{:.1f} of {:.0f} GiB",
                                static_cast<double>(*s.mem_used_bytes) / 1073741824.0,
                                static_cast<double>(*s.mem_total_bytes) / 1073741824.0));
  if (s.ecc_enabled == true && s.ecc_dbe_volatile)
    parts.push_back(fmt::format("ECC on, {} uncorrectable", *s.ecc_dbe_volatile));
  if (s.fabric_state == FabricState::kCompleted && s.fabric_status == "Success" &&
      s.fabric_healthy != false)
    parts.push_back(s.fabric_healthy == true ? "NVSwitch fabric registered and healthy"
                                             : "NVSwitch fabric registered");
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

void verdict_lines(std::ostream& out, const DoctorRun& run, const Paint& paint) {
  // Worst finding per subject, in GPU order, then kernel-log-only GPUs, then the host.
  std::map<std::string, const Finding*> worst;
  std::map<std::string, size_t> n;
  for (const Finding& f : run.findings) {
    const std::string s = subject_of(f);
    ++n[s];
    if (!worst.count(s) || f.severity > worst[s]->severity) worst[s] = &f;
  }
  auto line = [&](const std::string& subj, const std::string& label, const GpuSample* s) {
    const auto it = worst.find(subj);
    if (it == worst.end()) {
      const std::string figures = s ? normal_figures(*s) : "";
      out << fmt::format("  {:<58} {}{}\n", label, paint("32", "ok"),
                         figures.empty() ? "" : "  " + figures);
      return;
    }
    const Finding& f = *it->second;
    std::string more = n[subj] > 1 ? fmt::format(" (+{} more)", n[subj] - 1) : "";
    out << fmt::format("  {:<58} {} {}{}\n", label,
                       paint(sev_color(f.severity), upper(severity_name(f.severity))),
                       short_title(f), more);
    worst.erase(it);
  };
  if (!run.obs.samples.empty()) {
    for (const GpuState& g : run.obs.samples.back().gpus) {
      std::string label =
          fmt::format("GPU {}  {}  {}", g.info.index, g.info.pci_bus_id, g.info.name);
      if (label.size() > 58) label.resize(58);
      line(fmt::format("GPU {}", g.info.index), label, &g.sample);
    }
  }
  std::vector<std::string> rest;
  for (const auto& [subj, f] : worst) rest.push_back(subj);
  std::sort(rest.begin(), rest.end(), subject_before);
  for (const auto& subj : rest) line(subj, subj, nullptr);
}

// One block per finding; the same finding on 3+ GPUs prints once with the GPU list, so an
// 8-GPU node with one platform problem stays readable.
void finding_blocks(std::ostream& out, const std::vector<const Finding*>& fs, const Paint& paint) {
  std::vector<bool> done(fs.size(), false);
  for (size_t i = 0; i < fs.size(); ++i) {
    if (done[i]) continue;
    const Finding& f = *fs[i];
    std::vector<unsigned> same;
    for (size_t j = i; j < fs.size(); ++j) {
      const Finding& o = *fs[j];
      if (o.gpu && f.gpu && o.code == f.code && short_title(o) == short_title(f) &&
          o.remedy == f.remedy) {
        same.push_back(*o.gpu);
      }
    }
    const bool grouped = same.size() >= 3;
    std::string title = f.title;
    if (grouped) {
      std::string list;
      for (unsigned g : same) list += (list.empty() ? "" : ", ") + std::to_string(g);
      title = fmt::format("GPUs {}: {}", list, short_title(f));
      for (size_t j = i; j < fs.size(); ++j) {
        if (fs[j]->gpu && std::count(same.begin(), same.end(), *fs[j]->gpu) &&
            fs[j]->code == f.code && short_title(*fs[j]) == short_title(f))
          done[j] = true;
      }
    }
    out << fmt::format("  {} {}\n", paint(sev_color(f.severity), "[" + f.code + "]"), title);
    if (grouped)
      out << fmt::format("      (evidence from GPU {}; the others read alike)\n", *f.gpu);
    for (const std::string& e : f.evidence) out << "      - " << e << "\n";
    out << "      fix: " << f.remedy << "\n";
  }
}

// The topology input, when there is one: what a reader checks before placing a multi-GPU job.
void topology_block(std::ostream& out, const DoctorRun& run) {
  if (!run.obs.topology) return;
  const TopologySummary t = summarize_topology(*run.obs.topology);
  out << fmt::format("\nTopology: {} GPU(s), {} pair(s)\n", t.gpus, t.pairs);
  for (const LinkCount& l : t.by_link)
    out << fmt::format("  {:<5} {:>3} pair(s): {}\n", l.link, l.pairs, l.words);
  if (t.nvlink_pairs > 0)
    out << fmt::format("  NVLink: {} of {} pairs, {} links in all\n", t.nvlink_pairs, t.pairs,
                       t.nvlinks);
  else if (t.pairs > 0)
    out << "  NVLink: none between these GPUs\n";
  for (const GpuAffinity& a : t.affinity) {
    out << fmt::format("  {:<5} CPU affinity {}, NUMA node {}\n", a.gpu, a.cpus.value_or("n/a"),
                       a.numa ? std::to_string(*a.numa) : std::string("n/a"));
  }
  if (!t.cross_socket.empty()) {
    std::string list;
    for (const TopologyPair& p : t.cross_socket)
      list += (list.empty() ? "" : ", ") + p.a + "-" + p.b;
    out << fmt::format("  cross-socket pairs (different NUMA nodes): {}\n", list);
  } else if (t.numa_nodes == 1) {
    out << "  cross-socket pairs: none (every GPU reports the same NUMA node)\n";
  }
  for (const NicLocality& n : t.nics) {
    std::string gpus;
    for (const std::string& g : n.nearest) gpus += (gpus.empty() ? "" : ", ") + g;
    out << fmt::format("  {} nearest GPU(s) {} via {}\n", n.nic, gpus.empty() ? "none" : gpus,
                       n.best_link);
  }
}

// What each captured input held and how much of it was understood.
void inputs_block(std::ostream& out, const DoctorRun& run) {
  if (run.obs.coverage.empty()) return;
  out << "\nInputs:\n";
  for (const InputCoverage& c : run.obs.coverage) {
    std::string formats;
    for (const std::string& f : c.formats) formats += (formats.empty() ? "" : ", ") + f;
    std::string line = fmt::format("  {}: {} ({} lines", c.origin,
                                   formats.empty() ? "nothing recognised" : formats, c.lines);
    if (c.lines_not_understood > 0) {
      line += fmt::format(", {} not understood", c.lines_not_understood);
      if (c.gpu_lines_not_read > 0)
        line += fmt::format(" ({} naming the GPU stack)", c.gpu_lines_not_read);
      if (c.first_not_understood_line)
        line += fmt::format(", first at line {}", *c.first_not_understood_line);
    }
    out << line << (c.incomplete ? ", incomplete)\n" : ")\n");
  }
}

void render_one(std::ostream& out, const DoctorRun& run, const Paint& paint) {
  out << source_line(run) << "\n\n";
  verdict_lines(out, run, paint);
  for (Severity sev : {Severity::kCritical, Severity::kWarning, Severity::kInfo}) {
    std::vector<const Finding*> these;
    for (const Finding& f : run.findings) {
      if (f.severity == sev) these.push_back(&f);
    }
    if (these.empty()) continue;
    out << "\n" << paint(sev_color(sev), upper(severity_name(sev))) << "\n";
    finding_blocks(out, these, paint);
  }
  if (run.obs.source_error && run.findings.empty())
    out << "\nGPU source failed: " << run.obs.source_error->to_string() << "\n";
  active_block(out, run);
  topology_block(out, run);
  inputs_block(out, run);
  if (!run.obs.input_errors.empty()) {
    out << "\nCould not read:\n";
    for (const Error& e : run.obs.input_errors) out << "  " << e.to_string() << "\n";
  }
  if (const auto missing = coverage_reasons(run); !missing.empty()) {
    out << "\nNot read (the verdict is incomplete):\n";
    for (const std::string& m : missing) out << "  " << m << "\n";
  }
  for (const std::string& note : run.notes) out << "\nnote: " << note << "\n";
}

}  // namespace

namespace {

// Unread lines that name no GPU, driver, CUDA, NCCL or DCGM (a banner, a prompt, a stray
// word) weigh only when they are more than a few and more than a tenth of the input: one
// decorative line does not make a complete diagnosis incomplete.
bool other_lines_weigh(const InputCoverage& cov) {
  const size_t other =
      cov.lines_not_understood - std::min(cov.lines_not_understood, cov.gpu_lines_not_read);
  return other > 3 && other * 10 > cov.lines;
}

// Each unread GPU line by file:line, the first few with their text.
void gpu_unread_reasons(const InputCoverage& cov, std::vector<std::string>& out) {
  if (cov.gpu_lines_not_read == 0) return;
  out.push_back(
      fmt::format("{} line{} naming a GPU, its driver, CUDA, NCCL or DCGM not read in {}:",
                  cov.gpu_lines_not_read, cov.gpu_lines_not_read == 1 ? "" : "s", cov.origin));
  for (const UnreadLine& u : cov.gpu_unread)
    out.push_back(fmt::format("  {}:{}: {}", cov.origin, u.line, u.excerpt));
  if (cov.gpu_lines_not_read > cov.gpu_unread.size())
    out.push_back(fmt::format("  ... and {} more", cov.gpu_lines_not_read - cov.gpu_unread.size()));
}

// The coverage part of incomplete_reasons(); the input errors follow it there.
std::vector<std::string> coverage_reasons(const DoctorRun& run) {
  std::vector<std::string> out;
  for (const InputCoverage& cov : run.obs.coverage) {
    gpu_unread_reasons(cov, out);
    if (other_lines_weigh(cov)) {
      std::string line = fmt::format("{} line{} not understood in {}", cov.lines_not_understood,
                                     cov.lines_not_understood == 1 ? "" : "s", cov.origin);
      if (cov.first_not_understood_line)
        line += fmt::format(", first at line {}", *cov.first_not_understood_line);
      out.push_back(std::move(line));
    }
    for (const std::string& r : cov.incomplete_reasons) out.push_back(cov.origin + ": " + r);
    if (cov.incomplete && cov.incomplete_reasons.empty())
      out.push_back(cov.origin + ": cut short or partly unreadable");
  }
  return out;
}

}  // namespace

std::vector<std::string> incomplete_reasons(const DoctorRun& run) {
  std::vector<std::string> out = coverage_reasons(run);
  for (const Error& e : run.obs.input_errors) out.push_back("could not read: " + e.to_string());
  return out;
}

int doctor_exit_code(const DoctorRun& run) {
  // Nothing read and nothing concluded: no diagnosis was possible.
  if (run.inputs_read == 0 && run.findings.empty()) return kDoctorNoInput;
  switch (worst_severity(run.findings)) {
    case Severity::kCritical:
      return kDoctorCritical;
    case Severity::kWarning:
      return kDoctorWarning;
    case Severity::kInfo:
      break;
  }
  return incomplete_reasons(run).empty() ? kDoctorHealthy : kDoctorIncomplete;
}

void render_doctor_text(std::ostream& out, const DoctorRun& run, const DoctorRun* demo,
                        bool color) {
  const Paint paint{color};
  if (demo) {
    out << paint("1",
                 "No NVIDIA driver on this machine: showing its host checks, then the "
                 "bundled demo fleet (gpuwarden doctor --demo).")
        << "\n";
  }
  out << "gpuwarden doctor " << (demo ? "(this machine) " : "") << headline(run, paint) << "\n";
  render_one(out, run, paint);
  if (demo) {
    out << "\n"
        << paint("1", "Demo fleet")
        << " (simulated GPUs, not this machine): " << headline(*demo, paint) << "\n";
    render_one(out, *demo, paint);
  }
}

std::string list_checks_text() {
  std::string out = fmt::format("{:<28} {:<9} {}\n", "CODE", "SEVERITY", "WHAT IT MEANS");
  for (const RuleInfo& r : rule_registry())
    out += fmt::format("{:<28} {:<9} {}\n", r.code, severity_name(r.severity), r.title);
  out += "\nDetails and remedies: docs/checks.md (gpuwarden doctor --list-checks --markdown)\n";
  return out;
}

}  // namespace gw::cli
