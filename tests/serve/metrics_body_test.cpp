// The /metrics body cache (serve/api.cpp): concurrent scrapers of one generation share one
// render made outside the state lock; a render in flight is waited for, not repeated.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "serve/daemon_state.h"

namespace gw::serve {
namespace {

void add_gpus(Daemon::State& s, unsigned n) {
  for (unsigned i = 0; i < n; ++i) {
    GpuState g;
    g.info.index = i;
    g.info.uuid = "GPU-" + std::to_string(i);
    g.sample.temp_c = 40 + i;
    s.snapshot.gpus.push_back(g);
  }
  s.fresh.resize(n);
  s.counters.resize(n);
  s.generation = 1;
}

TEST(MetricsBody, ConcurrentScrapersOfOneGenerationShareOneRender) {
  Daemon::State s;
  add_gpus(s, 8);
  std::vector<std::shared_ptr<const std::string>> bodies(16);
  std::vector<std::thread> scrapers;
  for (size_t i = 0; i < bodies.size(); ++i)
    scrapers.emplace_back([&, i] { bodies[i] = metrics_body(s); });
  for (auto& t : scrapers) t.join();
  EXPECT_EQ(s.metrics_renders, 1u);
  for (const auto& b : bodies) {
    ASSERT_TRUE(b);
    EXPECT_EQ(b.get(), bodies[0].get());
  }
  EXPECT_NE(bodies[0]->find("DCGM_FI_DEV_GPU_TEMP{gpu=\"7\""), std::string::npos);
  EXPECT_FALSE(s.metrics_rendering);
}

TEST(MetricsBody, ANewGenerationIsRenderedOnceAndARenderInFlightIsWaitedFor) {
  Daemon::State s;
  add_gpus(s, 2);
  const auto first = metrics_body(s);
  EXPECT_EQ(metrics_body(s).get(), first.get());  // cached
  EXPECT_EQ(s.metrics_renders, 1u);
  {
    std::lock_guard lk(s.m);  // a round published while another caller renders
    s.snapshot.gpus[0].sample.temp_c = 77;
    ++s.generation;
    s.metrics_rendering = true;
  }
  std::thread finisher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::lock_guard lk(s.m);
    s.metrics_rendering = false;  // that render is given up: the waiter renders its own
    s.metrics_cv.notify_all();
  });
  const auto next = metrics_body(s);
  finisher.join();
  EXPECT_EQ(s.metrics_renders, 2u);
  EXPECT_NE(next.get(), first.get());
  EXPECT_NE(next->find(" 77\n"), std::string::npos);
  EXPECT_FALSE(s.metrics_rendering);
}

}  // namespace
}  // namespace gw::serve
