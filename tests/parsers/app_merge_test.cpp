// Repeated application messages folded into their first copy as they are read (issue 20): the
// fold itself, the indices the scanners keep across it, and a log long enough to fold many times.
#include "sources/app/app_merge.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sources/captures.h"

namespace gw {
namespace {

AppMessage msg(AppMessageKind k, std::string text, size_t line) {
  AppMessage m;
  m.kind = k;
  m.text = std::move(text);
  m.origin = "app.log:" + std::to_string(line);
  return m;
}

constexpr auto kOom = AppMessageKind::kCudaOutOfMemory;

TEST(AppMessageMerge, FoldsCopiesIntoTheFirstAndCountsThem) {
  std::vector<AppMessage> out = {msg(kOom, "A", 1), msg(kOom, "B", 2), msg(kOom, "A", 3),
                                 msg(AppMessageKind::kOther, "A", 4), msg(kOom, "A", 5)};
  size_t reads = 0;
  AppMessageMerge merge(0, reads);
  const MessageMoves to = merge.fold(out, 0);
  ASSERT_EQ(out.size(), 3u);  // A, B, and the other kind's "A"
  EXPECT_EQ(out[0].text, "A");
  EXPECT_EQ(out[0].origin, "app.log:1");  // the first copy's place
  EXPECT_EQ(out[0].copies, 3u);
  EXPECT_EQ(out[1].text, "B");
  EXPECT_EQ(out[1].copies, 1u);
  EXPECT_EQ(out[2].kind, AppMessageKind::kOther);
  const std::vector<size_t> want = {0, 1, 0, 2, 0};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(to(i), want[i]) << i;
}

TEST(AppMessageMerge, AnyOtherFieldMakesAnotherMessage) {
  std::vector<AppMessage> out = {msg(kOom, "A", 1), msg(kOom, "A", 2)};
  out[1].gpu_index = 1;
  size_t reads = 0;
  AppMessageMerge merge(0, reads);
  merge.fold(out, 0);
  EXPECT_EQ(out.size(), 2u);
}

TEST(AppMessageMerge, TheTailWaitsForTheNextFold) {
  std::vector<AppMessage> out = {msg(kOom, "A", 1), msg(kOom, "A", 2), msg(kOom, "A", 3)};
  size_t reads = 0;
  AppMessageMerge merge(0, reads);
  const MessageMoves first = merge.fold(out, 1);
  ASSERT_EQ(out.size(), 2u);  // 1 and 2 folded; 3 left as it was
  EXPECT_EQ(out[0].copies, 2u);
  EXPECT_EQ(out[1].origin, "app.log:3");
  EXPECT_EQ(first(2), 1u);  // the tail moved down by the one folded away
  merge.fold(out, 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].copies, 3u);
}

TEST(AppMessageMerge, CountedFactsAddTheirCountsAndEarlierInputsStay) {
  std::vector<AppMessage> out = {msg(kOom, "X", 1), msg(kOom, "X", 2)};  // an earlier input's
  for (size_t i = 0; i < 3; ++i) {
    AppMessage m = msg(AppMessageKind::kNcclSetting, "line " + std::to_string(i), 10 + i);
    m.detail = "NCCL_IB_DISABLE=1";
    m.steps = i + 1;
    out.push_back(m);
  }
  size_t reads = 0;
  AppMessageMerge merge(2, reads);
  const MessageMoves to = merge.fold(out, 0);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1].origin, "app.log:2");  // not this input's: not folded
  EXPECT_EQ(out[2].steps, 6u);
  EXPECT_EQ(out[2].text, "line 0");
  EXPECT_EQ(to(1), 1u);
  EXPECT_EQ(to(4), 2u);
}

