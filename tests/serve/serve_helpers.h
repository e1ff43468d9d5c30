// Shared by the daemon tests: a temp dir, a daemon running on its own thread against the fake
// NVML, HTTP GETs through cpp-httplib's client, and a small parser of the exposition text.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>

#include "serve/daemon.h"

namespace gw::servetest {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = fs::temp_directory_path() /
            ("gw-serve-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name, std::ios::binary) << text;
    return path_ / name;
  }

 private:
  fs::path path_;
};

inline std::string scenario(const std::string& name) {
  return std::string(GW_SOURCE_DIR) + "/scenarios/" + name + ".json";
}

inline std::string fake_lib() {
  return std::string(GW_BINARY_DIR) + "/fake-nvml/libnvidia-ml.so.1";
}

// Scenario seconds per real second for this process's fake NVML (read when a scenario loads).
inline void set_time_scale(double scale) {
  ::setenv("GPUWARDEN_FAKE_TIME_SCALE", std::to_string(scale).c_str(), 1);
}

// Fast settings for tests; `extra` is appended (more sections or keys).
inline std::string fast_config(const fs::path& dir, const std::string& extra = "") {
  return "[serve]\nlisten = \"127.0.0.1:0\"\nstale_after = \"3s\"\n"
         "[storage]\npath = \"" +
         (dir / "history.db").string() +
         "\"\ncompact_interval = \"1s\"\n"
         "[sampling]\ninterval = \"100ms\"\ngpu_deadline = \"300ms\"\ndiagnose_interval = "
         "\"200ms\"\nkernel_log = \"\"\n" +
         extra;
}

class RunningDaemon {
 public:
  explicit RunningDaemon(serve::DaemonOptions o) {
    auto d = serve::Daemon::create(std::move(o));
    if (!d) {
      error = d.error().to_string();
      return;
    }
    daemon = std::move(*d);
    thread = std::thread([this] { daemon->run(); });
  }
  ~RunningDaemon() { stop(); }
  // How long stop() took, for the shutdown tests.
  std::chrono::milliseconds stop() {
    const auto t0 = std::chrono::steady_clock::now();
    if (daemon) daemon->stop();
    if (thread.joinable()) thread.join();
    daemon.reset();
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 t0);
  }
  bool ok() const { return daemon != nullptr; }
  int port() const { return daemon->port(); }

  std::unique_ptr<serve::Daemon> daemon;
  std::thread thread;
  std::string error;
};

inline serve::DaemonOptions options_for(const std::string& scenario_name,
                                        const std::string& config_text,
                                        const std::string& config_path = "") {
  serve::DaemonOptions o;
  auto c = serve::parse_config(config_text, config_path.empty() ? "test.toml" : config_path);
  if (c)
    o.config = std::move(*c);
  else
    ADD_FAILURE() << "test config does not parse: " << c.error().to_string();
  o.config_path = config_path;
  o.source.scenario = scenario(scenario_name);
  o.source.nvml_library = fake_lib();
  return o;
}

struct HttpResult {
  int status = 0;
  std::string body;
  std::chrono::milliseconds elapsed{0};
};

inline HttpResult get(int port, const std::string& path) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(2);
  c.set_read_timeout(5);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = c.Get(path.c_str());
  HttpResult out;
  out.elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
  if (r) {
    out.status = r->status;
    out.body = r->body;
  }
  return out;
}

// Series ("name{labels}") -> value, from exposition text.
inline std::map<std::string, double> parse_metrics(const std::string& text) {
  std::map<std::string, double> m;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t sp = line.rfind(' ');
    const std::string v = line.substr(sp + 1);
    m[line.substr(0, sp)] = v == "+Inf" ? HUGE_VAL : std::strtod(v.c_str(), nullptr);
  }
  return m;
}

// The value of the one series of `name` whose labels contain every `needle`.
inline std::optional<double> series(const std::map<std::string, double>& m, const std::string& name,
                                    std::initializer_list<std::string> needles) {
  std::optional<double> found;
  for (const auto& [k, v] : m) {
    if (k.rfind(name + "{", 0) != 0 && k != name) continue;
    bool all = true;
    for (const std::string& n : needles) all = all && k.find(n) != std::string::npos;
    if (all) found = v;
  }
  return found;
}

inline int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t n = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &n);
  ::close(s);
  return ntohs(a.sin_port);
}

class Process {
 public:
  // `run_as_uid` >= 0: the child drops to that user (and its group) before exec, so a test
  // running as root can still meet a file it may not write.
  Process(std::vector<std::string> argv, const fs::path& log, int run_as_uid = -1) {
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      if (run_as_uid >= 0 && (::setgid(static_cast<gid_t>(run_as_uid)) != 0 ||
                              ::setuid(static_cast<uid_t>(run_as_uid)) != 0))
        ::_exit(126);
      std::vector<char*> a;
      for (auto& s : argv) a.push_back(s.data());
      a.push_back(nullptr);
      ::execv(a[0], a.data());
      ::_exit(127);
    }
  }
  ~Process() { stop(SIGTERM); }
  // Sends `sig` and waits (up to 5 s, then SIGKILL); returns the wait status.
  int stop(int sig) {
    if (pid_ <= 0) return status_;
    ::kill(pid_, sig);
    int st = 0;
    for (int i = 0; i < 100 && ::waitpid(pid_, &st, WNOHANG) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (::waitpid(pid_, &st, WNOHANG) == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &st, 0);
    }
    pid_ = -1;
    status_ = st;
    return st;
  }
  pid_t pid() const { return pid_; }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

 private:
  pid_t pid_ = -1;
  int status_ = 0;
};

inline bool wait_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return pred();
}

}  // namespace gw::servetest
