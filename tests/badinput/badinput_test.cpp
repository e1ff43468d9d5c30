// The bad-input matrix: each subcommand that reads a file, against each kind of bad file; each
// numeric option against NaN, infinity, -1, 0 and a huge value. Every case asserts the exit
// status, the first line of stderr, a time bound (no hang), a memory bound (peak RSS: no
// unbounded growth; RLIMIT_AS cannot be used under ASan) and that an existing output file is
// left as it was.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "badinput_cases.h"
#include "child.h"
#include "run_binary.h"

namespace gw::badinput {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A hang never ends; this bound only has to sit well above honest work. The ASan build (-O0)
// reads five million one-character lines in 61 s on the 2-core VM of 2026-12-02 and in 219 s
// alone on the 2-core Zen 3 VM of 2026-12-07, where 150 s ran out under the parallel test run
// (every line is offered to each reader of the segmenting reader: ~6,200 instructions a line in
// the release build, which takes 4-9 s). The speed itself is measured in docs/perf/parse.md,
// not here.
constexpr std::chrono::milliseconds kTimeBound{600000};
constexpr long kRssBoundKb =
    700 * 1024;  // ASan's own overhead included; /dev/zero read whole would pass it

struct Expect {
  int exit_code;
  std::string first_line_prefix;
};

struct Reader {
  std::string name;
  std::vector<std::string> (*args)(const std::string& file, const std::string& keep);
  // Expected result per bad file; "*" is the default.
  std::map<std::string, Expect> expect;
};

const std::string kKeepText = "an existing report that a failed run must not touch\n";

std::vector<std::string> doctor_from(const std::string& f, const std::string&) {
  return {"doctor", "--from", f};
}
std::vector<std::string> doctor_scenario(const std::string& f, const std::string&) {
  return {"doctor", "--scenario", f, "--quick"};
}
std::vector<std::string> status_scenario(const std::string& f, const std::string&) {
  return {"status", "--scenario", f};
}
std::vector<std::string> simulate_trace(const std::string& f, const std::string& keep) {
  return {"simulate", "--trace", f, "--nodes", "2", "--gpus-per-node", "8", "-o", keep};
}
std::vector<std::string> capture_scenario_to(const std::string& f, const std::string& keep) {
  return {"capture", "--scenario", f, "-o", keep, "--force"};
}

const std::string kNoInput = "gpuwarden doctor: no input could be read, nothing was diagnosed";

std::vector<Reader> readers() {
  return {
      {"doctor_from", doctor_from, {{"*", {3, kNoInput}}, {"non_utf8", {2, ""}}}},
      {"doctor_scenario", doctor_scenario, {{"*", {3, "gpuwarden doctor: --scenario: "}}}},
      {"status_scenario",
       status_scenario,
       {{"*", {69, "gpuwarden status: cannot read the GPUs: "}},
        {"missing", {66, "gpuwarden status: --scenario: "}},
        {"directory", {66, "gpuwarden status: --scenario: "}},
        {"unreadable", {66, "gpuwarden status: --scenario: "}},
        {"dev_zero", {66, "gpuwarden status: --scenario: "}}}},
      {"simulate_trace",
       simulate_trace,
       {{"*", {2, "gpuwarden simulate: "}},
        {"missing", {2, "gpuwarden simulate: --trace: "}},
        {"unreadable", {2, "gpuwarden simulate: --trace: "}},
        {"dev_zero", {2, "gpuwarden simulate: --trace: "}},
        {"fifo_no_writer", {2, "gpuwarden simulate: --trace: "}}}},
      {"capture_scenario", capture_scenario_to, {{"*", {2, "gpuwarden capture: "}}}},
  };
}

std::string read_file(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct FileCase {
  size_t reader;
  size_t file;
};

class BadFileMatrix : public ::testing::TestWithParam<FileCase> {};

TEST_P(BadFileMatrix, RefusedClearlyInTimeAndMemoryWithOutputsIntact) {
  const Reader r = readers()[GetParam().reader];
  ASSERT_EQ(bad_files().size(), bad_file_names().size());
  const BadFile& f = bad_files()[GetParam().file];
  // Named as the reader's output is: capture writes a scenario and refuses a ".html" name.
  const auto keep = (work_dir() / ("keep-" + r.name + "-" + f.name +
                                   (r.name.starts_with("capture") ? ".json" : ".html")))
                        .string();
  {
    std::ofstream k(keep);
    k << kKeepText;
  }
  const Expect e = r.expect.count(f.name) ? r.expect.at(f.name) : r.expect.at("*");
  const ChildResult c = run_child(unprivileged_prefix(), r.args(f.path, keep), kTimeBound);
  EXPECT_FALSE(c.timed_out) << c.describe();
  EXPECT_EQ(c.signal, 0) << c.describe();
  EXPECT_EQ(c.exit_code, e.exit_code) << c.describe();
  if (!e.first_line_prefix.empty()) {
    EXPECT_THAT(c.first_err_line(), StartsWith(e.first_line_prefix)) << c.describe();
  }
  EXPECT_LT(c.max_rss_kb, kRssBoundKb) << c.describe();
  EXPECT_EQ(read_file(keep), kKeepText) << "the existing output file was changed";
  // Nothing from an input reaches the terminal as a control sequence.
  EXPECT_EQ(c.err.find('\x1b'), std::string::npos) << c.describe();
  EXPECT_EQ(c.out.find('\x1b'), std::string::npos) << c.describe();
  if (f.name == "unreadable") {
    // Not vacuous: the open itself failed for lack of permission (as root the child runs
    // without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH, so the file's mode applies).
    EXPECT_THAT(c.out + c.err, HasSubstr("permission denied")) << c.describe();
  }
}

std::vector<FileCase> file_cases() {
  std::vector<FileCase> out;
  const size_t files = bad_file_names().size();  // the files themselves are made lazily
  for (size_t r = 0; r < readers().size(); ++r)
    for (size_t f = 0; f < files; ++f) out.push_back({r, f});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Matrix, BadFileMatrix, ::testing::ValuesIn(file_cases()),
                         [](const auto& p) {
                           return readers()[p.param.reader].name + "__" +
                                  bad_file_names()[p.param.file];
                         });

TEST(BadFileMatrixShape, EveryGeneratedFileIsInTheMatrix) {
  ASSERT_EQ(bad_files().size(), bad_file_names().size());
  for (size_t i = 0; i < bad_files().size(); ++i)
    EXPECT_EQ(bad_files()[i].name, bad_file_names()[i]);
}

}  // namespace
}  // namespace gw::badinput

