// `gpuwarden watch` in a real terminal (tmux), fed by a real daemon playing scenarios/faces.json
// (GPU 2 thermally throttled, an Xid on GPU 1, GPU 5 lost at t=40 s, played 4x fast): keys are
// sent with send-keys, the screen is read with capture-pane. One daemon and one tmux server for
// the whole file; each case opens its own window.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../serve/serve_helpers.h"

namespace gw::servetest {
namespace {

using namespace std::chrono_literals;

std::string binary() {
  return std::string(GW_BINARY_DIR) + "/gpuwarden";
}

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  ::pclose(p);
  return out;
}

class Tmux {
 public:
  explicit Tmux(const fs::path& dir) : sock_((dir / "tmux.sock").string()) {}
  ~Tmux() { run(tmux() + " kill-server 2>/dev/null"); }
  std::string tmux() const { return "tmux -S " + sock_; }
  // A new window `name` of cols x rows running `command` (the pane stays after it exits). The
  // first call starts the server with an idle window, so the options hold before any view runs.
  void open(const std::string& name, int cols, int rows, const std::string& command) {
    if (!started_) {
      // (No global window-size manual: tmux 3.3a's server crashes on the next new-window;
      // resize-window below makes each window's size manual by itself.)
      run(tmux() + " -f /dev/null new-session -d -s t -n idle -x 100 -y 30 'sleep 3600'");
      run(tmux() + " set-option -g remain-on-exit on");
      started_ = true;
    }
    run(tmux() + " new-window -d -t t -n " + name + " '" + command + "'");
    run(tmux() + " resize-window -t t:" + name + " -x " + std::to_string(cols) + " -y " +
        std::to_string(rows));
  }
  void keys(const std::string& name, const std::string& keys) {
    run(tmux() + " send-keys -t t:" + name + " " + keys);
  }
  std::string screen(const std::string& name, bool escapes = false) {
    return run(tmux() + " capture-pane -p " + (escapes ? "-e " : "") + "-t t:" + name);
  }
  bool shows(const std::string& name, const std::string& text, std::chrono::milliseconds t = 15s) {
    return wait_until([&] { return screen(name).find(text) != std::string::npos; }, t);
  }
  std::string pane(const std::string& name, const std::string& format) {
    return run(tmux() + " display-message -p -t t:" + name + " '" + format + "'");
  }

 private:
  std::string sock_;
  bool started_ = false;
};

// One daemon for every case: scenario time runs 4x (GPU 5 is lost 10 s after start).
class WatchInTmux : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    set_time_scale(4);
    tmp_ = new TempDir();
    port_ = free_port();
    std::string c = fast_config(tmp_->path());
    c.replace(c.find("127.0.0.1:0"), 11, "127.0.0.1:" + std::to_string(port_));
    daemon_ = new Process({binary(), "serve", "--scenario", scenario("faces"), "--nvml-lib",
                           fake_lib(), "--config", tmp_->write("gw.toml", c).string()},
                          tmp_->path() / "serve.log");
    tmux_ = new Tmux(tmp_->path());
    ASSERT_TRUE(wait_until([] { return get(port_, "/api/overview").status == 200; }, 15s));
  }
  static void TearDownTestSuite() {
    delete tmux_;
    delete daemon_;
    delete tmp_;
  }
  static std::string watch_cmd(const std::string& env) {
    return "env " + env + " " + binary() +
           " watch --url http://127.0.0.1:" + std::to_string(port_) + " --refresh-ms 250";
  }
  static TempDir* tmp_;
  static Process* daemon_;
  static Tmux* tmux_;
  static int port_;
};
TempDir* WatchInTmux::tmp_ = nullptr;
Process* WatchInTmux::daemon_ = nullptr;
Tmux* WatchInTmux::tmux_ = nullptr;
int WatchInTmux::port_ = 0;

TEST_F(WatchInTmux, ShowsTheScenarioNumbersThrottleReasonAndTheLostGpu) {
  tmux_->open("main", 120, 30, watch_cmd("NO_COLOR=1 TERM=tmux-256color"));
  ASSERT_TRUE(tmux_->shows("main", "SW thermal slowdown")) << tmux_->screen("main");
  const std::string s = tmux_->screen("main");
  EXPECT_NE(s.find("91C/89/92"), std::string::npos) << s;  // GPU 2: temp / slowdown / shutdown
  EXPECT_NE(s.find("795/1980"), std::string::npos) << s;   // its SM clock against max
  EXPECT_NE(s.find("612/700W"), std::string::npos) << s;   // GPU 0 power against limit
  EXPECT_NE(s.find("HW thermal slowdown"), std::string::npos) << s;
  EXPECT_NE(s.find("5x16/5x16"), std::string::npos) << s;  // PCIe now/max
  ASSERT_TRUE(tmux_->shows("main", "LOST", 30s)) << tmux_->screen("main");
  ASSERT_TRUE(tmux_->shows("main", "gpu.fallen_off_bus")) << tmux_->screen("main");
  const std::string lost = tmux_->screen("main");
  EXPECT_NE(lost.find("fallen off the bus"), std::string::npos) << lost;
  EXPECT_NE(lost.find("GPU 5 gpu.fallen_off_bus"), std::string::npos) << lost;
}

