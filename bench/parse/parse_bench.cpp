// Parse throughput (MB/s, one thread) through the code `doctor --from` uses: load_captures
// (mmap + detect + streaming parse + bounded merge into an Observation), plus the bare
// streaming parsers and `grep -c Xid` on the same kernel log for comparison.
// Inputs (~1 GB each, GW_BENCH_MB to change) are generated in a temp dir and deleted after.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gen_inputs.h"
#include "sources/captures.h"
#include "sources/kmsg/kernel_log.h"
#include "sources/smi/smi_parsers.h"

namespace {

struct Inputs {
  std::filesystem::path dir;
  std::string csv, klog;
  gw::bench::Generated csv_info, klog_info;
};

Inputs& inputs() {
  static Inputs in;
  return in;
}

// Anonymous (heap) resident memory: what the parser itself holds, excluding the mmapped file.
double rss_anon_mb() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "RssAnon:") {
      double kb = 0;
      in >> kb;
      return kb / 1024.0;
    }
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

double children_cpu_s() {
  rusage ru{};
  ::getrusage(RUSAGE_CHILDREN, &ru);
  auto sec = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return sec(ru.ru_utime) + sec(ru.ru_stime);
}

std::string slurp(const std::string& path) {
  std::string out(std::filesystem::file_size(path), '\0');
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return {};
  out.resize(std::fread(out.data(), 1, out.size(), f));
  std::fclose(f);
  return out;
}

void BM_LoadCapturesCsv(benchmark::State& st) {
  size_t kept = 0;
  for (auto _ : st) {
    auto obs = gw::load_captures({inputs().csv});
    kept = obs.samples.size();
    benchmark::DoNotOptimize(obs);
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) *
                       static_cast<int64_t>(inputs().csv_info.bytes));
  st.counters["rows"] = static_cast<double>(inputs().csv_info.rows);
  st.counters["snapshots_kept"] = static_cast<double>(kept);
  st.counters["rss_anon_MB"] = rss_anon_mb();
}

void BM_LoadCapturesKernelLog(benchmark::State& st) {
  size_t kept = 0, counted = 0;
  for (auto _ : st) {
    auto obs = gw::load_captures({inputs().klog});
    kept = obs.events.size();
    counted = 0;
    for (const auto& c : obs.event_counts) counted += c.count;
    benchmark::DoNotOptimize(obs);
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) *
                       static_cast<int64_t>(inputs().klog_info.bytes));
  st.counters["lines"] = static_cast<double>(inputs().klog_info.rows);
  st.counters["events_counted"] = static_cast<double>(counted);
  st.counters["events_kept"] = static_cast<double>(kept);
  st.counters["rss_anon_MB"] = rss_anon_mb();
}

// The bare parsers on an in-memory copy (no mmap, no merge): the parsing cost alone.
void BM_StreamCsv(benchmark::State& st) {
  const std::string text = slurp(inputs().csv);
  size_t n = 0;
  for (auto _ : st) {
    n = 0;
    auto r = gw::parse_smi_csv(
        text, "csv", [&](const gw::Snapshot&, bool) { ++n; }, nullptr);
    benchmark::DoNotOptimize(r);
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(text.size()));
  st.counters["snapshots"] = static_cast<double>(n);
}

// The bare parser over the file mapped as load_captures maps it (MAP_PRIVATE, optionally
// MADV_SEQUENTIAL): splits load_captures' cost into reading the mapping vs the merge.
void stream_csv_mapped(benchmark::State& st, bool sequential) {
  const int fd = ::open(inputs().csv.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat sb {};
  if (fd < 0 || ::fstat(fd, &sb) != 0) {
    st.SkipWithError("cannot open the CSV");
    if (fd >= 0) ::close(fd);
    return;
  }
  const auto size = static_cast<size_t>(sb.st_size);
  size_t n = 0;
  for (auto _ : st) {
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      st.SkipWithError("mmap failed");
      break;
    }
    if (sequential) ::madvise(map, size, MADV_SEQUENTIAL);
    n = 0;
    auto r = gw::parse_smi_csv(
        std::string_view(static_cast<const char*>(map), size), "csv",
        [&](const gw::Snapshot&, bool) { ++n; }, nullptr);
    benchmark::DoNotOptimize(r);
    ::munmap(map, size);
  }
  ::close(fd);
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(size));
  st.counters["snapshots"] = static_cast<double>(n);
}
void BM_StreamCsvMmapSequential(benchmark::State& st) {
  stream_csv_mapped(st, true);
}
void BM_StreamCsvMmap(benchmark::State& st) {
  stream_csv_mapped(st, false);
}

