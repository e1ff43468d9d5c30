// An active test drains the GPUs it loads through the daemon's queue socket and resumes only
// the drains it made: an admin's drain, and a drain the daemon replaced meanwhile, stay.
#include "queue/test_drain.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <random>

#include "queue/server.h"
#include "queue/service.h"

namespace gw::queue {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class TestDrainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() /
           ("gw-td-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(dir_);
    QueueOptions o;
    o.state_dir = (dir_ / "state").string();
    o.history_path = (dir_ / "history.db").string();
    o.self_exe = std::string(GW_BINARY_DIR) + "/gpuwarden";
    o.job_map_dir = (dir_ / "jobmap").string();
    fs::create_directories(o.job_map_dir);
    // The test's own group is the admin group: the caller may drain, root or not.
    if (const group* gr = getgrgid(getgid())) o.admin_group = gr->gr_name;
    auto s = QueueService::create(o, clock_);
    ASSERT_TRUE(s) << s.error().to_string();
    svc_ = std::move(*s);
    Snapshot snap;
    for (unsigned i = 0; i < 4; ++i) {
      GpuState g;
      g.info.index = i;
      g.info.uuid = "GPU-td-" + std::to_string(i);
      g.sample.mem_total_bytes = 80ULL << 30;
      g.sample.processes = std::vector<ProcessInfo>{};
      snap.gpus.push_back(g);
    }
    svc_->tick(snap, {});
    sock_ = (dir_ / "q.sock").string();
    auto srv = QueueServer::start(sock_, *svc_);
    ASSERT_TRUE(srv) << srv.error().to_string();
    server_ = std::move(*srv);
  }
  void TearDown() override {
    server_.reset();
    svc_.reset();
    fs::remove_all(dir_);
  }
  // GPU index -> {state, reason}
  std::map<unsigned, std::pair<std::string, std::string>> gpus() {
    std::map<unsigned, std::pair<std::string, std::string>> out;
    auto r = request(sock_, {{"cmd", "gpu.list"}});
    EXPECT_TRUE(r) << r.error().to_string();
    if (r)
      for (const json& g : (*r)["gpus"]) out[g["index"]] = {g["state"], g["reason"]};
    return out;
  }
  fs::path dir_;
  std::string sock_;
  SystemClock clock_;
  std::unique_ptr<QueueService> svc_;
  std::unique_ptr<QueueServer> server_;
};

TEST_F(TestDrainTest, DrainsForTheTestAndResumesOnlyItsOwnDrains) {
  ASSERT_TRUE((*request(sock_, {{"cmd", "gpu.drain"}, {"gpu", 3}, {"reason", "bad fan"}}))["ok"]);
  {
    auto d = TestDrain::acquire(sock_, {}, "gpuwarden stress test (pid 1)");
    ASSERT_TRUE(d) << d.error().to_string();
    ASSERT_TRUE(*d);
    EXPECT_EQ((*d)->drained(), (std::vector<unsigned>{0, 1, 2}));
    EXPECT_NE((*d)->summary().find("GPU 3 already drained"), std::string::npos) << (*d)->summary();
    auto during = gpus();
    for (unsigned g : {0u, 1u, 2u}) {
      EXPECT_EQ(during[g].first, "drained") << g;
      EXPECT_EQ(during[g].second, "gpuwarden stress test (pid 1)") << g;
    }
    EXPECT_EQ(during[3].second, "bad fan");
    // Meanwhile an admin re-drains GPU 1 for another reason: that drain is not the test's.
    ASSERT_TRUE((*request(sock_, {{"cmd", "gpu.drain"}, {"gpu", 1}, {"reason", "reseat"}}))["ok"]);
  }
  auto after = gpus();
  EXPECT_EQ(after[0].first, "idle");
  EXPECT_EQ(after[2].first, "idle");
  EXPECT_EQ(after[1], (std::pair<std::string, std::string>{"drained", "reseat"}));
  EXPECT_EQ(after[3], (std::pair<std::string, std::string>{"drained", "bad fan"}));
}

TEST_F(TestDrainTest, OnlyTheTestedGpusAreDrainedAndNoQueueMeansNothingToDo) {
  {
    auto d = TestDrain::acquire(sock_, {2}, "test");
    ASSERT_TRUE(d && *d);
    EXPECT_EQ((*d)->drained(), std::vector<unsigned>{2});
    EXPECT_EQ(gpus()[0].first, "idle");
    EXPECT_EQ(gpus()[2].first, "drained");
  }
  EXPECT_EQ(gpus()[2].first, "idle");
  auto none = TestDrain::acquire((dir_ / "no-such.sock").string(), {}, "test");
  ASSERT_TRUE(none) << none.error().to_string();
  EXPECT_FALSE(*none);
}

}  // namespace
}  // namespace gw::queue