TEST_F(WatchInTmux, SelectShowsProcessesAndFindingsWithEvidenceAndRemedy) {
  tmux_->open("sel", 120, 40, watch_cmd("NO_COLOR=1 TERM=tmux-256color"));
  ASSERT_TRUE(tmux_->shows("sel", "SW thermal slowdown"));
  tmux_->keys("sel", "Down Down Enter");
  ASSERT_TRUE(tmux_->shows("sel", "PROCESSES")) << tmux_->screen("sel");
  const std::string s = tmux_->screen("sel");
  EXPECT_NE(s.find("GPU 2  NVIDIA H100"), std::string::npos) << s;
  EXPECT_NE(s.find("python3"), std::string::npos) << s;
  EXPECT_NE(s.find("evidence:"), std::string::npos) << s;
  EXPECT_NE(s.find("remedy:"), std::string::npos) << s;
  EXPECT_NE(s.find("thermal."), std::string::npos) << s;
  tmux_->keys("sel", "Escape");
  ASSERT_TRUE(tmux_->shows("sel", "TEMP/SD/SH")) << tmux_->screen("sel");
}

TEST_F(WatchInTmux, SortScrollPauseHelpAndQuit) {
  // The pane's shell waits for watch and writes its exit status: tmux 3.3a at times leaves its
  // own dead child unreaped for many seconds (a zombie, pane_dead_status empty), so the status
  // is not read from tmux.
  const fs::path status = tmp_->path() / "keys.status";
  tmux_->open("keys", 120, 30,
              watch_cmd("NO_COLOR=1 TERM=tmux-256color") + "; echo $? > " + status.string());
  ASSERT_TRUE(tmux_->shows("keys", "LOST", 30s));
  tmux_->keys("keys", "s");
  ASSERT_TRUE(tmux_->shows("keys", "sort:health"));
  // Worst first: the lost GPU 5 heads the list (third line: title, column names, first GPU).
  std::istringstream lines(tmux_->screen("keys"));
  std::string l;
  for (int i = 0; i < 3; ++i) std::getline(lines, l);
  EXPECT_EQ(l.substr(0, 4), "> 5 ") << tmux_->screen("keys");
  tmux_->keys("keys", "[");
  EXPECT_TRUE(tmux_->shows("keys", "history -10m")) << tmux_->screen("keys");
  tmux_->keys("keys", "z");
  EXPECT_TRUE(tmux_->shows("keys", "span:1h")) << tmux_->screen("keys");
  tmux_->keys("keys", "p");
  EXPECT_TRUE(tmux_->shows("keys", "PAUSED"));
  tmux_->keys("keys", "?");
  EXPECT_TRUE(tmux_->shows("keys", "history window: 10m, 1h, 6h, 24h"));
  tmux_->keys("keys", "x q");
  const auto exit_status = [&] {
    std::string st;
    std::getline(std::ifstream(status), st);
    return st;
  };
  ASSERT_TRUE(wait_until([&] { return !exit_status().empty(); }, 10s)) << tmux_->screen("keys");
  EXPECT_EQ(exit_status(), "0");
}

TEST_F(WatchInTmux, ResizeTo80x24KeepsTheLayoutWhole) {
  tmux_->open("small", 120, 40, watch_cmd("NO_COLOR=1 TERM=tmux-256color"));
  ASSERT_TRUE(tmux_->shows("small", "SW thermal slowdown"));
  run(tmux_->tmux() + " resize-window -t t:small -x 80 -y 24");
  ASSERT_TRUE(wait_until(
      [&] { return tmux_->pane("small", "#{pane_width}x#{pane_height}") == "80x24\n"; }, 5s));
  ASSERT_TRUE(tmux_->shows("small", "PCIE NOW/MAX"));
  ASSERT_TRUE(wait_until(
      [&] {
        std::istringstream in(tmux_->screen("small"));
        std::vector<std::string> rows;
        for (std::string r; std::getline(in, r);) rows.push_back(r);
        return rows.size() == 24 && rows[0].find("gpuwarden watch") == 0 &&
               rows[23].find("Up/Dn Enter:detail") == 0 && rows[2].find("> 0  H100") == 0 &&
               rows[1].find("PCIE NOW/MAX") != std::string::npos;
      },
      5s))
      << tmux_->screen("small");
  const std::string s = tmux_->screen("small");
  for (int gpu = 0; gpu < 8; ++gpu)
    EXPECT_NE(s.find(std::to_string(gpu) + "  H100"), std::string::npos) << gpu << "\n" << s;
  EXPECT_NE(s.find("FINDINGS"), std::string::npos) << s;
}

