#include "child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "run_binary.h"

namespace gw::badinput {
namespace {

std::string slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string ChildResult::first_err_line() const {
  return err.substr(0, err.find('\n'));
}

std::string ChildResult::describe() const {
  std::ostringstream o;
  o << "exit " << exit_code << " signal " << signal << (timed_out ? " TIMED OUT" : "") << " in "
    << elapsed.count() << " ms, max RSS " << max_rss_kb << " kB\nstderr: " << err.substr(0, 2000)
    << "\nstdout: " << out.substr(0, 600);
  return o.str();
}

ChildResult run_child(const std::vector<std::string>& prefix, const std::vector<std::string>& args,
                      std::chrono::milliseconds timeout, const ChildOptions& options) {
  const clitest::TempDir io;
  const std::string out_path =
      options.stdout_path.empty() ? (io.path() / "out").string() : options.stdout_path;
  const std::string err_path = (io.path() / "err").string();
  std::vector<std::string> argv = prefix;
  argv.push_back(clitest::gpuwarden_path().string());
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  // The fake NVML's scripted hangs and the leak checker are not what is measured here.
  std::vector<std::string> env = {"PATH=/usr/bin:/bin", "ASAN_OPTIONS=detect_leaks=0", "LC_ALL=C",
                                  "TERM=dumb"};
  std::vector<char*> cenv;
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int o = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int n = ::open("/dev/null", O_RDONLY);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::dup2(n, 0);
    ::setpgid(0, 0);
    ::execve(cargv[0], cargv.data(), cenv.data());
    ::_exit(127);
  }
  ChildResult r;
  int status = 0;
  rusage ru{};
  bool signalled = options.signal == 0;
  for (;;) {
    if (!signalled && std::chrono::steady_clock::now() - t0 >= options.signal_after) {
      ::kill(pid, options.signal);
      signalled = true;
    }
    const pid_t w = ::wait4(pid, &status, WNOHANG, &ru);
    if (w == pid) break;
    if (std::chrono::steady_clock::now() - t0 > timeout) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      ::wait4(pid, &status, 0, &ru);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  r.elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  r.max_rss_kb = ru.ru_maxrss;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  if (options.stdout_path.empty()) r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

}  // namespace gw::badinput
