// Colour conventions end to end (issue 10 §5): the binary runs on a pseudo-terminal, as a user
// sees it, for every subcommand that colours. A terminal with TERM=xterm gets colour; NO_COLOR
// set and not empty (no-color.org), TERM=dumb and --no-color each turn it off; NO_COLOR set but
// empty does not.
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "run_binary.h"

namespace gw::badinput {
namespace {

struct PtyRun {
  int exit_code = -1;
  std::string out;  // stdout and stderr together, as the terminal shows them
};

PtyRun run_on_pty(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  std::vector<std::string> argv = {clitest::gpuwarden_path().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::vector<std::string> full = {"PATH=/usr/bin:/bin", "ASAN_OPTIONS=detect_leaks=0", "LC_ALL=C"};
  full.insert(full.end(), env.begin(), env.end());
  std::vector<char*> cenv;
  for (auto& e : full) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    ::execve(cargv[0], cargv.data(), cenv.data());
    ::_exit(127);
  }
  PtyRun r;
  if (pid < 0) return r;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO once the child has closed the terminal
    r.out.append(buf, static_cast<size_t>(n));
  }
  ::kill(pid, SIGKILL);  // no-op when it has exited
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

bool coloured(const std::string& s) {
  return s.find("\x1b[") != std::string::npos;
}

struct Command {
  std::string name;
  std::vector<std::string> args;
};

std::vector<Command> colouring_commands() {
  const std::string trace = std::string(GW_SOURCE_DIR) + "/tests/traces/data/tiresias_unsorted.csv";
  return {
      {"status", {"status", "--demo"}},
      {"doctor", {"doctor", "--demo", "--quick", "--no-kernel-log", "--no-host", "-q"}},
      {"simulate",
       {"simulate", "--trace", trace, "--nodes", "2", "--gpus-per-node", "8", "--policies", "fcfs",
        "-q"}},
  };
}

TEST(ColourOnATerminal, FollowsTermNoColorAndTheFlag) {
  for (const Command& c : colouring_commands()) {
    const PtyRun plain = run_on_pty(c.args, {"TERM=xterm-256color"});
    ASSERT_NE(plain.exit_code, -1) << c.name;
    EXPECT_TRUE(coloured(plain.out)) << c.name << " is not coloured on a terminal:\n"
                                     << plain.out.substr(0, 400);
    const PtyRun empty = run_on_pty(c.args, {"TERM=xterm-256color", "NO_COLOR="});
    EXPECT_TRUE(coloured(empty.out)) << c.name << ": an empty NO_COLOR must not turn colour off";
    for (const auto& [why, env] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"NO_COLOR=1", {"TERM=xterm-256color", "NO_COLOR=1"}}, {"TERM=dumb", {"TERM=dumb"}}}) {
      const PtyRun off = run_on_pty(c.args, env);
      EXPECT_EQ(off.exit_code, plain.exit_code) << c.name << " " << why;
      EXPECT_FALSE(coloured(off.out)) << c.name << " with " << why << ":\n"
                                      << off.out.substr(0, 400);
    }
    std::vector<std::string> flagged = c.args;
    flagged.push_back("--no-color");
    const PtyRun flag = run_on_pty(flagged, {"TERM=xterm-256color"});
    EXPECT_EQ(flag.exit_code, plain.exit_code) << c.name << " --no-color";
    EXPECT_FALSE(coloured(flag.out)) << c.name << " --no-color:\n" << flag.out.substr(0, 400);
  }
}

}  // namespace
}  // namespace gw::badinput
