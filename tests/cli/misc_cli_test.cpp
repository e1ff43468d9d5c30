// Top-level help, the check list, simulate on a real trace, and command-line errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "run_binary.h"
#include "sched/policy.h"

namespace gw::clitest {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(CliMisc, HelpListsEverySubcommand) {
  const auto r = run_gpuwarden({"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  for (const char* sub : {"doctor", "status", "capture", "simulate"})
    EXPECT_THAT(r.out, HasSubstr(std::string("\n  ") + sub + " ")) << sub;
}

// Only the subcommand named on the command line is configured (app.cpp): each one, named,
// still gets its own options; the top level still lists them all.
TEST(CliMisc, EachSubcommandNamedGetsItsOwnOptions) {
  const auto top = run_gpuwarden({"--help"});
  for (const char* sub :
       {"doctor", "status", "capture", "simulate", "serve", "history", "submit", "queue", "cancel",
        "hold", "release", "job", "gpu", "check", "slurm", "watch"}) {
    EXPECT_THAT(top.out, HasSubstr(std::string("\n  ") + sub + " ")) << sub;
    const auto r = run_gpuwarden({sub, "--help"});
    EXPECT_EQ(r.exit_code, 0) << sub << ": " << r.describe();
    EXPECT_THAT(r.out, HasSubstr(std::string("Usage: gpuwarden ") + sub)) << sub;
    EXPECT_THAT(r.out, HasSubstr("--no-color")) << sub;
  }
}

TEST(CliMisc, ListChecksListsCodesWithSeverities) {
  const auto r = run_gpuwarden({"doctor", "--list-checks"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  // Every code the scenario tests rely on is listed, each with its severity.
  for (const char* code :
       {"thermal.hw_slowdown", "pcie.width_below_max", "pcie.gen_below_max", "ecc.dbe_volatile",
        "ecc.row_remap_pending", "memory.held_by_idle", "memory.near_full", "gpu.fallen_off_bus",
        "gpu.hung", "driver.version_mismatch", "power.hw_power_brake", "power.sw_cap"})
    EXPECT_THAT(r.out, HasSubstr(std::string("\n") + code + " ")) << code;
  // A header line, one row per check, a blank line, then a pointer to the details.
  std::istringstream lines(r.out);
  std::string line;
  ASSERT_TRUE(std::getline(lines, line));
  EXPECT_TRUE(line.starts_with("CODE")) << line;
  int rows = 0;
  while (std::getline(lines, line) && !line.empty()) {
    ++rows;
    EXPECT_NE(line.find('.'), std::string::npos) << line;
    EXPECT_TRUE(line.find(" info ") != std::string::npos ||
                line.find(" warning ") != std::string::npos ||
                line.find(" critical ") != std::string::npos)
        << line;
  }
  EXPECT_GE(rows, 12);
  ASSERT_TRUE(std::getline(lines, line));
  EXPECT_THAT(line, HasSubstr("docs/checks.md"));
}

TEST(CliMisc, SimulateJsonHasEveryDefaultPolicy) {
  const std::string trace = std::string(GW_SOURCE_DIR) + "/data/traces/tiresias-60job";
  const auto r = run_gpuwarden({"simulate", "--trace", trace, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc.at("schema"), "gpuwarden.simulate/1");
  std::set<std::string> got;
  for (const auto& p : doc.at("policies")) {
    got.insert(p.at("policy").get<std::string>());
    EXPECT_EQ(p.at("jobs"), 60) << p.at("policy");
    EXPECT_EQ(p.at("jobs_finished"), 60) << p.at("policy");
    EXPECT_GT(p.at("makespan_s").get<double>(), 0.0) << p.at("policy");
  }
  // docs/simulate.md: the default comparison.
  EXPECT_EQ(got, (std::set<std::string>{"fcfs", "fcfs+backfill", "priority+backfill",
                                        "fairshare+backfill", "sjf", "las"}));
}

// The report says how loaded the cluster is, and warns when it is too idle for policies to differ.
TEST(CliMisc, SimulateNotesOfferedLoad) {
  const std::string trace = std::string(GW_SOURCE_DIR) + "/data/traces/tiresias-60job";
  auto load_note = [&](std::vector<std::string> extra) {
    std::vector<std::string> args{"simulate", "--trace",  trace, "--policies",
                                  "fcfs",     "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_gpuwarden(args);
    EXPECT_EQ(r.exit_code, 0) << r.describe();
    const json doc = json::parse(r.out);
    for (const auto& n : doc.at("notes")) {
      const auto text = n.get<std::string>();
      if (text.rfind("offered load:", 0) == 0) return text;
    }
    return std::string();
  };
  const std::string idle = load_note({});  // 32 x 4 GPUs
  EXPECT_THAT(idle, HasSubstr("little queueing"));
  const std::string busy = load_note({"--nodes", "2"});  // 8 GPUs: 16x less capacity
  EXPECT_THAT(busy, HasSubstr("offered load:"));
  EXPECT_THAT(busy, ::testing::Not(HasSubstr("little queueing")));
}

TEST(CliMisc, SimulateRunsEveryKnownPolicy) {
  std::string all;
  for (const auto& name : sched::policy_names()) all += (all.empty() ? "" : ",") + name;
  const std::string trace = std::string(GW_SOURCE_DIR) + "/data/traces/tiresias-60job";
  const auto r =
      run_gpuwarden({"simulate", "--trace", trace, "--format", "json", "--policies", all});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  std::set<std::string> got;
  const json doc = json::parse(r.out);
  for (const auto& p : doc.at("policies")) {
    got.insert(p.at("policy").get<std::string>());
    EXPECT_EQ(p.at("jobs_finished"), 60) << p.at("policy");
  }
  const auto names = sched::policy_names();
  EXPECT_EQ(got, std::set<std::string>(names.begin(), names.end()));
}

TEST(CliMisc, UnknownOptionIsAUsageErrorNamingIt) {
  const std::string trace = std::string(GW_SOURCE_DIR) + "/data/traces/tiresias-60job";
  // simulate gets its required --trace: CLI11 reports a missing required option first.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"status", "--no-such-option"},
        std::vector<std::string>{"doctor", "--no-such-option"},
        std::vector<std::string>{"capture", "--no-such-option"},
        std::vector<std::string>{"simulate", "--trace", trace, "--no-such-option"},
        std::vector<std::string>{"--no-such-option"}}) {
    const auto r = run_gpuwarden(args);
    EXPECT_NE(r.exit_code, 0) << args[0] << ": " << r.describe();
    EXPECT_THAT(r.err, HasSubstr("--no-such-option")) << args[0];
    EXPECT_TRUE(r.out.empty()) << args[0] << ": " << r.out;
  }
}

// The flags of `job` and `gpu` work after their subcommand too (`job report 7 --json`, as a
// user types it): the run gets as far as the socket, which does not exist here.
TEST(CliMisc, QueueSubcommandsTakeTheirParentsFlagsAfterThem) {
  const std::string sock = "/nonexistent/gw-test.sock";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"job", "report", "7", "--json", "--socket", sock},
        std::vector<std::string>{"job", "show", "7", "--json", "--socket", sock},
        std::vector<std::string>{"gpu", "list", "--json", "--socket", sock}}) {
    const auto r = run_gpuwarden(args);
    EXPECT_NE(r.exit_code, 64) << args[0] << " " << args[1] << ": " << r.describe();
    EXPECT_THAT(r.err, ::testing::Not(HasSubstr("not expected"))) << r.describe();
    EXPECT_THAT(r.err, HasSubstr(sock)) << r.describe();
  }
}

TEST(CliMisc, NoSubcommandIsAUsageErrorWithHelp) {
  const auto r = run_gpuwarden({});
  EXPECT_EQ(r.exit_code, 64) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("name a subcommand"));
  EXPECT_THAT(r.err, HasSubstr("doctor"));
}

TEST(CliMisc, UnknownPolicyNamesTheKnownOnes) {
  const std::string trace = std::string(GW_SOURCE_DIR) + "/data/traces/tiresias-60job";
  const auto r = run_gpuwarden({"simulate", "--trace", trace, "--policies", "nope"});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("'nope'"));
  EXPECT_THAT(r.err, HasSubstr("fcfs"));
}

TEST(CliMisc, DoctorInvalidCombinationIsAUsageError) {
  const auto r = run_gpuwarden({"doctor", "--demo", "--from", "x.txt"});
  EXPECT_EQ(r.exit_code, 64) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("gpuwarden doctor: --from reads captured files"));
}

}  // namespace
}  // namespace gw::clitest
