// Rules over the plain values DCGM's tools printed (DcgmKind::kReading): `dcgmi discovery -l`
// (which GPUs DCGM sees and whether it could read them), `dcgmi dmon` fields of any id (error
// counters, NVLink traffic, fields DCGM returned no value for) and `dcgmi stats` job reports
// (errors during the job, time spent slowed down, a report with nothing recorded). What each
// field means comes from the field table (core/dcgm_fields.h); stats rows are named onto it.
#include <fmt/format.h>

#include <array>
#include <map>
#include <set>

#include "core/dcgm_fields.h"
#include "diagnose/context.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

std::vector<const DcgmResult*> readings(const DiagnoseContext& c, std::string_view part) {
  std::vector<const DcgmResult*> out;
  for (const DcgmResult& r : c.obs.dcgm)
    if (r.kind == DcgmKind::kReading && r.part == part) out.push_back(&r);
  return out;
}

std::optional<double> value_of(const std::string& v) {
  if (v.empty() || !(std::isdigit(static_cast<unsigned char>(v[0])) != 0)) return std::nullopt;
  try {
    return std::stod(v);
  } catch (...) {
    return std::nullopt;
  }
}

bool no_value(const std::string& v) {
  return v.empty() || v == "N/A" || v == "N/S" || v.rfind("Not ", 0) == 0 ||
         v.find("N/A") != std::string::npos;
}

std::string gpu_list(const std::set<unsigned>& gpus) {
  std::string out;
  for (unsigned g : gpus) out += (out.empty() ? "" : ", ") + std::to_string(g);
  return out;
}

// ---- discovery ----

bool unreadable_name(const std::string& name) {
  return name.empty() || name.find("NULL") != std::string::npos || name == "Unknown" ||
         name == "N/A";
}

struct Listed {
  std::map<unsigned, std::map<std::string, std::string>> gpus;  // id -> key -> value
  std::string origin, found;                                    // the table; "4 GPUs found"
};

Listed discovery_of(const DiagnoseContext& c) {
  Listed l;
  for (const DcgmResult* r : readings(c, "dcgmi discovery")) {
    if (r->test == "GPUs found" && l.found.empty()) l.found = r->text;
    if (!r->gpu) continue;
    if (l.origin.empty()) l.origin = r->block;
    l.gpus[*r->gpu][r->test] = r->text;
  }
  return l;
}

}  // namespace

void rule_dcgm_devices(const DiagnoseContext& c, Findings& out) {
  const Listed l = discovery_of(c);
  if (l.gpus.empty()) return;
  Finding f;
  f.code = "dcgm.devices";
  f.severity = Severity::kInfo;
  const size_t found = l.found.empty() ? 0 : std::stoul(l.found);
  f.title = found > l.gpus.size()
                ? fmt::format("DCGM lists {} GPUs ({} shown in the capture)", found, l.gpus.size())
                : fmt::format("DCGM lists {} GPU(s)", l.gpus.size());
  for (const auto& [id, values] : l.gpus) {
    std::string line = fmt::format("GPU {}:", id);
    for (const char* k : {"Name", "PCI Bus ID", "Device UUID"})
      if (const auto it = values.find(k); it != values.end())
        line += fmt::format(" {} {};", k, it->second);
    line.pop_back();
    f.evidence.push_back(line);
  }
  f.evidence.push_back(fmt::format("dcgmi discovery at {}{}", l.origin,
                                   l.found.empty() ? "" : ", GPUs found: " + l.found));
  f.remedy = "Nothing to fix: which GPUs DCGM's host engine sees, to compare with nvidia-smi -L.";
  out.push_back(std::move(f));
}

