// Every example command in README.md and docs/*.md runs as written. Lines starting with
// `gpuwarden ` inside fenced blocks are collected (with `\` continuations, without trailing
// `# comments`) and run in order in a scratch folder that links the repository's data/,
// scenarios/ and fixtures/ (so `capture -o x.json` then `status --scenario x.json` works). What
// is skipped is skipped for a reason this file names, and the test prints the list.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "run_binary.h"

namespace gw {
namespace {

namespace fs = std::filesystem;

struct Example {
  std::string where;  // file:line
  std::vector<std::string> args;
};

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  char quote = 0;
  for (char c : line) {
    if (quote != 0) {
      if (c == quote)
        quote = 0;
      else
        cur += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == ' ' || c == '\t') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::vector<Example> collect(const fs::path& file, const fs::path& root) {
  std::vector<Example> out;
  std::ifstream in(file);
  bool fenced = false;
  int n = 0;
  std::string pending;
  int pending_line = 0;
  for (std::string l; std::getline(in, l);) {
    ++n;
    if (l.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) continue;
    if (pending.empty() && l.rfind("gpuwarden ", 0) != 0) continue;
    if (pending.empty()) pending_line = n;
    const size_t hash = l.find(" #");
    std::string body = hash == std::string::npos ? l : l.substr(0, hash);
    while (!body.empty() && body.back() == ' ') body.pop_back();
    if (!body.empty() && body.back() == '\\') {
      pending += body.substr(0, body.size() - 1) + " ";
      continue;
    }
    pending += body;
    auto w = words(pending);
    w.erase(w.begin());  // "gpuwarden"
    out.push_back({fs::relative(file, root).string() + ":" + std::to_string(pending_line), w});
    pending.clear();
  }
  return out;
}

bool has(const std::vector<std::string>& a, const std::string& w) {
  return std::find(a.begin(), a.end(), w) != a.end();
}

// Why an example is not run, or "" to run it.
std::string skip_reason(const Example& e, const fs::path& scratch) {
  static const std::set<std::string> commands = {"doctor",   "status", "capture",
                                                 "simulate", "serve",  "history"};
  const auto& a = e.args;
  if (a.empty() || commands.count(a[0]) == 0) return "output or prose, not a command";
  for (const std::string& w : a) {
    if (w.find('[') != std::string::npos || w.find('|') != std::string::npos ||
        w.find("...") != std::string::npos || w.find('<') != std::string::npos || w.back() == ':' ||
        std::regex_match(w, std::regex("[A-Z][A-Z_]+")))
      return "a synopsis with placeholders";
    if (w == ">" || w.find('>') == 0) return "uses shell redirection";
  }
  if (a[0] == "serve") return "starts the long-running daemon (covered by tests/serve)";
  if (a[0] == "history" && !has(a, "--list-metrics") && !has(a, "--db"))
    return "reads the running daemon's database";
  const bool offline = has(a, "--demo") || has(a, "--scenario") || has(a, "--from") ||
                       has(a, "--list-checks") || has(a, "--list-metrics");
  if ((a[0] == "doctor" || a[0] == "status" || a[0] == "capture") && !offline)
    return "needs a GPU (real NVML)";
  for (size_t i = 1; i < a.size(); ++i) {
    const bool file_like =
        std::regex_match(a[i], std::regex(R"([\w./-]+\.(txt|xml|csv|log|json))"));
    const bool output = a[i - 1] == "-o" || a[i - 1] == "--output" || a[i - 1] == "--jobs-out";
    if (file_like && !output && !fs::exists(scratch / a[i]) &&
        !fs::exists(scratch / (a[i] + ".gz")))
      return "names the reader's own file " + a[i];
  }
  return "";
}

TEST(DocExamples, EveryDocumentedCommandRunsAsWritten) {
  const fs::path root = GW_SOURCE_DIR;
  std::vector<Example> all = collect(root / "README.md", root);
  std::vector<fs::path> docs;
  for (const auto& f : fs::directory_iterator(root / "docs"))
    if (f.path().extension() == ".md") docs.push_back(f.path());
  std::sort(docs.begin(), docs.end());
  for (const auto& d : docs) {
    auto ex = collect(d, root);
    all.insert(all.end(), ex.begin(), ex.end());
  }
  clitest::TempDir scratch;
  for (const char* d : {"data", "scenarios", "fixtures"})
    fs::create_directory_symlink(root / d, scratch.path() / d);
  size_t ran = 0;
  std::string skipped;
  for (const Example& e : all) {
    const std::string why = skip_reason(e, scratch.path());
    if (!why.empty()) {
      skipped += "  " + e.where + ": " + why + "\n";
      continue;
    }
    // The one change to what is written: a simulate example replays at most 2000 jobs (the full
    // Philly replay takes minutes under ASan); options, trace path and policies are as written.
    std::vector<std::string> args = e.args;
    if (args[0] == "simulate" && !has(args, "--limit")) {
      args.push_back("--limit");
      args.push_back("2000");
    }
    clitest::RunOptions ro;
    ro.cwd = scratch.path();
    ro.timeout = std::chrono::milliseconds(180'000);
    const auto r = clitest::run_gpuwarden(args, ro);
    // 0 healthy, 1/2 findings: the command worked. 3 (nothing read), 64 (usage), 74 (write)
    // and signals mean the documented example is broken.
    EXPECT_TRUE(!r.timed_out && r.signal == 0 && r.exit_code >= 0 && r.exit_code <= 2)
        << e.where << "\n"
        << r.describe();
    ++ran;
  }
  std::cout << "documented examples run: " << ran << ", skipped:\n" << skipped;
  EXPECT_GE(ran, 8u) << "the examples were not found";
}

}  // namespace
}  // namespace gw
