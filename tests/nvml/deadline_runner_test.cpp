// DeadlineRunner on its own: finished work, an overrunning call, and recovery afterwards.
#include "sources/nvml/deadline_runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

namespace gw::nvml {
namespace {

using std::chrono::milliseconds;

TEST(DeadlineRunner, RunsTasksToTheEnd) {
  DeadlineRunner r(milliseconds(500));
  int calls = 0;
  for (int i = 0; i < 3; ++i) {
    const auto out = r.run([&calls](CallTracker& t) {
      t.begin("nvmlDeviceGetName");
      ++calls;
      t.end();
    });
    EXPECT_TRUE(out.finished);
    EXPECT_TRUE(out.hung_call.empty());
  }
  EXPECT_EQ(calls, 3);
}

TEST(DeadlineRunner, LongTaskOfShortCallsIsNotHung) {
  // The deadline is per call: many calls that each return in time never trip it.
  DeadlineRunner r(milliseconds(100));
  const auto out = r.run([](CallTracker& t) {
    for (int i = 0; i < 5; ++i) {
      t.begin("nvmlDeviceGetPowerUsage");
      std::this_thread::sleep_for(milliseconds(40));
      t.end();
    }
  });
  EXPECT_TRUE(out.finished);
}

TEST(DeadlineRunner, OverrunningCallIsNamedAndTheNextRunUsesAFreshWorker) {
  DeadlineRunner r(milliseconds(100));
  auto release = std::make_shared<std::promise<void>>();
  auto released = release->get_future().share();
  auto after = std::make_shared<std::atomic<bool>>(false);
  const auto out = r.run([released, after](CallTracker& t) {
    t.begin("nvmlDeviceGetTemperature");
    released.wait();  // stuck until the test lets it go
    t.end();
    after->store(true);
  });
  EXPECT_FALSE(out.finished);
  EXPECT_EQ(out.hung_call, "nvmlDeviceGetTemperature");
  // The runner is usable at once, while the old worker is still stuck.
  bool ran = false;
  EXPECT_TRUE(r.run([&ran](CallTracker&) { ran = true; }).finished);
  EXPECT_TRUE(ran);
  EXPECT_FALSE(after->load());
  release->set_value();  // the abandoned worker finishes its task and exits on its own
}

TEST(DeadlineRunner, ZeroDeadlineIsRaisedToOneMillisecond) {
  DeadlineRunner r(milliseconds(0));
  EXPECT_EQ(r.deadline(), milliseconds(1));
  EXPECT_TRUE(r.run([](CallTracker& t) {
                 t.begin("nvmlInit_v2");
                 t.end();
               }).finished);
}

}  // namespace
}  // namespace gw::nvml