void rule_dcgm_name_unreadable(const DiagnoseContext& c, Findings& out) {
  const Listed l = discovery_of(c);
  std::set<unsigned> bad, named;
  for (const auto& [id, kv] : l.gpus) {
    const auto it = kv.find("Name");
    if (it == kv.end()) continue;
    (unreadable_name(it->second) ? bad : named).insert(id);
  }
  if (bad.empty()) return;
  const bool every = named.empty();
  auto make = [&](std::optional<unsigned> gpu, const std::set<unsigned>& gpus) {
    Finding f;
    f.code = "dcgm.name_unreadable";
    f.severity = Severity::kWarning;
    f.gpu = gpu;
    f.title = every ? fmt::format("DCGM could not read the name of any GPU it lists (GPU {})",
                                  gpu_list(gpus))
                    : fmt::format("DCGM could not read the name of GPU {}", gpu_list(gpus));
    f.evidence.push_back(
        fmt::format("dcgmi discovery at {}: Name \"{}\" while the bus id and "
                    "UUID are there",
                    l.origin, l.gpus.at(*gpus.begin()).at("Name")));
    if (every)
      f.evidence.push_back(
          "the same for every GPU shown: DCGM's reading of the device fails on this node (a DCGM "
          "release that does not know this driver or GPU, or a host engine whose NVML library is "
          "not the driver's), not one GPU");
    f.remedy = every ? "Compare with nvidia-smi -L; run a DCGM release that supports this driver "
                       "and GPU, and make sure the host engine loads the driver's libnvidia-ml."
                     : "Check that GPU with nvidia-smi -q -i <bus id>: NVML failing for one GPU "
                       "is a sign of that GPU (or its driver state) in trouble.";
    out.push_back(std::move(f));
  };
  if (every) return make(std::nullopt, bad);
  for (unsigned g : bad) make(g, {g});
}

// ---- nvlink -s ----

void rule_dcgm_nvlink_status(const DiagnoseContext& c, Findings& out) {
  const auto rows = readings(c, "dcgmi nvlink");
  std::set<unsigned> gpus;
  unsigned up = 0, listed = 0;
  bool no_switch = false;
  for (const DcgmResult* r : rows) {
    if (r->test == "NvSwitches") no_switch = true;
    if (r->test != "NVLink links" || !r->gpu) continue;
    gpus.insert(*r->gpu);
    up += r->count;
    listed += r->of;
  }
  // Links down are dcgm.nvlink_down's; this is the answer when none is.
  if (gpus.empty() || up < listed || up == 0) return;
  Finding f;
  f.code = "dcgm.nvlink_status";
  f.severity = Severity::kInfo;
  f.title = fmt::format("DCGM shows every NVLink Up: {} links on GPU {}", up, gpu_list(gpus));
  f.evidence.push_back(fmt::format("dcgmi nvlink at {}: no link Down or Disabled", rows[0]->block));
  if (no_switch)
    f.evidence.push_back(
        "DCGM found no NvSwitch: right for GPUs joined directly; on a board with NVSwitches "
        "(HGX/DGX) it means DCGM cannot see them (its NvSwitch module or NSCQ library is not "
        "loaded, or a VM), so their health is not checked here");
  f.remedy = "Nothing to fix.";
  out.push_back(std::move(f));
}

// ---- dmon and stats: counters ----