TEST_F(WatchInTmux, NoColorGivesNoEscapesAndColourGivesSome) {
  tmux_->open("plain", 120, 30, watch_cmd("NO_COLOR=1 TERM=tmux-256color"));
  tmux_->open("colour", 120, 30, watch_cmd("TERM=tmux-256color"));
  ASSERT_TRUE(tmux_->shows("plain", "SW thermal slowdown"));
  ASSERT_TRUE(tmux_->shows("colour", "SW thermal slowdown"));
  EXPECT_EQ(tmux_->screen("plain", true).find("\x1b["), std::string::npos)
      << tmux_->screen("plain", true);
  EXPECT_NE(tmux_->screen("colour", true).find("\x1b["), std::string::npos);
}

TEST_F(WatchInTmux, NoTtyPrintsPlainTextFrames) {
  const std::string out =
      run("TERM=xterm " + binary() + " watch --url http://127.0.0.1:" + std::to_string(port_) +
          " --frames 2 --refresh-ms 100 </dev/null");
  EXPECT_EQ(out.find("\x1b"), std::string::npos) << out;
  EXPECT_NE(out.find("91C/89/92"), std::string::npos) << out;
  size_t frames = 0;
  for (size_t at = 0; (at = out.find("gpuwarden watch", at)) != std::string::npos; ++at) ++frames;
  EXPECT_EQ(frames, 2u) << out;
}

// The fake NVML this process loaded (the in-process daemon's): gives GPU 0 the processes the
// test names, pids known only at run time.
bool set_gpu0_processes(const std::string& processes_json) {
  void* lib = ::dlopen(fake_lib().c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (lib == nullptr) return false;
  using SetDevice = int (*)(unsigned, const char*);
  auto set = reinterpret_cast<SetDevice>(::dlsym(lib, "gwfake_set_device"));
  const std::string fields = "{\"processes\": " + processes_json + "}";
  const bool ok = set != nullptr && set(0, fields.c_str()) == 0;
  ::dlclose(lib);
  return ok;
}

// A real queue job on a daemon with --socket (in this process, so the test can hand the fake
// NVML the job's pid): /api/gpus maps the pid to the job and watch's JOB column shows its id.
TEST_F(WatchInTmux, AQueueJobsProcessShowsItsJobId) {
  TempDir dir;
  serve::DaemonOptions o = options_for("consumer-rtx4090", fast_config(dir.path()));
  o.queue_socket = (dir.path() / "q.sock").string();
  o.queue_self_exe = binary();
  RunningDaemon d(std::move(o));
  ASSERT_TRUE(d.ok()) << d.error;
  ASSERT_TRUE(set_gpu0_processes("[]"));  // the scenario's own processes would keep GPU 0 busy
  const std::string sock = " --socket " + (dir.path() / "q.sock").string();
  const fs::path pidfile = dir.path() / "job.pid";
  const std::string out =
      run("cd " + dir.path().string() + " && " + binary() + " submit" + sock +
          " --json --name tagged -- sh -c 'echo $$ > " + pidfile.string() + "; exec sleep 120'");
  const auto reply = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(reply.is_object() && reply.contains("ids")) << out;
  const int64_t id = reply["ids"][0].get<int64_t>();
  std::string pid;
  ASSERT_TRUE(wait_until(
      [&] { return std::getline(std::ifstream(pidfile) >> std::ws, pid) && !pid.empty(); }, 60s));
  ASSERT_TRUE(
      set_gpu0_processes("[{\"pid\": " + pid + ", \"name\": \"sleep\", \"used_mem_mib\": 1024}]"));
  ASSERT_TRUE(wait_until(
      [&] {
        const auto j = nlohmann::json::parse(get(d.port(), "/api/gpus").body, nullptr, false);
        return j.is_object() && j["jobs_by_pid"].value(pid, int64_t{0}) == id;
      },
      15s))
      << get(d.port(), "/api/gpus").body;
  tmux_->open("job", 120, 30,
              "env NO_COLOR=1 TERM=tmux-256color " + binary() + " watch --url http://127.0.0.1:" +
                  std::to_string(d.port()) + " --refresh-ms 250");
  ASSERT_TRUE(tmux_->shows("job", "GeForce RTX")) << tmux_->screen("job");
  tmux_->keys("job", "Enter");
  ASSERT_TRUE(tmux_->shows("job", "PROCESSES (1)")) << tmux_->screen("job");
  std::istringstream lines(tmux_->screen("job"));
  std::string line;
  while (std::getline(lines, line) && line.find(" " + pid + " ") == std::string::npos) {
  }
  std::istringstream cols(line);
  std::string c_pid, c_user, c_mem, c_job;
  cols >> c_pid >> c_user >> c_mem >> c_job;
  EXPECT_EQ(c_pid, pid) << tmux_->screen("job");
  EXPECT_EQ(c_job, std::to_string(id)) << tmux_->screen("job");
  run(binary() + " cancel" + sock + " " + std::to_string(id));
  EXPECT_TRUE(wait_until(
      [&] { return get(d.port(), "/api/jobs").body.find("\"running\"") == std::string::npos; },
      30s));
}

}  // namespace
}  // namespace gw::servetest
