// read_trace: finds the files of a trace (a file or a folder), reads them, detects the format
// and hands the text to the pure parsers in trace_formats.cpp.
#include "sim/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "sim/trace_csv.h"
#include "sim/trace_formats.h"
#include "sim/trace_io.h"

namespace gw::sim {
namespace {

namespace fs = std::filesystem;
using formats::ParsedJobs;

enum class Format { kPhilly, kItp, kGavel, kAlibaba, kTiresias, kPollux, kUnknown };

std::string_view first_line(std::string_view text) {
  csv::LineCursor cur(text);
  std::string_view line;
  while (cur.next(line))
    if (!csv::trim(line).empty()) return line;
  return {};
}

Format detect(std::string_view text) {
  const std::string_view h = first_line(text);
  auto starts = [&](std::string_view p) { return h.substr(0, p.size()) == p; };
  if (starts("timestamp,duration,num_gpus")) return Format::kPhilly;
  if (starts("job_id,submission_time,")) return Format::kItp;
  if (starts("name,cpu_milli,memory_mib,num_gpu,gpu_milli")) return Format::kAlibaba;
  if (starts("job_id,num_gpu,submit_time,")) return Format::kTiresias;
  if (starts("name,time,application,num_replicas")) return Format::kPollux;
  if (std::count(h.begin(), h.end(), '\t') == 6) return Format::kGavel;
  return Format::kUnknown;
}

std::string_view format_name(Format f) {
  switch (f) {
    case Format::kPhilly:
      return "philly-sia";
    case Format::kItp:
      return "itp";
    case Format::kGavel:
      return "gavel-philly-vc";
    case Format::kAlibaba:
      return "alibaba-openb";
    case Format::kTiresias:
      return "tiresias";
    case Format::kPollux:
      return "pollux-sia-workload";
    case Format::kUnknown:
      break;
  }
  return "unknown";
}

Status parse_as(Format f, std::string_view text, std::string_view file, std::string_view stem,
                ParsedJobs& out) {
  switch (f) {
    case Format::kPhilly:
      return formats::parse_philly_sia(text, file, out);
    case Format::kItp:
      return formats::parse_itp(text, file, stem, out);
    case Format::kGavel:
      return formats::parse_gavel(text, file, stem, out);
    case Format::kAlibaba:
      return formats::parse_alibaba_pods(text, file, out);
    case Format::kTiresias:
      return formats::parse_tiresias(text, file, out);
    case Format::kPollux:
      return formats::parse_pollux(text, file, out);
    case Format::kUnknown:
      break;
  }
  return make_error(
      "trace.unknown_format",
      "unknown trace format: expected a header of philly-sia (timestamp,duration,num_gpus,...), "
      "ITP (job_id,submission_time,...), Alibaba openb (name,cpu_milli,...), Tiresias "
      "(job_id,num_gpu,submit_time,...), Pollux/Sia (name,time,application,...) or 7 "
      "tab-separated Gavel fields",
      fmt::format("{}:1", file));
}

// Format-specific notes and built-in cluster sizes (the ones that need no side file).
void add_format_facts(Format f, ParsedJobs& p, std::optional<ClusterSpec>& cluster) {
  switch (f) {
    case Format::kPhilly:
      cluster = philly_cluster(p.jobs, p.notes);
      break;
    case Format::kItp:
      p.notes.emplace_back("ITP has no user/VC field: the cluster id (file name) is the account");
      break;
    case Format::kGavel:
      p.notes.emplace_back(
          "Gavel traces give training steps, not seconds (a throughput table is needed): run "
          "times are unknown; the VC (file name) is the account");
      break;
    case Format::kAlibaba:
      p.notes.emplace_back("Alibaba openb has no user/tenant field: all pods in account 'openb'");
      break;
    case Format::kTiresias:
      p.notes.emplace_back("Tiresias has no tenant field: all jobs in account 'default'");
      break;
    case Format::kPollux:
      p.notes.emplace_back(
          "Pollux/Sia workloads have no durations (they come from the Pollux/Sia goodput model) "
          "and no tenants; cluster: the Pollux testbed, 16 nodes x 4 T4 GPUs");
      cluster = ClusterSpec{16, 4, "T4", {}};
      break;
    case Format::kUnknown:
      break;
  }
}

Result<std::string> slurp(const fs::path& p) {
  return read_trace_file(p);
}

// Files of a trace folder, sorted by name, whose names satisfy `want`.
std::vector<fs::path> files_in(const fs::path& dir, bool (*want)(const std::string&)) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file(ec) && want(strip_gz(e.path().filename().string())))
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

bool is_gavel_file(const std::string& n) {
  return n.ends_with(".trace");
}
bool is_itp_cluster_file(const std::string& n) {
  return n.starts_with("cluster") && n.ends_with(".csv") && n != "cluster_specs.json";
}

// The optional cluster file beside a trace file: parsed when present.
Status side_cluster(Format f, const fs::path& dir, std::optional<ClusterSpec>& cluster,
                    std::vector<std::string>& notes) {
  fs::path side;
  Result<ClusterSpec> (*parse)(std::string_view, std::string_view) = nullptr;
  if (f == Format::kTiresias) {
    side = dir / "cluster_n32g4.csv";
    parse = formats::parse_tiresias_cluster;
  } else if (f == Format::kAlibaba) {
    side = dir / "openb_node_list_gpu_node.csv";
    parse = formats::parse_alibaba_nodes;
  } else if (f == Format::kGavel) {
    side = dir / "cluster_specs.json";
    parse = formats::parse_gavel_cluster_specs;
  }
  if (!parse) return {};
  side = find_plain_or_gz(dir, side.filename().string());
  if (side.empty()) return {};
  auto text = slurp(side);
  if (!text) return text.error();
  auto spec = parse(*text, side.string());
  if (!spec) return spec.error();
  cluster = *spec;
  notes.push_back(
      fmt::format("cluster: {} nodes x {} GPUs{} from {}", spec->nodes, spec->gpus_per_node,
                  spec->gpu_model.empty() ? "" : " " + spec->gpu_model, side.filename().string()));
  return {};
}

}  // namespace