namespace {

// A stats row named onto the field it reports.
const DcgmFieldInfo* field_of(const DcgmResult& r) {
  if (r.part == "dcgmi dmon" || r.part == "dcgm-exporter" || r.part == kDcgmFieldTablePart)
    return dcgm_field_by_tag(r.test);
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kStatsRows = {{
      {"Single Bit ECC Errors", "ESVTL"},
      {"Double Bit ECC Errors", "EDVTL"},
      {"PCIe Replay Warnings", "RPCTR"},
      {"Critical XID Errors", "XIDER"},
  }};
  if (r.part == "dcgmi stats")
    for (const auto& [row, tag] : kStatsRows)
      if (r.test == row) return dcgm_field_by_tag(tag);
  // `dcgmi nvlink -e`: "Link 3 CRC FLIT Error" (the counter names of DCGM's dcgmi/Nvlink.cpp).
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 11> kLinkRows = {{
      {"CRC FLIT Error", "NFELT"},
      {"CRC Data Error", "NDELT"},
      {"Replay Error", "NRELT"},
      {"Recovery Error", "NRCLT"},
      {"Malformed Packet Error", "NLMALP"},
      {"Buffer Overrun Error", "NLBUFO"},
      {"Rx Error", "NLRCVE"},
      {"Rx Remote Error", "NLRCVRE"},
      {"Rx General Error", "NLRCVGE"},
      {"Link Integrity Error", "NLLLIE"},
      {"Tx Discards", "NLXMITD"},
  }};
  // `nvidia-smi nvlink -e`: "Link 3 Replay Errors", "Link 3 CRC Errors" (flit CRC).
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kSmiRows = {{
      {"Replay Errors", "NRELT"},
      {"Recovery Errors", "NRCLT"},
      {"CRC Errors", "NFELT"},
      {"CRC Flit Errors", "NFELT"},
      {"CRC Data Errors", "NDELT"},
  }};
  // The counter's name after "Link N ", looked up in the tool's own rows.
  const auto by_link_row = [&r](const auto& rows) -> const DcgmFieldInfo* {
    const size_t sp = r.test.find(' ', 5);  // after "Link N"
    if (sp == std::string::npos) return nullptr;
    const std::string_view name = std::string_view(r.test).substr(sp + 1);
    for (const auto& [row, tag] : rows)
      if (name == row) return dcgm_field_by_tag(tag);
    return nullptr;
  };
  if (r.part == "nvidia-smi nvlink -e") return by_link_row(kSmiRows);
  if (r.part == "dcgmi nvlink -e") return by_link_row(kLinkRows);
  return nullptr;
}

struct Counted {
  const DcgmResult* r;
  const DcgmFieldInfo* f;
  double v;
};

// Per GPU, the readings of one class set (error counters, traffic) with their value.
// Readings that name no GPU (a pasted field table) are kept under nullopt: one GPU the capture
// does not number.
std::map<std::optional<unsigned>, std::vector<Counted>> counted(
    const DiagnoseContext& c, bool (*want)(const DcgmFieldInfo&)) {
  std::map<std::optional<unsigned>, std::vector<Counted>> out;
  for (const DcgmResult& r : c.obs.dcgm) {
    if (r.kind != DcgmKind::kReading) continue;
    if (!r.gpu && r.part != kDcgmFieldTablePart) continue;
    const DcgmFieldInfo* f = field_of(r);
    const auto v = value_of(r.text);
    if (f && v && want(*f)) out[r.gpu].push_back({&r, f, *v});
  }
  return out;
}

std::string gpu_words(const std::optional<unsigned>& gpu) {
  return gpu ? fmt::format("GPU {}", *gpu) : "a GPU (the capture does not number it)";
}

bool is_error_count(const DcgmFieldInfo& f) {
  return f.cls == DcgmFieldClass::kFatalCount || f.cls == DcgmFieldClass::kErrorCount ||
         (f.cls == DcgmFieldClass::kXid);
}
bool is_error_or_corrected(const DcgmFieldInfo& f) {
  return is_error_count(f) || f.cls == DcgmFieldClass::kCorrected;
}

// Corrected (single-bit) ECC errors are routine in small numbers; Meta's GPU cluster health
// checks (GCM, check-nvidia-smi ecc_corrected_volatile_total) fail a GPU above 50 million.
constexpr double kCorrectedFlood = 5e7;

std::string where(const Counted& x) {
  return fmt::format("{} {} = {} ({}, {})", x.r->part, x.r->test, x.r->text, x.f->meaning,
                     x.r->origin);
}

}  // namespace

