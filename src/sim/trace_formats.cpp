#include "sim/trace_formats.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "sim/trace_csv.h"

namespace gw::sim::formats {
namespace {

constexpr size_t kMaxFields = 16;
constexpr int64_t kMaxGpus = 1 << 20;  // anything wider is a broken row, not a job
constexpr double kMaxSeconds = 1e11;   // ~3,000 years: larger times are broken rows
// A described cluster's GPUs must fit the unsigned total the scheduler works with.
constexpr int64_t kMaxClusterGpus = int64_t{1} << 31;

int64_t seconds_to_ms(double s) {
  return std::llround(s * 1000.0);
}

// One data row, its fields in the order the caller asked for them by column name.
struct Row {
  std::string_view file;
  size_t line = 0;
  std::span<const std::string_view> names;
  std::array<std::string_view, kMaxFields> f{};

  std::string where() const { return fmt::format("{}:{}", file, line); }
  Error bad(size_t i, std::string_view expected) const {
    return make_error("trace.malformed_row",
                      fmt::format("field '{}': expected {}, got '{}'", names[i], expected, f[i]),
                      where());
  }
  Result<int64_t> integer(size_t i) const {
    if (auto v = csv::parse_int(f[i])) return *v;
    return bad(i, "an integer");
  }
  // A time or duration in seconds, as milliseconds; bounded so that ms arithmetic (sums,
  // differences) can never overflow int64.
  Result<int64_t> seconds_ms(size_t i) const {
    auto v = csv::parse_double(f[i]);
    if (!v || std::fabs(*v) > kMaxSeconds) return bad(i, "seconds (|t| <= 1e11)");
    return seconds_to_ms(*v);
  }
  Result<unsigned> gpus(size_t i) const {
    auto v = csv::parse_int(f[i]);
    if (!v || *v < 0 || *v > kMaxGpus) return bad(i, "a GPU count >= 0");
    return static_cast<unsigned>(*v);
  }
};

// Finds each wanted column in the header; idx[i] = position of names[i].
Status map_header(std::string_view header, char delim, std::span<const std::string_view> names,
                  std::span<size_t> idx, size_t& ncols, std::string_view file, size_t line) {
  std::array<std::string_view, kMaxFields> cols{};
  ncols = csv::split_fields(header, delim, cols);
  if (ncols > kMaxFields)
    return make_error("trace.bad_header",
                      fmt::format("header has {} columns, at most {} supported", ncols, kMaxFields),
                      fmt::format("{}:{}", file, line));
  for (size_t i = 0; i < names.size(); ++i) {
    size_t j = 0;
    while (j < ncols && csv::trim(cols[j]) != names[i]) ++j;
    if (j == ncols)
      return make_error(
          "trace.bad_header",
          fmt::format("expected a column '{}' in the header, got '{}'", names[i], header),
          fmt::format("{}:{}", file, line));
    idx[i] = j;
  }
  return {};
}

// Calls on_row(Row&) -> Status for every non-blank data row. With a header, columns are found
// by name; without one (headerless = true) every row must have exactly names.size() fields.
template <class F>
Status for_each_row(std::string_view text, std::string_view file, char delim, bool headerless,
                    std::span<const std::string_view> names, F&& on_row,
                    std::vector<sched::JobSpec>* reserve_in = nullptr) {
  // One line is at most one job: reserving avoids moving every JobSpec on each regrowth.
  auto reserve_rows = [&](std::string_view t) {
    if (reserve_in)
      reserve_in->reserve(reserve_in->size() +
                          static_cast<size_t>(std::count(t.begin(), t.end(), '\n')) + 1);
  };
  std::array<size_t, kMaxFields> idx{};
  size_t ncols = names.size();
  for (size_t i = 0; i < names.size(); ++i) idx[i] = i;
  bool need_header = !headerless;
  csv::LineCursor cur(text);
  std::string_view line;
  std::array<std::string_view, kMaxFields> all{};
  reserve_rows(text);
  Row row{file, 0, names, {}};
  while (cur.next(line)) {
    if (csv::trim(line).empty()) continue;
    if (need_header) {
      if (auto st = map_header(line, delim, names, idx, ncols, file, cur.line_number()); !st)
        return st;
      need_header = false;
      continue;
    }
    row.line = cur.line_number();
    const size_t n = csv::split_fields(line, delim, all);
    if (n != ncols)
      return make_error("trace.malformed_row",
                        fmt::format("expected {} {}-separated fields, got {}", ncols,
                                    delim == '\t' ? "tab" : "comma", n),
                        row.where());
    for (size_t i = 0; i < names.size(); ++i) row.f[i] = csv::trim(all[idx[i]]);
    const size_t before = reserve_in ? reserve_in->size() : 0;
    if (auto st = on_row(row); !st) return st;
    // Remember where each job came from (the per-job output names the line).
    if (reserve_in && reserve_in->size() > before) reserve_in->back().source_line = row.line;
  }
  if (need_header)
    return make_error("trace.empty", "no header line: the file is empty", std::string(file));
  return {};
}

void count_duplicate(std::unordered_set<std::string_view>& seen, std::string_view id,
                     ParsedJobs& out) {
  if (!seen.insert(id).second) ++out.duplicate_ids;
}

}  // namespace

Status parse_philly_sia(std::string_view text, std::string_view file, ParsedJobs& out) {
  static constexpr std::array<std::string_view, 4> kCols = {"timestamp", "duration", "num_gpus",
                                                            "cluster"};
  return for_each_row(
      text, file, ',', false, kCols,
      [&](const Row& r) -> Status {
        auto ts = csv::parse_datetime_s(r.f[0]);
        if (!ts) return r.bad(0, "a time 'YYYY-MM-DD HH:MM:SS'");
        auto dur = r.seconds_ms(1);
        if (!dur) return dur.error();
        auto gpus = r.gpus(2);
        if (!gpus) return gpus.error();
        if (r.f[3].empty()) return r.bad(3, "a virtual-cluster id");
        sched::JobSpec j;
        j.submit_ms = *ts * 1000;
        j.actual_runtime_ms = *dur;
        j.gpus = *gpus;
        j.account = std::string(r.f[3]);
        out.jobs.push_back(std::move(j));
        return {};
      },
      &out.jobs);
}

Status parse_itp(std::string_view text, std::string_view file, std::string_view account,
                 ParsedJobs& out) {
  static constexpr std::array<std::string_view, 4> kCols = {"job_id", "submission_time", "duration",
                                                            "num_gpu"};
  std::unordered_set<std::string_view> seen;
  return for_each_row(
      text, file, ',', false, kCols,
      [&](const Row& r) -> Status {
        auto submit = r.seconds_ms(1);
        if (!submit) return submit.error();
        auto dur = r.seconds_ms(2);
        if (!dur) return dur.error();
        auto gpus = r.gpus(3);
        if (!gpus) return gpus.error();
        count_duplicate(seen, r.f[0], out);
        sched::JobSpec j;
        j.submit_ms = *submit;
        j.actual_runtime_ms = *dur;
        j.gpus = *gpus;
        j.account = std::string(account);
        out.jobs.push_back(std::move(j));
        return {};
      },
      &out.jobs);
}

Status parse_gavel(std::string_view text, std::string_view file, std::string_view account,
                   ParsedJobs& out) {
  static constexpr std::array<std::string_view, 7> kCols = {
      "job_type",    "command",        "num_steps_arg", "needs_data_dir",
      "total_steps", "arrival_time_s", "scale_factor"};
  return for_each_row(
      text, file, '\t', true, kCols,
      [&](const Row& r) -> Status {
        if (r.f[0].empty()) return r.bad(0, "a job type");
        auto steps = r.integer(4);
        if (!steps || *steps <= 0) return r.bad(4, "a positive step count");
        auto arrival = r.seconds_ms(5);
        if (!arrival) return arrival.error();
        auto gpus = r.gpus(6);
        if (!gpus) return gpus.error();
        sched::JobSpec j;
        j.submit_ms = *arrival;
        j.gpus = *gpus;
        j.account = std::string(account);
        out.jobs.push_back(std::move(j));
        return {};
      },
      &out.jobs);
}

Status parse_alibaba_pods(std::string_view text, std::string_view file, ParsedJobs& out) {
  static constexpr std::array<std::string_view, 8> kCols = {
      "name",      "num_gpu",       "gpu_milli",     "qos",
      "pod_phase", "creation_time", "deletion_time", "scheduled_time"};
  size_t pending = 0, cpu_only = 0, fractional = 0, running = 0;
  std::unordered_set<std::string_view> seen;
  auto st = for_each_row(
      text, file, ',', false, kCols,
      [&](const Row& r) -> Status {
        auto gpus = r.gpus(1);
        if (!gpus) return gpus.error();
        auto milli = r.integer(2);
        if (!milli || *milli < 0 || *milli > 1000) return r.bad(2, "a GPU share 0..1000");
        auto created = r.seconds_ms(5);
        if (!created) return created.error();
        auto deleted = r.seconds_ms(6);
        if (!deleted) return deleted.error();
        // Pending pods never ran (no scheduled_time): documented in the README, dropped.
        if (r.f[7].empty() && r.f[4] == "Pending") {
          ++pending;
          return {};
        }
        auto sched_at = r.seconds_ms(7);
        if (!sched_at) return sched_at.error();
        if (*gpus == 0) {
          ++cpu_only;
          return {};
        }
        count_duplicate(seen, r.f[0], out);
        if (*gpus == 1 && *milli < 1000) ++fractional;
        if (r.f[4] == "Running") ++running;
        sched::JobSpec j;
        j.submit_ms = *created;
        j.actual_runtime_ms = *deleted - *sched_at;
        j.gpus = *gpus;
        j.account = "openb";
        j.qos = std::string(r.f[3]);
        out.jobs.push_back(std::move(j));
        return {};
      },
      &out.jobs);
  if (!st) return st;
  if (pending)
    out.notes.push_back(
        fmt::format("{}: {} Pending pods never ran (no scheduled_time): dropped", file, pending));
  if (cpu_only)
    out.notes.push_back(fmt::format("{}: {} CPU-only pods (num_gpu 0): dropped", file, cpu_only));
  if (fractional)
    out.notes.push_back(fmt::format(
        "{}: {} pods ask for a fraction of one GPU (gpu_milli < 1000): each gets one whole GPU "
        "(gpuwarden allocates whole GPUs)",
        file, fractional));
  if (running)
    out.notes.push_back(fmt::format(
        "{}: {} pods were still Running at trace end: runtime is cut at their deletion_time", file,
        running));
  out.notes.push_back(
      "run time = deletion_time - scheduled_time; submit = creation_time; qos kept as the QoS");
  return {};
}

Status parse_tiresias(std::string_view text, std::string_view file, ParsedJobs& out) {
  static constexpr std::array<std::string_view, 4> kCols = {"job_id", "num_gpu", "submit_time",
                                                            "duration"};
  std::unordered_set<std::string_view> seen;
  return for_each_row(
      text, file, ',', false, kCols,
      [&](const Row& r) -> Status {
        if (r.f[0].empty()) return r.bad(0, "a job id");
        auto gpus = r.gpus(1);
        if (!gpus) return gpus.error();
        auto submit = r.seconds_ms(2);
        if (!submit) return submit.error();
        auto dur = r.seconds_ms(3);
        if (!dur) return dur.error();
        count_duplicate(seen, r.f[0], out);
        sched::JobSpec j;
        j.submit_ms = *submit;
        j.actual_runtime_ms = *dur;
        j.gpus = *gpus;
        j.account = "default";
        out.jobs.push_back(std::move(j));
        return {};
      },
      &out.jobs);
}

Status parse_pollux(std::string_view text, std::string_view file, ParsedJobs& out) {
  static constexpr std::array<std::string_view, 4> kCols = {"name", "time", "application",
                                                            "num_replicas"};
  std::unordered_set<std::string_view> seen;
  return for_each_row(
      text, file, ',', false, kCols,
      [&](const Row& r) -> Status {
        if (r.f[0].empty()) return r.bad(0, "a job name");
        auto t = r.seconds_ms(1);
        if (!t) return t.error();
        auto gpus = r.gpus(3);
        if (!gpus) return gpus.error();
        count_duplicate(seen, r.f[0], out);
        sched::JobSpec j;
        j.submit_ms = *t;
        j.gpus = *gpus;
        j.account = "default";
        out.jobs.push_back(std::move(j));
        return {};
      },
      &out.jobs);
}

Result<ClusterSpec> parse_tiresias_cluster(std::string_view text, std::string_view file) {
  static constexpr std::array<std::string_view, 3> kCols = {"num_switch", "num_node_p_switch",
                                                            "num_gpu_p_node"};
  ClusterSpec spec;
  size_t rows = 0;
  auto st = for_each_row(text, file, ',', false, kCols, [&](const Row& r) -> Status {
    auto sw = r.integer(0), nodes = r.integer(1), gpus = r.integer(2);
    if (!sw || *sw <= 0) return r.bad(0, "a positive switch count");
    if (!nodes || *nodes <= 0) return r.bad(1, "a positive node count");
    if (!gpus || *gpus <= 0) return r.bad(2, "a positive GPU count");
    // Counts the scheduler can hold: the product in int64 and the total in 32 bits.
    if (*sw > kMaxGpus || *nodes > kMaxGpus || *gpus > kMaxGpus ||
        *sw * *nodes * *gpus > kMaxClusterGpus)
      return r.bad(0, fmt::format("a cluster of at most {} GPUs", kMaxClusterGpus));
    spec.nodes = static_cast<unsigned>(*sw * *nodes);
    spec.gpus_per_node = static_cast<unsigned>(*gpus);
    ++rows;
    return {};
  });
  if (!st) return st.error();
  if (rows != 1)
    return make_error("trace.bad_cluster", fmt::format("expected one cluster row, got {}", rows),
                      std::string(file));
  return spec;
}

Result<ClusterSpec> parse_alibaba_nodes(std::string_view text, std::string_view file) {
  static constexpr std::array<std::string_view, 2> kCols = {"gpu", "model"};
  uint64_t total = 0;
  auto st = for_each_row(text, file, ',', false, kCols, [&](const Row& r) -> Status {
    auto g = r.integer(0);
    if (!g || *g < 0 || *g > kMaxGpus) return r.bad(0, "a GPU count >= 0");
    total += static_cast<uint64_t>(*g);
    if (total > kMaxClusterGpus)
      return r.bad(0, fmt::format("a cluster of at most {} GPUs in all", kMaxClusterGpus));
    return {};
  });
  if (!st) return st.error();
  if (total == 0)
    return make_error("trace.bad_cluster", "the node list has no GPUs", std::string(file));
  ClusterSpec spec;
  spec.gpus_per_node = 8;  // flattened: the real nodes have 1, 2, 4 or 8 GPUs
  spec.nodes = static_cast<unsigned>((total + 7) / 8);
  spec.gpu_model = "mixed";
  return spec;
}

Result<ClusterSpec> parse_gavel_cluster_specs(std::string_view text, std::string_view file) {
  // {"philly": ["500:0:0"]}: counts of V100:P100:K80 per cluster name; the first entry wins.
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || j.empty())
    return make_error("trace.bad_cluster", "expected a JSON object {name: [\"v100:p100:k80\"]}",
                      std::string(file));
  const auto& first = j.begin().value();
  if (!first.is_array() || first.empty() || !first[0].is_string())
    return make_error(
        "trace.bad_cluster",
        fmt::format("'{}': expected a list of \"v100:p100:k80\" strings", j.begin().key()),
        std::string(file));
  const std::string s = first[0].get<std::string>();
  std::array<std::string_view, 4> parts{};
  if (csv::split_fields(s, ':', parts) != 3)
    return make_error("trace.bad_cluster", fmt::format("expected 'v100:p100:k80', got '{}'", s),
                      std::string(file));
  static constexpr std::array<std::string_view, 3> kModels = {"V100", "P100", "K80"};
  ClusterSpec spec;
  int64_t best = 0;
  for (size_t i = 0; i < 3; ++i) {
    auto n = csv::parse_int(parts[i]);
    if (!n || *n < 0 || *n > kMaxClusterGpus)
      return make_error("trace.bad_cluster",
                        fmt::format("expected a GPU count, got '{}'", parts[i]), std::string(file));
    if (*n > best) {
      best = *n;
      spec.gpu_model = std::string(kModels[i]);
    }
  }
  if (best == 0)
    return make_error("trace.bad_cluster", "the cluster has no GPUs", std::string(file));
  // Gavel's simulated servers hold 4 GPUs; only the most common GPU type is kept.
  spec.gpus_per_node = 4;
  spec.nodes = static_cast<unsigned>((best + 3) / 4);
  return spec;
}

}  // namespace gw::sim::formats
