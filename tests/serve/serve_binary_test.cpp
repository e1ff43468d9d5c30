// `gpuwarden serve` as a process: SIGTERM stops it cleanly, SIGHUP with a bad config keeps it
// running, kill -9 loses at most the last sample interval, a read-only database is a reported
// fault while monitoring goes on, a bad config does not start it, and `gpuwarden history`
// reads what it wrote.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "serve_helpers.h"
#include "store/store.h"

namespace gw::servetest {
namespace {

using namespace std::chrono_literals;

std::string binary() {
  return std::string(GW_BINARY_DIR) + "/gpuwarden";
}

std::string read(const fs::path& p) {
  std::stringstream s;
  s << std::ifstream(p).rdbuf();
  return s.str();
}

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Served {
  TempDir tmp;
  int port = free_port();
  fs::path config;
  std::unique_ptr<Process> proc;

  explicit Served(const std::string& interval = "100ms") {
    std::string c = fast_config(tmp.path());
    c.replace(c.find("127.0.0.1:0"), 11, "127.0.0.1:" + std::to_string(port));
    c.replace(c.find("interval = \"100ms\""), 18, "interval = \"" + interval + "\"");
    config = tmp.write("gw.toml", c);
    start();
  }
  void start() {
    proc = std::make_unique<Process>(
        std::vector<std::string>{binary(), "serve", "--scenario", scenario("serve-xid"),
                                 "--nvml-lib", fake_lib(), "--config", config.string()},
        tmp.path() / "serve.log");
  }
  bool up() {
    return wait_until([&] { return get(port, "/readyz").status == 200; }, 30s);
  }
};

TEST(ServeBinary, SigtermStopsCleanly) {
  Served s;
  ASSERT_TRUE(s.up()) << read(s.tmp.path() / "serve.log");
  const auto t0 = std::chrono::steady_clock::now();
  const int st = s.proc->stop(SIGTERM);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  ASSERT_TRUE(WIFEXITED(st)) << read(s.tmp.path() / "serve.log");
  EXPECT_EQ(WEXITSTATUS(st), 0);
  EXPECT_NE(read(s.tmp.path() / "serve.log").find("stopped"), std::string::npos);
}

TEST(ServeBinary, SighupWithABadConfigKeepsServing) {
  Served s;
  ASSERT_TRUE(s.up());
  std::ofstream(s.config, std::ios::app) << "[sampling]\ninterval = \"fast\"\n";
  ::kill(s.proc->pid(), SIGHUP);
  ASSERT_TRUE(wait_until(
      [&] { return read(s.tmp.path() / "serve.log").find("reload refused") != std::string::npos; },
      30s));
  EXPECT_NE(read(s.tmp.path() / "serve.log").find("gw.toml"), std::string::npos);
  EXPECT_EQ(get(s.port, "/healthz").status, 200);
  auto m = parse_metrics(get(s.port, "/metrics").body);
  EXPECT_EQ(series(m, "gpuwarden_config_reloads_total", {"result=\"refused\""}), 1);
}

TEST(ServeBinary, KillNineLosesAtMostTheLastInterval) {
  Served s("200ms");
  ASSERT_TRUE(s.up());
  std::this_thread::sleep_for(1500ms);
  const int64_t killed_at = wall_ms();
  s.proc->stop(SIGKILL);
  const fs::path db = s.tmp.path() / "history.db";
  {
    store::StoreOptions ro;
    ro.read_only = true;
    auto st = store::Store::open(db.string(), ro);
    ASSERT_TRUE(st) << st.error().to_string();
    auto stats = (*st)->stats();
    ASSERT_TRUE(stats->newest_raw_ms);
    // One interval, plus the round that was being written when the signal came.
    EXPECT_GE(*stats->newest_raw_ms, killed_at - 2 * 200) << killed_at - *stats->newest_raw_ms;
    EXPECT_GE(stats->raw_rows, 4 * 5);
  }
  // It starts again on the same file, and `gpuwarden history` reads it.
  s.start();
  ASSERT_TRUE(s.up()) << read(s.tmp.path() / "serve.log");
  s.proc->stop(SIGTERM);
  const auto out = s.tmp.path() / "history.json";
  const std::string cmd = binary() + " history --db " + db.string() +
                          " --metric temp_c --gpu 2 --from -5m --json > " + out.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto j = nlohmann::json::parse(read(out));
  ASSERT_GT(j["points"].size(), 5u);
  for (const auto& p : j["points"]) EXPECT_EQ(p["avg"], 67);
  const std::string bad = binary() + " history --db " + db.string() + " --metric tmp_c 2> " +
                          (s.tmp.path() / "err.txt").string();
  EXPECT_EQ(WEXITSTATUS(std::system(bad.c_str())), 2);
  EXPECT_NE(read(s.tmp.path() / "err.txt").find("unknown metric 'tmp_c'"), std::string::npos);
}

TEST(ServeBinary, ReadOnlyDatabaseKeepsMonitoringAndReportsTheFault) {
  Served s;
  ASSERT_TRUE(s.up()) << read(s.tmp.path() / "serve.log");
  ASSERT_EQ(WEXITSTATUS(s.proc->stop(SIGTERM)), 0);
  const fs::path db = s.tmp.path() / "history.db";
  ASSERT_TRUE(fs::exists(db));
  // The file and its folder read-only (no -wal or -shm can be made either). Root writes
  // through modes, so as root the daemon runs as nobody, who may read but not write them.
  fs::permissions(db, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::permissions(s.tmp.path(), fs::perms::owner_read | fs::perms::owner_exec |
                                    fs::perms::group_read | fs::perms::group_exec |
                                    fs::perms::others_read | fs::perms::others_exec);
  const int uid = ::geteuid() == 0 ? 65534 : -1;
  const fs::path log = fs::temp_directory_path() / ("gw-ro-" + std::to_string(::getpid()));
  Process p({binary(), "serve", "--scenario", scenario("serve-xid"), "--nvml-lib", fake_lib(),
             "--config", s.config.string()},
            log, uid);
  ASSERT_TRUE(wait_until(
      [&] {
        return get(s.port, "/api/findings").body.find("daemon.storage_fault") != std::string::npos;
      },
      30s))
      << read(log);
  EXPECT_EQ(get(s.port, "/healthz").status, 200);
  const auto h = get(s.port, "/readyz");
  EXPECT_EQ(h.status, 503);
  EXPECT_NE(h.body.find("storage"), std::string::npos) << h.body;
  auto m = parse_metrics(get(s.port, "/metrics").body);
  EXPECT_EQ(series(m, "gpuwarden_storage_ok", {}), 0);
  EXPECT_EQ(series(m, "DCGM_FI_DEV_GPU_TEMP", {"gpu=\"2\""}), 67) << "monitoring goes on";
  const double r0 = *series(m, "gpuwarden_sampling_rounds_total", {});
  std::this_thread::sleep_for(400ms);
  m = parse_metrics(get(s.port, "/metrics").body);
  EXPECT_GT(*series(m, "gpuwarden_sampling_rounds_total", {}), r0);
  EXPECT_EQ(WEXITSTATUS(p.stop(SIGTERM)), 0) << read(log);
  fs::permissions(s.tmp.path(), fs::perms::owner_all, fs::perm_options::add);
  fs::remove(log);
}

TEST(ServeBinary, ABadConfigDoesNotStart) {
  TempDir tmp;
  const auto cfg = tmp.write("gw.toml", "[sampling]\ngpu_deadline = \"10 seconds\"\n");
  Process p({binary(), "serve", "--scenario", scenario("serve-xid"), "--nvml-lib", fake_lib(),
             "--config", cfg.string()},
            tmp.path() / "log");
  int st = 0;
  ASSERT_TRUE(wait_until([&] { return (st = p.stop(0)), WIFEXITED(st); }, 30s));
  EXPECT_EQ(WEXITSTATUS(st), 2);
  const std::string log = read(tmp.path() / "log");
  EXPECT_NE(log.find("gw.toml:2:16: sampling.gpu_deadline: bad duration \"10 seconds\""),
            std::string::npos)
      << log;
}

// Waits (up to 30 s: a hang guard, not a timing) for `p` to exit on its own; its exit code, or -1
// if it is still running.
int exit_code_of(Process& p) {
  int st = 0;
  if (!wait_until([&] { return ::waitpid(p.pid(), &st, WNOHANG) == p.pid(); }, 30s)) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(ServeBinary, ASecondDaemonOnThePortExitsAtOnceWithTheReason) {
  Served s;
  ASSERT_TRUE(s.up()) << read(s.tmp.path() / "serve.log");
  TempDir other;  // its own database: only the port is shared
  Process second(
      {binary(), "serve", "--scenario", scenario("serve-xid"), "--nvml-lib", fake_lib(), "--listen",
       "127.0.0.1:" + std::to_string(s.port), "--db", (other.path() / "h.db").string()},
      other.path() / "log");
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(exit_code_of(second), 1) << read(other.path() / "log");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_NE(read(other.path() / "log").find("cannot listen on 127.0.0.1:" + std::to_string(s.port)),
            std::string::npos)
      << read(other.path() / "log");
  for (int i = 0; i < 10; ++i)  // no SO_REUSEPORT: every scrape still reaches the first daemon
    EXPECT_EQ(get(s.port, "/healthz").status, 200);
}

TEST(ServeBinary, ASecondDaemonOnTheDatabaseIsRefusedHistoryReadsAlongside) {
  Served s;
  ASSERT_TRUE(s.up()) << read(s.tmp.path() / "serve.log");
  const fs::path db = s.tmp.path() / "history.db";
  Process second({binary(), "serve", "--scenario", scenario("serve-xid"), "--nvml-lib", fake_lib(),
                  "--listen", "127.0.0.1:0", "--db", db.string()},
                 s.tmp.path() / "second.log");
  EXPECT_EQ(exit_code_of(second), 1) << read(s.tmp.path() / "second.log");
  EXPECT_NE(read(s.tmp.path() / "second.log").find("another gpuwarden serve holds this database"),
            std::string::npos)
      << read(s.tmp.path() / "second.log");
  const auto out = s.tmp.path() / "h.json";
  const std::string cmd = binary() + " history --db " + db.string() +
                          " --metric temp_c --gpu 2 --from -5m --json > " + out.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_GT(nlohmann::json::parse(read(out))["points"].size(), 0u);
  EXPECT_EQ(get(s.port, "/healthz").status, 200) << "the first daemon is untouched";
}

// The permission bits of a file or folder.
unsigned mode(const fs::path& f) {
  struct stat st {};
  ::stat(f.c_str(), &st);
  return st.st_mode & 07777;
}

TEST(ServeBinary, TheDatabaseIsPrivate) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "state" / "gw";
  Process p({binary(), "serve", "--scenario", scenario("serve-xid"), "--nvml-lib", fake_lib(),
             "--listen", "127.0.0.1:0", "--db", (dir / "history.db").string()},
            tmp.path() / "log");
  ASSERT_TRUE(wait_until([&] { return fs::exists(dir / "history.db-wal"); }, 30s))
      << read(tmp.path() / "log");
  EXPECT_EQ(mode(dir), 0700u);
  EXPECT_EQ(mode(dir.parent_path()), 0700u);
  for (const char* f : {"history.db", "history.db-wal", "history.db-shm"})
    EXPECT_EQ(mode(dir / f), 0600u) << f;
}

TEST(ServeBinary, ConfiguredModesAreAppliedWhateverTheUmask) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "shared";
  tmp.write("gw.toml", "[storage]\npath = \"" + (dir / "history.db").string() +
                           "\"\nfile_mode = \"0660\"\ndir_mode = \"0750\"\n");
  const mode_t old = ::umask(077);  // inherited by the daemon: stricter than the config
  Process p({binary(), "serve", "--scenario", scenario("serve-xid"), "--nvml-lib", fake_lib(),
             "--listen", "127.0.0.1:0", "--config", (tmp.path() / "gw.toml").string()},
            tmp.path() / "log");
  ::umask(old);
  ASSERT_TRUE(wait_until([&] { return fs::exists(dir / "history.db-wal"); }, 30s))
      << read(tmp.path() / "log");
  EXPECT_EQ(mode(dir), 0750u);
  for (const char* f : {"history.db", "history.db-wal", "history.db-shm"})
    EXPECT_EQ(mode(dir / f), 0660u) << f;
}

// The queue configured in the file (no --socket): its socket, policy and GPU lists reach the
// running service. Root in CI, so the job runs as root; tests/queue covers other users.
TEST(ServeBinary, QueueFromTheConfigRunsJobsOnlyOnItsGpus) {
  TempDir tmp;
  const fs::path sock = tmp.path() / "q.sock";
  tmp.write("gw.toml", "[storage]\npath = \"" + (tmp.path() / "h.db").string() +
                           "\"\n[queue]\nsocket = \"" + sock.string() +
                           "\"\npolicy = \"priority\"\nexclude_gpus = [0, 1, 3]\n");
  Process p({binary(), "serve", "--scenario", scenario("stress-link-downtrain"), "--nvml-lib",
             fake_lib(), "--listen", "127.0.0.1:0", "--config", (tmp.path() / "gw.toml").string()},
            tmp.path() / "log");
  ASSERT_TRUE(wait_until([&] { return fs::exists(sock); }, 30s)) << read(tmp.path() / "log");
  EXPECT_NE(read(tmp.path() / "log").find("(policy priority)"), std::string::npos)
      << read(tmp.path() / "log");
  const std::string submit = "cd " + tmp.path().string() + " && " + binary() + " submit --socket " +
                             sock.string() +
                             " --json -- /usr/bin/printenv CUDA_VISIBLE_DEVICES > submit.json";
  ASSERT_EQ(std::system(submit.c_str()), 0) << read(tmp.path() / "submit.json");
  const auto reply = nlohmann::json::parse(read(tmp.path() / "submit.json"));
  const int64_t id = reply.at("ids").at(0).get<int64_t>();
  const fs::path out = tmp.path() / ("gpuwarden-" + std::to_string(id) + ".out");
  ASSERT_TRUE(wait_until([&] { return read(out).find("GPU-") != std::string::npos; }, 30s))
      << read(tmp.path() / "log");
  // GPU 2 is the only one the queue may use.
  EXPECT_EQ(read(out), "GPU-7a1c0000-0000-4000-8000-000000000002\n");
}

TEST(ServeBinary, ADatabasePathThatIsNoFileIsRefused) {
  TempDir tmp;
  const fs::path fifo = tmp.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const fs::path& db : {tmp.path(), fifo, fs::path("/dev/zero")}) {
    Process p({binary(), "serve", "--scenario", scenario("serve-xid"), "--nvml-lib", fake_lib(),
               "--listen", "127.0.0.1:0", "--db", db.string()},
              tmp.path() / "log");
    EXPECT_EQ(exit_code_of(p), 1) << db << read(tmp.path() / "log");
    EXPECT_NE(read(tmp.path() / "log").find("not a database file"), std::string::npos)
        << read(tmp.path() / "log");
    // `history` on the same path answers at once (a FIFO used to hang it).
    const std::string cmd = "timeout 60 " + binary() + " history --db " + db.string() +
                            " --metric temp_c > /dev/null 2> " + (tmp.path() / "err").string();
    const int rc = WEXITSTATUS(std::system(cmd.c_str()));
    EXPECT_NE(rc, 124) << "history hung on " << db;
    EXPECT_NE(rc, 0) << db;
    EXPECT_NE(read(tmp.path() / "err").find("not a database file"), std::string::npos)
        << read(tmp.path() / "err");
  }
}

}  // namespace
}  // namespace gw::servetest