// The fabric manager's lines are read for their order ("started after its last failure"):
// a copy folds into the first like any other, which takes the copy's read order.
TEST(AppMessageMerge, FabricManagerCopiesFoldAndKeepTheNewestReadOrder) {
  std::vector<AppMessage> out = {msg(AppMessageKind::kFabricManagerFailed, "F", 1),
                                 msg(AppMessageKind::kFabricManagerStarted, "S", 2),
                                 msg(AppMessageKind::kFabricManagerFailed, "F", 3)};
  size_t reads = 10;  // an earlier input's messages came first
  AppMessageMerge merge(0, reads);
  merge.fold(out, 0);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].origin, "app.log:1");
  EXPECT_EQ(out[0].copies, 2u);
  EXPECT_EQ(out[0].read_at, 13u);  // the failure is the newest line
  EXPECT_EQ(out[1].read_at, 12u);
  EXPECT_EQ(reads, 13u);
}

// A log that repeats one error on every step, with distinct messages and an NCCL fact between:
// every fold happens while the scanners hold indices into the messages.
TEST(AppMessageMerge, ALongLogKeepsOneMessagePerDistinctTextWithItsCount) {
  const std::string same_oom =
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; "
      "15.78 GiB total capacity; 14.2 GiB already allocated)\n";
  std::string log = same_oom;  // a copy before the NCCL fact: the first fold moves the fact down
  constexpr size_t kSteps = 5000;
  for (size_t i = 0; i < kSteps; ++i) {
    log += same_oom;
    log += "host:1:1 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\n";
    if (i % 2 == 0)
      log += "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate " +
             std::to_string(i + 1) + ".00 MiB (GPU 1; 15.78 GiB total capacity)\n";
  }
  Observation obs;
  add_capture(log, "app.log", obs);
  size_t same = 0, distinct = 0, distinct_copies = 0, setting_steps = 0, settings = 0;
  for (const AppMessage& m : obs.app_messages) {
    if (m.kind == AppMessageKind::kNcclSetting) {
      ++settings;
      setting_steps += m.steps;
    } else if (m.kind == kOom && m.gpu_index == 0u) {
      ++same;
      EXPECT_EQ(m.copies, kSteps + 1);
      EXPECT_EQ(m.origin, "app.log:1");
    } else if (m.kind == kOom) {
      ++distinct;
      distinct_copies += m.copies;
    }
  }
  EXPECT_EQ(same, 1u);
  // 2,500 different ones: the first of the kind's 512 kept, the rest counted on the last.
  EXPECT_EQ(distinct, AppMessageMerge::kMaxPerKind - 1);
  EXPECT_EQ(distinct_copies, kSteps / 2);
  EXPECT_EQ(settings, 1u);
  EXPECT_EQ(setting_steps, kSteps);
  bool noted = false;
  for (const auto& n : obs.notes)
    noted = noted || n.find(std::to_string(kSteps / 2 - (AppMessageMerge::kMaxPerKind - 1)) +
                            " application message(s) past the first 512") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(AppMessageMerge, PastTheCapOfAKindNewMessagesAreCountedOnItsLastKept) {
  std::vector<AppMessage> out;
  constexpr size_t kMany = AppMessageMerge::kMaxPerKind + 100;
  for (size_t i = 0; i < kMany; ++i) out.push_back(msg(kOom, "oom " + std::to_string(i), i + 1));
  out.push_back(msg(AppMessageKind::kOther, "another kind", kMany + 1));
  size_t reads = 0;
  AppMessageMerge merge(0, reads);
  const MessageMoves to = merge.fold(out, 0);
  ASSERT_EQ(out.size(), AppMessageMerge::kMaxPerKind + 1);
  const size_t last = AppMessageMerge::kMaxPerKind - 1;
  EXPECT_EQ(out[last].text, "oom " + std::to_string(last));
  EXPECT_EQ(out[last].copies, 101u);
  EXPECT_EQ(out.back().kind, AppMessageKind::kOther);  // another kind has a cap of its own
  EXPECT_EQ(to(kMany - 1), last);
  EXPECT_EQ(to(kMany), AppMessageMerge::kMaxPerKind);
  EXPECT_EQ(merge.unlisted(), 100u);
  // A copy of a kept message still folds into it, past the cap too.
  std::vector<AppMessage> more = std::move(out);
  more.push_back(msg(kOom, "oom 3", 9999));
  merge.fold(more, 0);
  EXPECT_EQ(more[3].copies, 2u);
  EXPECT_EQ(merge.unlisted(), 100u);
}

}  // namespace
}  // namespace gw
