// A real Prometheus (Debian's /usr/bin/prometheus) scrapes the daemon playing a scenario on
// loopback: the series exist with the scenario's values, the queries of NVIDIA's Grafana
// dashboard and of gpuwarden's own (packaging/grafana/) return data, and `promtool check
// metrics` finds no format error in /metrics. One Prometheus serves both dashboards.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <cmath>
#include <csignal>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "serve_helpers.h"

namespace gw::servetest {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

json query(int port, const std::string& promql) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(5);
  auto r = c.Get(("/api/v1/query?query=" + httplib::detail::encode_query_param(promql)).c_str());
  if (!r || r->status != 200) return json::object();
  return json::parse(r->body, nullptr, false);
}

double value_of(const json& q, const std::string& gpu) {
  for (const auto& r : q["data"]["result"])
    if (r["metric"]["gpu"] == gpu) return std::stod(r["value"][1].get<std::string>());
  return NAN;
}

// Every PromQL expression of the bundled dashboard (data/dcgm-exporter/), variables as "All".
std::vector<std::string> dashboard_exprs() {
  std::ifstream in(std::string(GW_SOURCE_DIR) + "/data/dcgm-exporter/grafana-dcgm-dashboard.json");
  const json d = json::parse(in);
  std::vector<std::string> out;
  for (const auto& p : d["panels"])
    for (const auto& t : p.value("targets", json::array())) {
      std::string e = t["expr"].get<std::string>();
      for (const std::string var : {"$instance", "$gpu"})
        for (size_t k = e.find(var); k != std::string::npos; k = e.find(var))
          e.replace(k, var.size(), ".+");
      out.push_back(e);
    }
  return out;
}

// gpuwarden's dashboard: every target's expr with Grafana's variables as "All" and fixed ranges.
std::vector<std::string> gpuwarden_dashboard_exprs(const json& d) {
  std::vector<std::string> out;
  for (const auto& p : d["panels"])
    for (const auto& t : p.value("targets", json::array())) {
      std::string e = t["expr"].get<std::string>();
      for (const auto& [var, val] : std::vector<std::pair<std::string, std::string>>{
               {"$instance", ".+"}, {"$gpu", ".+"}, {"$__rate_interval", "1m"},
               {"$__range", "5m"}})
        for (size_t k = e.find(var); k != std::string::npos; k = e.find(var))
          e.replace(k, var.size(), val);
      out.push_back(e);
    }
  return out;
}

// Metric names an expression uses (gpuwarden_* and DCGM_*), for the "really exported" check.
std::set<std::string> metric_names(const std::string& expr) {
  std::set<std::string> out;
  static const std::regex name(R"(\b(gpuwarden_[a-z0-9_]+|DCGM_[A-Z0-9_]+)\b)");
  for (std::sregex_iterator it(expr.begin(), expr.end(), name), end; it != end; ++it)
    out.insert((*it)[1]);
  return out;
}

bool all_return_data(int prom_port, const std::vector<std::string>& exprs) {
  for (const std::string& e : exprs) {
    auto q = query(prom_port, e);
    if (q.value("status", "") != "success" || q["data"]["result"].empty()) return false;
  }
  return true;
}

// The daemon plays serve-xid.json with job 4242 on GPU 1 (job mapping directory): findings,
// Xid 48 on GPU 1 (t=10 s), throttle counters, PCIe state and the job all reach Prometheus.
void check_gpuwarden_dashboard(int prom_port, int daemon_port) {
  std::ifstream in(std::string(GW_SOURCE_DIR) + "/packaging/grafana/gpuwarden-dashboard.json");
  const json d = json::parse(in, nullptr, false);
  ASSERT_FALSE(d.is_discarded()) << "packaging/grafana/gpuwarden-dashboard.json is not JSON";
  const auto exprs = gpuwarden_dashboard_exprs(d);
  ASSERT_GE(exprs.size(), 15u);
  // Only names the daemon really exports (a # TYPE line on its /metrics).
  const std::string body = get(daemon_port, "/metrics").body;
  for (const std::string& e : exprs)
    for (const std::string& n : metric_names(e))
      EXPECT_NE(body.find("# TYPE " + n + " "), std::string::npos) << n << " in " << e;
  // Each area the dashboard is for is queried.
  std::string all;
  for (const std::string& e : exprs) all += e + "\n";
  for (const char* n : {"gpuwarden_finding_active", "gpuwarden_clock_throttled_seconds_total",
                        "gpuwarden_pcie_link_gen", "gpuwarden_pcie_link_width",
                        "gpuwarden_xid_errors_total", "gpuwarden_job_gpu", "hpc_job"})
    EXPECT_NE(all.find(n), std::string::npos) << n;
  // Its template variables' label queries answer.
  httplib::Client pc("127.0.0.1", prom_port);
  for (const char* label : {"instance", "gpu"}) {
    auto r = pc.Get((std::string("/api/v1/label/") + label + "/values?match[]=gpuwarden_gpu_info")
                        .c_str());
    ASSERT_TRUE(r);
    EXPECT_FALSE(json::parse(r->body)["data"].empty()) << label;
  }
  wait_until([&] { return all_return_data(prom_port, exprs); }, 30s);
  for (const std::string& e : exprs) {
    auto q = query(prom_port, e);
    ASSERT_EQ(q.value("status", ""), "success") << e;
    EXPECT_FALSE(q["data"]["result"].empty()) << "no data for the dashboard query " << e;
  }
  // The values behind the panels are the scenario's: Xid 48 on GPU 1, job 4242 on GPU 1.
  auto xid = query(prom_port, "gpuwarden_xid_errors_total{xid=\"48\"}");
  EXPECT_GE(value_of(xid, "1"), 1);
  auto job = query(prom_port, "gpuwarden_job_gpu{hpc_job=\"4242\"}");
  ASSERT_EQ(job["data"]["result"].size(), 1u) << job.dump();
  EXPECT_EQ(job["data"]["result"][0]["metric"]["gpu"], "1");
  auto util = query(prom_port, "avg by (hpc_job) (DCGM_FI_DEV_GPU_UTIL{hpc_job!=\"\"})");
  ASSERT_EQ(util["data"]["result"].size(), 1u) << util.dump();
  EXPECT_EQ(util["data"]["result"][0]["metric"]["hpc_job"], "4242");
  auto width = query(prom_port, "gpuwarden_pcie_link_width / gpuwarden_pcie_link_width_max");
  EXPECT_EQ(value_of(width, "0"), 1);
}