void rule_dcgm_counter_errors(const DiagnoseContext& c, Findings& out) {
  for (const auto& [gpu, xs] : counted(c, is_error_or_corrected)) {
    Finding f;
    f.code = "dcgm.counter_errors";
    f.gpu = gpu;
    bool fatal = false, flood = false;
    std::vector<std::string> names;
    for (const Counted& x : xs) {
      // dmon's and the exporter's last Xid are judged by dcgm.xid; a job report's count of
      // critical Xids is here.
      if (x.v <= 0 || (x.f->cls == DcgmFieldClass::kXid && x.r->part != "dcgmi stats")) continue;
      if (x.f->cls == DcgmFieldClass::kCorrected && x.v < kCorrectedFlood) continue;
      fatal = fatal || x.f->cls == DcgmFieldClass::kFatalCount || x.f->cls == DcgmFieldClass::kXid;
      flood = flood || x.f->cls == DcgmFieldClass::kCorrected;
      names.emplace_back(x.f->meaning);
      f.evidence.push_back(where(x));
    }
    if (names.empty()) continue;
    if (flood)
      f.evidence.push_back(fmt::format(
          "corrected ECC errors above {:.0e} (Meta's GCM health checks fail a GPU there): the "
          "memory corrects errors at a rate far beyond the norm, so it is degrading",
          kCorrectedFlood));
    f.severity = fatal ? Severity::kCritical : Severity::kWarning;
    f.title = fmt::format("DCGM counts errors on {}: {}", gpu_words(gpu), names.front()) +
              (names.size() > 1 ? fmt::format(" and {} more", names.size() - 1) : "");
    if (fatal)
      f.remedy =
          "Drain the GPU, read its Xids in the kernel log, reset it and run dcgmi diag -r 3; "
          "uncorrectable memory errors that recur are an RMA case.";
    else if (flood)
      f.remedy =
          "Drain the GPU and run dcgmi diag -r 3 (its memory tests); check its remapped rows "
          "(nvidia-smi -q -d ROW_REMAPPER) and have it serviced (field diagnostics, RMA) before "
          "the errors turn uncorrectable.";
    else
      f.remedy =
          "Watch whether the counter grows: NVLink errors point at the link (reseat, fabric "
          "manager, bridge), PCIe replays at the slot or riser.";
    out.push_back(std::move(f));
  }
}

void rule_dcgm_nvlink_counters(const DiagnoseContext& c, Findings& out) {
  auto nvlink = [](const DcgmFieldInfo& f) { return f.nvlink; };
  for (const auto& [gpu, xs] : counted(c, +nvlink)) {
    double moved = 0;
    unsigned errors_read = 0, errors = 0;
    std::vector<std::string> traffic;
    for (const Counted& x : xs) {
      if (x.f->cls == DcgmFieldClass::kTraffic) {
        moved += x.v;
        if (x.v > 0) traffic.push_back(fmt::format("{} {}", x.r->text, x.f->meaning));
      } else if (is_error_count(*x.f)) {
        ++errors_read;
        if (x.v > 0) ++errors;
      }
    }
    if (errors_read == 0 || errors > 0) continue;  // errors: dcgm.counter_errors
    Finding f;
    f.code = "dcgm.nvlink_counters";
    f.severity = Severity::kInfo;
    f.gpu = gpu;
    f.title = moved > 0
                  ? fmt::format("{}'s NVLinks carry traffic with no error counted", gpu_words(gpu))
                  : fmt::format("{}'s NVLink error counters are all 0", gpu_words(gpu));
    if (moved > 0)
      f.evidence.push_back(fmt::format("{} ({} at {})", fmt::join(traffic, ", "),
                                       xs.front().r->part, xs.front().r->origin));
    f.evidence.push_back(fmt::format("{} NVLink error counter(s) read ({} at {}), every one 0",
                                     errors_read, xs.front().r->part, xs.front().r->origin));
    f.remedy = "Nothing to fix.";
    out.push_back(std::move(f));
  }
}

// ---- fields DCGM returned nothing for ----

void rule_dcgm_fields_unavailable(const DiagnoseContext& c, Findings& out) {
  struct Block {
    std::set<std::string> fields, empty_fields;
    std::set<unsigned> gpus;
  };
  std::map<std::string, Block> blocks;  // dmon tables by where they start
  for (const DcgmResult* r : readings(c, "dcgmi dmon")) {
    Block& b = blocks[r->block];
    b.fields.insert(r->test);
    if (r->gpu) b.gpus.insert(*r->gpu);
    if (r->count == 0) b.empty_fields.insert(r->test);
  }
  for (const DcgmResult* r : readings(c, "dcgmi dmon"))
    if (r->count > 0) blocks[r->block].empty_fields.erase(r->test);
  for (const auto& [origin, b] : blocks) {
    if (b.empty_fields.empty()) continue;
    const bool all = b.empty_fields.size() == b.fields.size();
    Finding f;
    f.code = "dcgm.fields_unavailable";
    f.severity = Severity::kInfo;
    f.title = all ? fmt::format(
                        "DCGM returned no value for any of the {} fields watched "
                        "(dcgmi dmon, GPU {})",
                        b.fields.size(), gpu_list(b.gpus))
                  : fmt::format("DCGM returned no value for {} of the {} fields watched",
                                b.empty_fields.size(), b.fields.size());
    f.evidence.push_back(fmt::format("dcgmi dmon at {}: N/A in every row for {}", origin,
                                     fmt::join(b.empty_fields, ", ")));
    f.evidence.push_back(
        "N/A is a collection gap (a field or combination of fields DCGM cannot serve on this GPU "
        "or driver, MIG, a watch without permission), not a reading: it says nothing about the "
        "GPUs' health");
    f.remedy =
        "Watch the fields in separate dmon runs (or field groups) to find the one that "
        "blocks the others; check `dcgmi dmon -l` for what this GPU supports.";
    out.push_back(std::move(f));
  }
}

