// Runs the built gpuwarden binary as a user would: argv, environment, stdout, stderr, exit code,
// with a hard timeout so that no test can ever hang on a wedged child.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gw::clitest {

struct RunResult {
  int exit_code = -1;  // the child's exit status; -1 when it was killed by a signal
  int signal = 0;      // the signal that ended it, 0 when it exited
  bool timed_out = false;
  std::string out;
  std::string err;
  std::chrono::milliseconds elapsed{0};
  std::string describe() const;  // for failure messages: code, signal, stderr
};

struct RunOptions {
  // Variables to set in the child (on top of this process's environment, with every
  // GPUWARDEN_* variable removed so the caller's shell cannot change what a test sees).
  // A value of std::nullopt removes the variable.
  std::map<std::string, std::optional<std::string>> env;
  std::chrono::milliseconds timeout{60000};
  std::filesystem::path cwd;     // empty: this process's working directory
  std::filesystem::path binary;  // empty: GW_BINARY_DIR/gpuwarden
};

// Runs GW_BINARY_DIR/gpuwarden (or options.binary) with `args` (argv[1..]).
RunResult run_gpuwarden(const std::vector<std::string>& args, const RunOptions& options = {});

std::filesystem::path gpuwarden_path();
// "pcie-link" -> "pcie_link": a scenario name as a gtest parameter name.
std::string test_name(std::string scenario);
std::filesystem::path scenario_path(const std::string& name);  // "demo" -> .../scenarios/demo.json

// A fresh directory under the system temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path write(const std::string& name, const std::string& content) const;

 private:
  std::filesystem::path path_;
};

std::string read_text(const std::filesystem::path& p);

}  // namespace gw::clitest