Result<Trace> parse_trace_text(std::string_view text, std::string_view file, std::string_view stem,
                               const TraceOptions& options) {
  const Format f = detect(text);
  ParsedJobs parsed;
  if (auto st = parse_as(f, text, file, stem, parsed); !st) return st.error();
  std::optional<ClusterSpec> cluster;
  add_format_facts(f, parsed, cluster);
  return finalize_trace(std::string(format_name(f)), std::string(file), std::move(parsed),
                        std::move(cluster), options);
}

Result<Trace> read_trace(const std::string& path, const TraceOptions& options) {
  std::error_code ec;
  fs::path p(path);
  // The bundled traces are stored compressed: "philly.csv" finds "philly.csv.gz".
  if (!fs::exists(p, ec) && fs::is_regular_file(path + ".gz", ec)) p = path + ".gz";
  if (!fs::exists(p, ec)) return make_error("trace.io", "no such file or folder", path);
  std::vector<fs::path> files;
  if (fs::is_directory(p, ec)) {
    for (const char* single : {"philly.csv", "60_job.csv", "openb_pod_list_default.csv"})
      if (auto f = find_plain_or_gz(p, single); !f.empty()) files = {f};
    if (files.empty() && fs::is_directory(p / "raw", ec)) p /= "raw";
    if (files.empty()) files = files_in(p, is_gavel_file);
    if (files.empty()) files = files_in(p, is_itp_cluster_file);
    if (files.empty())
      return make_error("trace.unknown_format",
                        "no known trace files in this folder (a Pollux/Sia folder holds "
                        "independent workloads: pass one workload-N.csv)",
                        path);
  } else {
    files = {p};
  }
  // One format for all files of a folder; each file's stem is its account (ITP, Gavel).
  ParsedJobs parsed;
  Format format = Format::kUnknown;
  for (const fs::path& f : files) {
    auto text = slurp(f);
    if (!text) return text.error();
    const Format ff = detect(*text);
    if (format != Format::kUnknown && ff != format)
      return make_error("trace.mixed_formats",
                        fmt::format("expected {} like the other files", format_name(format)),
                        f.string());
    format = ff;
    const std::string stem = fs::path(strip_gz(f.filename().string())).stem().string();
    if (auto st = parse_as(ff, *text, f.string(), stem, parsed); !st) return st.error();
  }
  if (files.size() > 1)
    parsed.notes.push_back(fmt::format("{} files merged into one trace", files.size()));
  std::optional<ClusterSpec> cluster;
  add_format_facts(format, parsed, cluster);
  if (auto st = side_cluster(format, files.front().parent_path(), cluster, parsed.notes); !st)
    return st.error();
  return finalize_trace(std::string(format_name(format)), path, std::move(parsed),
                        std::move(cluster), options);
}

}  // namespace gw::sim