// ---- stats job reports ----

namespace {

struct StatsReport {
  std::map<std::string, std::string> summary;  // row -> value, GPU-less rows
  std::string origin;
};

StatsReport stats_summary(const DiagnoseContext& c) {
  StatsReport s;
  for (const DcgmResult* r : readings(c, "dcgmi stats")) {
    if (s.origin.empty()) s.origin = r->block;
    if (!r->gpu) s.summary.emplace(r->test, r->text);
  }
  return s;
}

}  // namespace

void rule_dcgm_stats_empty(const DiagnoseContext& c, Findings& out) {
  const StatsReport s = stats_summary(c);
  const auto procs = s.summary.find("No. of Processes");
  if (procs == s.summary.end() || procs->second != "0") return;
  std::vector<std::string> empty;
  for (const char* row : {"Energy Consumed (Joules)", "Power Usage (Watts)",
                          "Max GPU Memory Used (bytes)", "Single Bit ECC Errors"}) {
    const auto it = s.summary.find(row);
    if (it != s.summary.end() && (no_value(it->second) || it->second == "0"))
      empty.push_back(fmt::format("{}: {}", row, it->second));
  }
  if (empty.empty()) return;
  Finding f;
  f.code = "dcgm.stats_empty";
  f.severity = Severity::kInfo;
  const auto took = s.summary.find("Total Execution Time (sec)");
  f.title = fmt::format("DCGM recorded nothing for the job{}: its GPU use is unknown, not zero",
                        took == s.summary.end() ? "" : " (" + took->second + " s)");
  f.evidence.push_back(
      fmt::format("dcgmi stats at {}: No. of Processes 0, {}", s.origin, fmt::join(empty, ", ")));
  f.evidence.push_back(
      "no process and no power or energy over the job's whole time means the job's watches "
      "collected nothing (watches started after the job, accounting off, MIG, or a group "
      "without the job's GPUs)");
  f.remedy =
      "Start the watches before the job (`dcgmi stats -e`, then `-s <job>` in the "
      "prolog, `-x` in the epilog) on a group holding the job's GPUs; under MIG, DCGM "
      "job stats do not cover the instances.";
  out.push_back(std::move(f));
}

void rule_dcgm_stats_slowdown(const DiagnoseContext& c, Findings& out) {
  for (const DcgmResult* r : readings(c, "dcgmi stats")) {
    if (r->test.rfind("Slowdown ", 0) != 0 || r->test.find("Low Utilization") != std::string::npos)
      continue;
    const auto v = value_of(r->text);
    if (!v || *v < 5) continue;
    Finding f;
    f.code = "dcgm.stats_slowdown";
    f.severity = Severity::kWarning;
    f.gpu = r->gpu;
    const std::string why = r->test.substr(9, r->test.find(" (") - 9);
    f.title = fmt::format("{} spent {} % of the job with clocks held down ({})",
                          r->gpu ? fmt::format("GPU {}", *r->gpu) : std::string("The job's GPUs"),
                          r->text, why);
    f.evidence.push_back(fmt::format("dcgmi stats {} = {} ({})", r->test, r->text, r->origin));
    f.remedy = why == "Thermal" ? "Check cooling: fans, airflow, inlet temperature."
               : why == "Power" ? "Check the power limit (nvidia-smi -q -d POWER) and the "
                                  "supply; a cap below the default costs clocks."
                                : "Read the GPU's clock event reasons (nvidia-smi -q -d "
                                  "PERFORMANCE) during a job.";
    out.push_back(std::move(f));
  }
}

}  // namespace gw