TEST(ServePrometheus, ScrapesScenarioValuesAndTheDashboardQueriesReturnData) {
  ASSERT_TRUE(fs::exists("/usr/bin/prometheus")) << "scripts/setup installs Debian's prometheus";
  TempDir tmp;
  set_time_scale(1);
  fs::create_directories(tmp.path() / "jobs");
  tmp.write("jobs/1", "4242\n");
  RunningDaemon d(options_for(
      "serve-xid",
      fast_config(tmp.path(), "job_mapping_dir = \"" + (tmp.path() / "jobs").string() + "\"\n")));
  ASSERT_TRUE(d.ok()) << d.error;
  const int prom_port = free_port();
  tmp.write("prometheus.yml",
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
            "  - job_name: gpuwarden\n    static_configs:\n      - targets: ['127.0.0.1:" +
                std::to_string(d.port()) + "']\n");
  Process prom({"/usr/bin/prometheus", "--config.file=" + (tmp.path() / "prometheus.yml").string(),
                "--storage.tsdb.path=" + (tmp.path() / "tsdb").string(),
                "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
               tmp.path() / "prometheus.log");
  // serve-xid.json plays GPU 0 from 61 C to 71 C at t=5 s: wait for the new value.
  const bool seen = wait_until(
      [&] {
        auto q = query(prom_port, "DCGM_FI_DEV_GPU_TEMP");
        return q.value("status", "") == "success" && q["data"]["result"].size() == 4 &&
               value_of(q, "0") == 71;
      },
      30s);
  ASSERT_TRUE(seen) << std::ifstream(tmp.path() / "prometheus.log").rdbuf();
  auto temp = query(prom_port, "DCGM_FI_DEV_GPU_TEMP");
  EXPECT_EQ(value_of(temp, "1"), 64);
  EXPECT_EQ(value_of(temp, "2"), 67);
  EXPECT_EQ(value_of(temp, "3"), 62);
  EXPECT_EQ(value_of(query(prom_port, "DCGM_FI_DEV_POWER_USAGE"), "1"), 675);
  EXPECT_EQ(value_of(query(prom_port, "DCGM_FI_DEV_FB_USED"), "1"), 71367);
  EXPECT_EQ(value_of(query(prom_port, "DCGM_FI_DEV_SM_CLOCK * 1000000"), "3"), 1980e6);
  // The labels the dashboard and dcgm-exporter users filter on.
  const auto& m = temp["data"]["result"][0]["metric"];
  for (const char* l : {"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname",
                        "DCGM_FI_DRIVER_VERSION", "instance", "job"})
    EXPECT_TRUE(m.contains(l)) << l;
  // Counters behave as counters in PromQL.
  auto energy = query(prom_port, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION");
  EXPECT_EQ(energy["data"]["result"].size(), 4u);

  // GPM ratios (0..1) as the scenario plays them in percent; GPU 0 went from 62.5 to 50 % at
  // t=5 s with its temperature. GPU 3 has no GPM: absent, not 0.
  auto tensor = query(prom_port, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE");
  ASSERT_EQ(tensor["data"]["result"].size(), 3u) << tensor.dump();
  EXPECT_DOUBLE_EQ(value_of(tensor, "0"), 0.5);
  EXPECT_DOUBLE_EQ(value_of(tensor, "1"), 0.7125);
  EXPECT_DOUBLE_EQ(value_of(tensor, "2"), 0.8);
  EXPECT_TRUE(std::isnan(value_of(tensor, "3")));
  EXPECT_DOUBLE_EQ(value_of(query(prom_port, "DCGM_FI_PROF_GR_ENGINE_ACTIVE"), "1"), 0.97);
  EXPECT_DOUBLE_EQ(value_of(query(prom_port, "DCGM_FI_PROF_DRAM_ACTIVE"), "2"), 0.55);
  EXPECT_DOUBLE_EQ(value_of(query(prom_port, "DCGM_FI_PROF_SM_OCCUPANCY"), "0"), 0.4125);
  for (const char* f : {"DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_PIPE_FP64_ACTIVE",
                        "DCGM_FI_PROF_PIPE_FP32_ACTIVE", "DCGM_FI_PROF_PIPE_FP16_ACTIVE"})
    EXPECT_EQ(query(prom_port, f)["data"]["result"].size(), 3u) << f;

  // NVIDIA's dashboard: its template variables need DCGM_FI_DEV_GPU_TEMP's instance and gpu
  // labels; every panel query must return data (the tensor panel through GPM).
  httplib::Client pc("127.0.0.1", prom_port);
  for (const char* label : {"instance", "gpu"}) {
    auto r = pc.Get(
        (std::string("/api/v1/label/") + label + "/values?match[]=DCGM_FI_DEV_GPU_TEMP").c_str());
    ASSERT_TRUE(r);
    EXPECT_FALSE(json::parse(r->body)["data"].empty()) << label;
  }
  const auto exprs = dashboard_exprs();
  ASSERT_EQ(exprs.size(), 8u);
  for (const std::string& e : exprs) {
    auto q = query(prom_port, e);
    ASSERT_EQ(q.value("status", ""), "success") << e;
    EXPECT_FALSE(q["data"]["result"].empty()) << "no data for the dashboard query " << e;
  }
  check_gpuwarden_dashboard(prom_port, d.port());
}

TEST(ServePrometheus, PromtoolFindsNoFormatError) {
  ASSERT_TRUE(fs::exists("/usr/bin/promtool"));
  TempDir tmp;
  set_time_scale(60);  // includes a lost GPU (gpu-lost.json at t=60 s)
  const auto log = tmp.write("kern.log", "");
  auto cfg = fast_config(tmp.path());
  cfg.replace(cfg.find("kernel_log = \"\""), 15, "kernel_log = \"" + log.string() + "\"");
  RunningDaemon d(options_for("gpu-lost", cfg));
  ASSERT_TRUE(d.ok()) << d.error;
  std::ofstream(log, std::ios::app)
      << "[ 5.0] NVRM: Xid (PCI:0000:2a:00): 13, pid=77, name=\"py\\thon\", Graphics Exception\n";
  ASSERT_TRUE(wait_until(
      [&] {
        auto m = parse_metrics(get(d.port(), "/metrics").body);
        return series(m, "gpuwarden_gpu_up", {"state=\"lost\""}) == 0.0 &&
               series(m, "gpuwarden_xid_errors_total", {"xid=\"13\""}) == 1.0;
      },
      5s));
  const auto body = get(d.port(), "/metrics").body;
  tmp.write("metrics.txt", body);
  const std::string cmd = "/usr/bin/promtool check metrics < " +
                          (tmp.path() / "metrics.txt").string() + " > " +
                          (tmp.path() / "promtool.txt").string() + " 2>&1";
  const int st = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(st));
  std::stringstream out;
  out << std::ifstream(tmp.path() / "promtool.txt").rdbuf();
  // 3 = lint remarks only (dcgm-exporter's own camelCase label and counters without _total);
  // 1 would be a format error.
  EXPECT_NE(WEXITSTATUS(st), 1) << out.str();
  EXPECT_EQ(out.str().find("error"), std::string::npos) << out.str();
  // No duplicate series, every family typed once.
  std::set<std::string> seen, types;
  std::istringstream in(body);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      EXPECT_TRUE(types.insert(line.substr(7, line.find(' ', 7) - 7)).second) << line;
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    EXPECT_TRUE(seen.insert(line.substr(0, line.rfind(' '))).second) << line;
  }
  // gpuwarden's own series follow the conventions; lint remarks name dcgm-exporter's names
  // only, and gpuwarden_gpu_info, which carries dcgm-exporter's labels for joins.
  std::istringstream lint(out.str());
  while (std::getline(lint, line))
    if (line.find("gpuwarden_") != std::string::npos &&
        line.rfind("gpuwarden_gpu_info label names", 0) != 0)
      ADD_FAILURE() << line;
}

}  // namespace
}  // namespace gw::servetest
