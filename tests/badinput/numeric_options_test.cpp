// Every numeric option of every subcommand against NaN, infinity, -1, 0 and a huge value. The
// options come from the option library's own tables (cli::option_table()), so an option added
// tomorrow is in the matrix without anyone listing it. Each case runs the real binary and
// asserts the exit code (64), the first line ("gpuwarden <cmd>: --opt: must be ... (got v)"), a
// time bound, a memory bound and that an existing output file was left as it was.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "badinput_cases.h"
#include "child.h"
#include "cli/command.h"
#include "cli/options.h"

namespace gw::badinput {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr std::chrono::milliseconds kTimeBound{30000};
constexpr long kRssBoundKb = 700 * 1024;  // ASan's own overhead included
const char* const kBadValues[] = {"nan", "inf", "-1", "0", "1e300"};

// The options where 0 is a meaningful value ("none", "no wait", "seed 0"). Every other numeric
// option must refuse 0 too. An expectation, kept by hand on purpose: the matrix is generated.
const std::set<std::string>& zero_allowed() {
  static const std::set<std::string> kZero = {
      "capture --interval-ms",
      "simulate --seed",
      "simulate --horizon-days",
      "simulate --failure-rate-per-gpu-hour",
      "simulate --node-failure-rate-per-node-hour",
      "simulate --repair-minutes",
      "simulate --checkpoint-minutes",
      "simulate --checkpoint-cost-seconds",
      "simulate --restart-seconds",
      "simulate --maintenance-every-hours",
      "simulate --maintenance-minutes",
      "submit --priority",
      "doctor --gpu",  // GPU index 0
  };
  return kZero;
}

// Arguments after the option that make an accepted value end at once, without a GPU, a
// network port or a long replay: every subcommand needs one (the test fails for a new one).
std::optional<std::vector<std::string>> fast_tail(const std::string& command,
                                                  const std::string& option,
                                                  const std::string& keep) {
  const std::string missing = (work_dir() / "no-such-input").string();
  // --gpu only applies with --stress; the missing scenario ends the run before any load.
  if (command == "doctor" && option == "--gpu") return {{"--stress=1", "--scenario", missing}};
  if (command == "doctor" || command == "status" || command == "check" || command == "watch")
    return {{"--scenario", missing}};
  if (command == "submit") return {{"--socket", missing, "--", "true"}};
  if (command == "queue") return {{"--socket", missing}};
  if (command == "capture") return {{"--scenario", missing, "-o", keep, "--force"}};
  if (command == "simulate") return {{"--trace", missing, "-o", keep}};
  if (command == "serve") return {{"--check-config", "--config", missing}};
  if (command == "history") return {{"--db", missing, "--metric", "temp_c"}};
  return std::nullopt;
}

std::vector<cli::OptionInfo> numeric_options() {
  std::vector<cli::OptionInfo> out;
  for (cli::OptionInfo& o : cli::option_table())
    if (cli::is_numeric_type_name(o.type_name)) out.push_back(std::move(o));
  return out;
}

// In-process: does the option library accept `--opt=value` for this subcommand?
bool parses(const std::string& command, const std::string& option, const std::string& value) {
  std::ostringstream sink;
  const cli::Io io{sink, sink, false};
  for (const auto& spec : cli::command_table()) {
    if (command != spec.name) continue;
    CLI::App app{"t"};
    CLI::App* sub = app.add_subcommand(spec.name, spec.summary);
    // The action owns the options' targets: it must outlive the parse.
    const cli::Action action = spec.configure(*sub, io);
    const std::string arg = option + "=" + value;
    const char* argv[] = {"gpuwarden", spec.name, arg.c_str()};
    try {
      app.parse(3, argv);
      return true;
    } catch (const CLI::ParseError&) {
      return false;
    }
  }
  ADD_FAILURE() << "no subcommand " << command;
  return false;
}

std::string read_file(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(NumericOptionList, CoversEverySubcommandThatHasNumbers) {
  const auto opts = numeric_options();
  std::set<std::string> names;
  for (const auto& o : opts) names.insert(o.command + " " + o.name);
  // Not the list itself (that is generated) but proof the generation sees what it must.
  for (const char* must :
       {"doctor --window", "doctor --interval", "status --deadline-ms", "capture --samples",
        "simulate --dlas-queues", "simulate --limit-factor", "simulate --dlas-thresholds",
        "simulate --repair-minutes", "serve --deadline-ms"})
    EXPECT_TRUE(names.count(must)) << must;
  for (const std::string& z : zero_allowed()) EXPECT_TRUE(names.count(z)) << "stale entry " << z;
  for (const auto& o : opts)
    EXPECT_TRUE(fast_tail(o.command, o.name, "x").has_value())
        << "add a fast_tail for " << o.command;
}

TEST(OptionContract, EverySubcommandTakesNoColor) {
  std::map<std::string, bool> has;
  for (const auto& spec : cli::command_table()) has[spec.name] = false;
  for (const auto& o : cli::option_table())
    if (o.name == "--no-color") has[o.command] = o.flag;
  for (const auto& [cmd, yes] : has) EXPECT_TRUE(yes) << cmd << " has no --no-color flag";
}

struct NumericCase {
  cli::OptionInfo option;
  std::string value;
};

class NumericOptionMatrix : public ::testing::TestWithParam<NumericCase> {};

TEST_P(NumericOptionMatrix, RefusedWithTheOptionAndItsRange) {
  const cli::OptionInfo& o = GetParam().option;
  const std::string& v = GetParam().value;
  const std::string id = o.command + " " + o.name;
  const bool zero_ok = v == "0" && zero_allowed().count(id) > 0;
  EXPECT_EQ(parses(o.command, o.name, v), zero_ok) << id << "=" << v;

  // Named as the subcommand's output is (capture refuses to write a scenario into ".html").
  const auto keep = (work_dir() / ("keep-num-" + o.command + o.name + "-" + v +
                                   (o.command == "capture" ? ".json" : ".html")))
                        .string();
  const std::string kKeep = "an existing report that a refused option must not touch\n";
  std::ofstream(keep) << kKeep;
  const auto tail = fast_tail(o.command, o.name, keep);
  ASSERT_TRUE(tail) << "no fast_tail for " << o.command;
  std::vector<std::string> args = {o.command, o.name + "=" + v};
  args.insert(args.end(), tail->begin(), tail->end());
  const ChildResult c = run_child({}, args, kTimeBound);
  EXPECT_FALSE(c.timed_out) << c.describe();
  EXPECT_EQ(c.signal, 0) << c.describe();
  EXPECT_LT(c.max_rss_kb, kRssBoundKb) << c.describe();
  EXPECT_EQ(read_file(keep), kKeep) << "the existing output file was changed";
  if (zero_ok) {
    EXPECT_NE(c.exit_code, cli::kUsageError) << c.describe();
    EXPECT_THAT(c.first_err_line(), ::testing::Not(HasSubstr("must be"))) << c.describe();
    return;
  }
  EXPECT_EQ(c.exit_code, cli::kUsageError) << c.describe();
  EXPECT_THAT(c.first_err_line(), StartsWith("gpuwarden " + o.command + ": " + o.name + ": must "))
      << c.describe();
  EXPECT_THAT(c.first_err_line(), HasSubstr("(got " + v + ")")) << c.describe();
  // The allowed range is named: "[1, 64]" / "(0, 3600]".
  EXPECT_THAT(c.first_err_line(), ::testing::ContainsRegex("[[(][-0-9.e+]+, [-0-9.e+]+\\]"))
      << c.describe();
  EXPECT_THAT(c.err, HasSubstr("Run 'gpuwarden " + o.command + " --help'")) << c.describe();
  if (v == "nan") {
    // docs/cli.md lists the option with the range the binary states.
    const std::string line = c.first_err_line();
    const size_t in = line.find(" in ");
    const size_t got = line.rfind(" (got ");
    ASSERT_TRUE(in != std::string::npos && got != std::string::npos && got > in) << line;
    const std::string range = line.substr(in + 4, got - in - 4);
    EXPECT_THAT(read_file(std::string(GW_SOURCE_DIR) + "/docs/cli.md"),
                HasSubstr("| `" + id + "` | " + range))
        << "docs/cli.md: no row for " << id << " with range " << range;
  }
}

std::vector<NumericCase> numeric_cases() {
  std::vector<NumericCase> out;
  for (const cli::OptionInfo& o : numeric_options())
    for (const char* v : kBadValues) out.push_back({o, v});
  return out;
}

std::string value_name(const std::string& v) {
  if (v == "-1") return "minus_one";
  if (v == "1e300") return "huge";
  return v;
}

INSTANTIATE_TEST_SUITE_P(Matrix, NumericOptionMatrix, ::testing::ValuesIn(numeric_cases()),
                         [](const auto& p) {
                           std::string n = p.param.option.command + "_" +
                                           p.param.option.name.substr(2) + "__" +
                                           value_name(p.param.value);
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace gw::badinput
