#include "run_binary.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace gw::clitest {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> child_environment(const RunOptions& options) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = kv.substr(0, eq);
    if (key.rfind("GPUWARDEN_", 0) == 0) continue;
    env[key] = kv.substr(eq + 1);
  }
  for (const auto& [key, value] : options.env) {
    if (value) {
      env[key] = *value;
    } else {
      env.erase(key);
    }
  }
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [key, value] : env) out.push_back(key + "=" + value);
  return out;
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Only async-signal-safe calls between fork and exec.
[[noreturn]] void exec_child(int out_fd, int err_fd, const std::string& cwd, char** argv,
                             char** envp) {
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  const int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, 0);
  // Its own process group, so a timeout can kill anything it started too.
  ::setpgid(0, 0);
  if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) ::_exit(126);
  ::execve(argv[0], argv, envp);
  ::_exit(127);
}

// Reads both pipes until they close or the deadline passes.
bool drain(int out_fd, int err_fd, RunResult& r, Clock::time_point deadline) {
  std::array<pollfd, 2> fds{pollfd{out_fd, POLLIN, 0}, pollfd{err_fd, POLLIN, 0}};
  std::array<std::string*, 2> sinks{&r.out, &r.err};
  std::array<char, 8192> buf{};
  int open_fds = 2;
  while (open_fds > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    const int n = ::poll(fds.data(), fds.size(), static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t got = ::read(fds[i].fd, buf.data(), buf.size());
      if (got > 0) {
        sinks[i]->append(buf.data(), static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  return true;
}

}  // namespace

std::string RunResult::describe() const {
  std::ostringstream s;
  s << "exit " << exit_code;
  if (signal != 0) s << ", signal " << signal;
  if (timed_out) s << ", TIMED OUT";
  s << " after " << elapsed.count() << " ms\n--- stderr ---\n"
    << err << "\n--- stdout (first 2000 chars) ---\n"
    << out.substr(0, 2000);
  return s.str();
}

std::filesystem::path gpuwarden_path() {
  return std::filesystem::path(GW_BINARY_DIR) / "gpuwarden";
}

std::string test_name(std::string scenario) {
  for (char& c : scenario)
    if (c == '-') c = '_';
  return scenario;
}

std::filesystem::path scenario_path(const std::string& name) {
  return std::filesystem::path(GW_SOURCE_DIR) / "scenarios" / (name + ".json");
}

RunResult run_gpuwarden(const std::vector<std::string>& args, const RunOptions& options) {
  std::vector<std::string> argv_s{
      (options.binary.empty() ? gpuwarden_path() : options.binary).string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<std::string> env_s = child_environment(options);
  auto argv = c_strings(argv_s);
  auto envp = c_strings(env_s);

  int out_pipe[2];
  int err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0)
    exec_child(out_pipe[1], err_pipe[1], options.cwd.string(), argv.data(), envp.data());
  ::setpgid(pid, pid);  // also here: whichever of parent and child runs first
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);

  RunResult r;
  r.timed_out = !drain(out_pipe[0], err_pipe[0], r, start + options.timeout);
  if (r.timed_out) ::kill(-pid, SIGKILL);
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "gw-clitest-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::filesystem::path TempDir::write(const std::string& name, const std::string& content) const {
  const auto p = path_ / name;
  std::ofstream f(p, std::ios::binary);
  f << content;
  return p;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace gw::clitest