namespace gw::badinput {
namespace {

// ---- outputs ----

TEST(Outputs, StdoutOnAFullDiskIsAnErrorForEveryCommand) {
  const std::string trace = std::string(GW_SOURCE_DIR) + "/tests/traces/data/tiresias_unsorted.csv";
  const std::vector<std::vector<std::string>> commands = {
      {"status", "--demo"},
      {"status", "--demo", "--json"},
      {"doctor", "--demo", "--quick"},
      {"doctor", "--demo", "--quick", "--json"},
      {"doctor", "--list-checks", "--json"},
      {"capture", "--demo"},
      {"simulate", "--trace", trace, "--nodes", "2", "--gpus-per-node", "8", "--policies", "fcfs"},
  };
  ChildOptions o;
  o.stdout_path = "/dev/full";
  for (const auto& args : commands) {
    const ChildResult c = run_child({}, args, kTimeBound, o);
    EXPECT_EQ(c.exit_code, 74) << args[0] << " " << args[1] << "\n" << c.describe();
    EXPECT_THAT(c.err, HasSubstr("cannot write")) << c.describe();
  }
}

// A cluster inside each option's range whose product the engine cannot hold (issue 20): a clear
// refusal that names both options, never an out-of-memory abort; the checkpoint sweep too.
TEST(Outputs, SimulateRefusesAClusterTooLargeToModel) {
  const std::string trace = std::string(GW_SOURCE_DIR) + "/tests/traces/data/tiresias_unsorted.csv";
  const std::vector<std::string> base = {"simulate", "--trace",    trace,
                                         "--nodes",  "1000000",    "--gpus-per-node",
                                         "1024",     "--policies", "fcfs"};
  for (const bool sweep : {false, true}) {
    std::vector<std::string> args = base;
    if (sweep)
      args.insert(args.end(), {"--checkpoint-sweep", "--failure-rate-per-gpu-hour", "0.001"});
    const ChildResult c = run_child({}, args, kTimeBound);
    EXPECT_EQ(c.exit_code, 2) << c.describe();
    EXPECT_EQ(c.signal, 0) << c.describe();
    EXPECT_THAT(c.err, HasSubstr("1000000 nodes x 1024 GPUs = 1024000000 GPUs is more than the "
                                 "simulator models"))
        << c.describe();
    EXPECT_THAT(c.err, HasSubstr("--nodes/--gpus-per-node")) << c.describe();
    EXPECT_TRUE(c.out.empty()) << c.out.substr(0, 300);
  }
  // The largest it models is still run.
  const ChildResult ok =
      run_child({},
                {"simulate", "--trace", trace, "--nodes", "4096", "--gpus-per-node", "1024",
                 "--policies", "fcfs", "--format", "json"},
                kTimeBound);
  EXPECT_EQ(ok.exit_code, 0) << ok.describe();
  EXPECT_TRUE(nlohmann::json::accept(ok.out)) << ok.out.substr(0, 300);
}

TEST(Outputs, CaptureInterruptedKeepsItsSamplesAndSaysSo) {
  const auto dir = work_dir() / "capture-interrupt";
  std::filesystem::create_directories(dir);
  const auto out = (dir / "box.json").string();
  for (const int sig : {SIGTERM, SIGINT}) {
    std::filesystem::remove(out);
    ChildOptions o;
    o.signal = sig;
    o.signal_after = std::chrono::milliseconds(2500);
    const ChildResult c =
        run_child({},
                  {"capture", "--scenario", clitest::scenario_path("demo").string(), "-o", out,
                   "--samples", "100000", "--interval-ms", "20"},
                  kTimeBound, o);
    EXPECT_EQ(c.exit_code, 128 + sig) << c.describe();
    EXPECT_THAT(c.first_err_line(), StartsWith(std::string("gpuwarden capture: interrupted by ") +
                                               (sig == SIGTERM ? "SIGTERM" : "SIGINT") + " after "))
        << c.describe();
    EXPECT_THAT(c.err, HasSubstr("kept them in " + out));
    const std::string text = read_file(out);
    ASSERT_TRUE(nlohmann::json::accept(text)) << text.substr(0, 300);
    const auto doc = nlohmann::json::parse(text);
    EXPECT_EQ(doc.at("devices").size(), 8u);
    // The replay of the kept file works.
    const ChildResult replay = run_child({}, {"status", "--scenario", out}, kTimeBound);
    EXPECT_EQ(replay.exit_code, 0) << replay.describe();
    // Only the output is left: the temporary file was renamed, not copied.
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
  }
}

TEST(Outputs, CaptureRefusesToOverwriteWithoutForce) {
  const auto keep = (work_dir() / "existing-capture.json").string();
  std::ofstream(keep) << kKeepText;
  const ChildResult c = run_child({}, {"capture", "--demo", "-o", keep}, kTimeBound);
  EXPECT_EQ(c.exit_code, 64) << c.describe();
  EXPECT_THAT(c.first_err_line(), StartsWith("gpuwarden capture: " + keep + ": already exists"));
  EXPECT_EQ(read_file(keep), kKeepText);
  const ChildResult forced =
      run_child({}, {"capture", "--demo", "-o", keep, "--force"}, kTimeBound);
  EXPECT_EQ(forced.exit_code, 0) << forced.describe();
  EXPECT_TRUE(nlohmann::json::accept(read_file(keep)));
}

TEST(Outputs, UsageErrorsShareOneCodeAndPrefix) {
  for (const auto& [args, prefix] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           // The three examples docs/cli.md gives, word for word.
           {{"doctor", "--bogus"},
            "gpuwarden doctor: The following argument was not expected: --bogus"},
           {{"simulate", "--nodes"}, "gpuwarden simulate: --nodes: 1 required UINT missing"},
           {{"status", "--demo", "--scenario", "x"},
            "gpuwarden status: --demo excludes --scenario"},
           {{"status", "--bogus"}, "gpuwarden status: "},
           {{"capture", "--bogus"}, "gpuwarden capture: "},
           {{"simulate", "--nodes"}, "gpuwarden simulate: "},  // a value is missing
           {{"--bogus"}, "gpuwarden: "},
           {{"simulate", "--trace", "x", "--format", "pdf"}, "gpuwarden simulate: "},
           {{"simulate", "--trace", "x", "--format", "json", "-o", "r.html"},
            "gpuwarden simulate: --format json does not match the extension of -o r.html"},
       }) {
    const ChildResult c = run_child({}, args, kTimeBound);
    EXPECT_EQ(c.exit_code, 64) << c.describe();
    EXPECT_THAT(c.first_err_line(), StartsWith(prefix)) << c.describe();
  }
}

// doctor's --help and docs/cli.md name the same exit codes as the code (doctor_run.h).
TEST(Outputs, DoctorHelpNamesEveryExitCode) {
  const ChildResult c = run_child({}, {"doctor", "--help"}, kTimeBound);
  EXPECT_EQ(c.exit_code, 0) << c.describe();
  for (const char* code : {"0 healthy", "1 warnings", "2 critical", "3 nothing could be read",
                           "5 nothing wrong in what was read", "64 invalid options",
                           "74 the report could not be written"})
    EXPECT_THAT(c.out, HasSubstr(code)) << c.out.substr(0, 600);
  EXPECT_THAT(read_file(std::string(GW_SOURCE_DIR) + "/docs/cli.md"),
              HasSubstr("| 1, 2, 3, 5 | `doctor`: warnings, critical, nothing could be read, "
                        "incomplete"));
}

TEST(Outputs, CaptureRefusesANameOfAnotherFormat) {
  const auto out = (work_dir() / "box.html").string();
  std::filesystem::remove(out);
  const ChildResult c = run_child({}, {"capture", "--demo", "-o", out}, kTimeBound);
  EXPECT_EQ(c.exit_code, 64) << c.describe();
  EXPECT_THAT(c.first_err_line(),
              StartsWith("gpuwarden capture: -o " + out + ": capture writes a scenario (JSON)"));
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(Outputs, HtmlExtensionPicksTheFormat) {
  const std::string trace = std::string(GW_SOURCE_DIR) + "/tests/traces/data/tiresias_unsorted.csv";
  const auto out = (work_dir() / "report.html").string();
  const ChildResult c = run_child({},
                                  {"simulate", "--trace", trace, "--nodes", "2", "--gpus-per-node",
                                   "8", "--policies", "fcfs", "-o", out},
                                  kTimeBound);
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  EXPECT_THAT(read_file(out), HasSubstr("<html")) << read_file(out).substr(0, 200);
}

}  // namespace
}  // namespace gw::badinput