void BM_StreamKernelLog(benchmark::State& st) {
  const std::string text = slurp(inputs().klog);
  size_t n = 0;
  for (auto _ : st) {
    n = 0;
    auto r = gw::parse_kernel_log_stream(
        text, "klog", [&](gw::Event&&) { ++n; }, nullptr);
    benchmark::DoNotOptimize(r);
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(text.size()));
  st.counters["events"] = static_cast<double>(n);
}

// The same with every line classified (kernel log or not), as a caller counting the lines
// nothing understood runs it.
void BM_StreamKernelLogClassify(benchmark::State& st) {
  const std::string text = slurp(inputs().klog);
  size_t n = 0, kernel = 0;
  gw::KernelLogParseOptions opt;
  opt.classify_lines = true;
  for (auto _ : st) {
    n = 0;
    auto r = gw::parse_kernel_log_stream(
        text, "klog", [&](gw::Event&&) { ++n; }, nullptr, opt);
    kernel = r.kernel_lines;
    benchmark::DoNotOptimize(r);
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(text.size()));
  st.counters["events"] = static_cast<double>(n);
  st.counters["kernel_lines"] = static_cast<double>(kernel);
}

// The baseline users know: grep -c Xid over the same file (a separate process, wall time).
void BM_GrepCountXid(benchmark::State& st) {
  const std::string cmd = "grep -c Xid '" + inputs().klog + "'";
  long count = 0;
  const double cpu0 = children_cpu_s();
  for (auto _ : st) {
    std::FILE* p = ::popen(cmd.c_str(), "r");
    if (!p || std::fscanf(p, "%ld", &count) != 1) st.SkipWithError("grep failed");
    if (p) ::pclose(p);
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) *
                       static_cast<int64_t>(inputs().klog_info.bytes));
  st.counters["grep_count"] = static_cast<double>(count);
  // grep's own CPU time (user + sys) per run, comparable with our "CPU" column.
  st.counters["grep_cpu_ms_per_run"] =
      (children_cpu_s() - cpu0) * 1000.0 / static_cast<double>(st.iterations());
}

}  // namespace

BENCHMARK(BM_LoadCapturesCsv)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_LoadCapturesKernelLog)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_StreamCsv)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_StreamCsvMmapSequential)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_StreamCsvMmap)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_StreamKernelLog)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_StreamKernelLogClassify)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_GrepCountXid)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const char* mb_env = std::getenv("GW_BENCH_MB");
  const size_t mb = mb_env ? std::strtoul(mb_env, nullptr, 10) : 1024;
  Inputs& in = inputs();
  std::string tmpl = (std::filesystem::temp_directory_path() / "gw-bench-parse-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) return 1;
  in.dir = tmpl;
  in.csv = (in.dir / "query-gpu.csv").string();
  in.klog = (in.dir / "kern.log").string();
  in.csv_info = gw::bench::write_csv_log(in.csv, mb << 20);
  in.klog_info = gw::bench::write_kernel_log(in.klog, mb << 20);
  std::fprintf(stderr, "generated %zu MB CSV (%zu rows), %zu MB kernel log (%zu lines, %zu GPU)\n",
               in.csv_info.bytes >> 20, in.csv_info.rows, in.klog_info.bytes >> 20,
               in.klog_info.rows, in.klog_info.gpu_lines);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::filesystem::remove_all(in.dir);  // never leave 2 GB behind
  return 0;
}
