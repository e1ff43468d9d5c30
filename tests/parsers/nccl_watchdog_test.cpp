// NCCL watchdog lines -> WatchdogReport in each PyTorch wording, under launcher prefixes, CRLF,
// re-indented and cut; and judge_collectives across ranks (same collective, desync, groups
// apart, missing ranks). Lines are from the issue-19 captures 339-349 (train) and reworded.
#include "sources/app/nccl_watchdog.h"

#include <gtest/gtest.h>

#include <string>

namespace gw {
namespace {

const std::string kNew =
    "[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, "
    "NumelOut=9801523, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.";
const std::string kOld =
    "[E ProcessGroupNCCL.cpp:737] [Rank 3] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802211 "
    "milliseconds before timing out.";
const std::string kException =
    "[rank0]:[E626 06:24:44.160366013 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) "
    "Rank 0] Exception (either an error or timeout) detected by watchdog at work: 808, last "
    "enqueued NCCL work: 811, last completed NCCL work: 807.";

std::string timeout_line(unsigned rank, unsigned seq, const std::string& op) {
  return "[rank" + std::to_string(rank) + "]:[E0 ProcessGroupNCCL.cpp:607] [Rank " +
         std::to_string(rank) +
         "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=" + std::to_string(seq) +
         ", OpType=" + op +
         ", NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013 milliseconds before "
         "timing out.";
}

std::vector<WatchdogReport> parse_all(const std::vector<std::string>& lines) {
  std::vector<WatchdogReport> out;
  for (const auto& l : lines)
    if (auto r = parse_nccl_watchdog_line(l)) out.push_back(*r);
  return out;
}

TEST(NcclWatchdogLine, NewWordingWithTorchrunPrefix) {
  const auto r = parse_nccl_watchdog_line(kNew);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->wording, WatchdogWording::kWatchdogTimeout);
  EXPECT_EQ(r->rank, 1u);
  EXPECT_EQ(r->launcher_rank, 1u);
  EXPECT_EQ(r->seq, 808u);
  EXPECT_EQ(r->op_type, "ALLREDUCE");
  EXPECT_EQ(r->numel_in, 9801523u);
  EXPECT_EQ(r->numel_out, 9801523u);
  EXPECT_EQ(r->timeout_ms, 600000u);
  EXPECT_EQ(r->ran_for_ms, 600020u);
  EXPECT_TRUE(r->group.empty());
}

TEST(NcclWatchdogLine, OldWordingWithoutPrefixOrNumel) {
  const auto r = parse_nccl_watchdog_line(kOld);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rank, 3u);
  EXPECT_FALSE(r->launcher_rank);
  EXPECT_EQ(r->seq, 469508u);
  EXPECT_FALSE(r->numel_in);
  EXPECT_EQ(r->ran_for_ms, 1802211u);
}

TEST(NcclWatchdogLine, FlightRecorderLinesGiveGroupAndQueue) {
  const auto r = parse_nccl_watchdog_line(kException);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->wording, WatchdogWording::kExceptionAtWork);
  EXPECT_EQ(r->rank, 0u);
  EXPECT_EQ(r->group, "ID 0 PG GUID 0(default_pg)");
  EXPECT_EQ(r->seq, 808u);
  EXPECT_EQ(r->last_enqueued, 811u);
  EXPECT_EQ(r->last_completed, 807u);
  const auto t = parse_nccl_watchdog_line(
      "[rank4]:[E1016 03:31:38.929234295 ProcessGroupNCCL.cpp:1709] [PG 3 Rank 4] Timeout at "
      "NCCL work: 9141, last enqueued NCCL work: 9141, last completed NCCL work: 9140.");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->wording, WatchdogWording::kTimeoutAtWork);
  EXPECT_EQ(t->group, "3");
  EXPECT_EQ(t->seq, 9141u);
  EXPECT_EQ(t->last_completed, 9140u);
}

TEST(NcclWatchdogLine, OtherWordings) {
  const auto b = parse_nccl_watchdog_line(
      "[rank7]:[E1002 18:16:40.663182067 ProcessGroupNCCL.cpp:756] [Rank 7] Work "
      "WorkNCCL(SeqNum=2521, OpType=ALLREDUCE, NumelIn=160672064, NumelOut=160672064, "
      "Timeout(ms)=600000) timed out in blocking wait.");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->wording, WatchdogWording::kBlockingWait);
  EXPECT_EQ(b->seq, 2521u);
  const auto s = parse_nccl_watchdog_line(
      "[rank7]:[E626 05:14:36.393067540 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID "
      "0(default_pg) Rank 7] ProcessGroupNCCL's watchdog got stuck for 480 seconds without "
      "making progress in monitoring enqueued collectives.");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->wording, WatchdogWording::kWatchdogStuck);
  EXPECT_EQ(s->rank, 7u);
  EXPECT_FALSE(s->seq);
  const auto a = parse_nccl_watchdog_line(
      "RuntimeError: NCCL communicator was aborted on rank 2. Original reason for failure was: "
      "watchdog callback timed out");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->wording, WatchdogWording::kCommAborted);
  EXPECT_EQ(a->rank, 2u);
  // The thread-exit line quotes the timeout: the rank next to it counts.
  const auto w = parse_nccl_watchdog_line(
      "  what():  [PG 3 Rank 5] Process group watchdog thread terminated with exception: [Rank 5] "
      "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9141, "
      "OpType=_ALLGATHER_BASE, NumelIn=19008, NumelOut=152064, Timeout(ms)=600000) ran for "
      "600020 milliseconds before timing out.");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->rank, 5u);
  EXPECT_EQ(w->op_type, "_ALLGATHER_BASE");
}

TEST(NcclWatchdogLine, LauncherPrefixes) {
  const std::string body =
      "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=41, "
      "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800088 "
      "milliseconds before timing out.";
  EXPECT_EQ(parse_nccl_watchdog_line("[default3]:" + body)->launcher_rank, 3u);
  EXPECT_EQ(parse_nccl_watchdog_line("[1,3]<stderr>:" + body)->launcher_rank, 3u);
  EXPECT_EQ(parse_nccl_watchdog_line("[80746] [rank11]:" + body)->launcher_rank, 11u);
  EXPECT_EQ(parse_nccl_watchdog_line("node-4 [stderr] [rank11]:" + body)->rank, 3u);
  EXPECT_FALSE(parse_nccl_watchdog_line(body)->launcher_rank);
}

TEST(NcclWatchdogLine, CrlfAndReindented) {
  const auto r = parse_nccl_watchdog_line("    \t" + kNew + "\r");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->seq, 808u);
  EXPECT_EQ(r->ran_for_ms, 600020u);
  const auto e = parse_nccl_watchdog_line(kException + "\r\n");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->last_completed, 807u);
}

TEST(NcclWatchdogLine, CutLinesGiveNoWrongNumbers) {
  // Cut before the work: nothing to use.
  EXPECT_FALSE(parse_nccl_watchdog_line(
      "[rank14]:[E909 09:55:29.307629539 ProcessGroupNCCL.cpp:607] [Rank 14] Watchdog caught "
      "collective operation timeout: "));
  // Cut inside the SeqNum: no SeqNum, no report.
  EXPECT_FALSE(parse_nccl_watchdog_line(kNew.substr(0, kNew.find("SeqNum=80") + 9)));
  EXPECT_FALSE(parse_nccl_watchdog_line(kException.substr(0, kException.find("work: 80") + 8)));
  // Wrapped inside OpType (capture 346): the SeqNum is whole, the type is not.
  const auto w = parse_nccl_watchdog_line(
      "[rank2]:[E424 01:11:21.160832730 ProcessGroupNCCL.cpp:629] [Rank 2] Watchdog caught "
      "collective operation timeout: WorkNCCL(SeqNum=4, OpTy");
  ASSERT_TRUE(w);
  EXPECT_EQ(w->seq, 4u);
  EXPECT_TRUE(w->op_type.empty());
  // Cut inside "ran for": the figure is dropped, the rest kept.
  const auto c = parse_nccl_watchdog_line(kNew.substr(0, kNew.find("ran for 6") + 9));
  ASSERT_TRUE(c);
  EXPECT_FALSE(c->ran_for_ms);
  EXPECT_EQ(c->timeout_ms, 600000u);
  EXPECT_FALSE(parse_nccl_watchdog_line("ProcessGroupNCCL"));
  EXPECT_FALSE(parse_nccl_watchdog_line("NCCL INFO Channel 00/02 :    0   1"));
}

TEST(NcclJudge, SameCollectiveNamesMissingRanks) {
  const auto v = judge_collectives(
      parse_all({timeout_line(0, 41, "ALLREDUCE"), timeout_line(1, 41, "ALLREDUCE"),
                 timeout_line(3, 41, "ALLREDUCE"), timeout_line(5, 41, "ALLREDUCE")}));
  EXPECT_EQ(v.agreement, Agreement::kSameCollective);
  ASSERT_EQ(v.groups.size(), 1u);
  EXPECT_EQ(v.groups[0].stops.size(), 4u);
  EXPECT_EQ(v.groups[0].missing, (std::vector<unsigned>{2, 4}));
  EXPECT_TRUE(v.groups[0].behind.empty());
}

TEST(NcclJudge, DifferentSeqNumsAreADesyncNamingTheRanksBehind) {
  const auto v = judge_collectives(
      parse_all({timeout_line(0, 41, "ALLREDUCE"), timeout_line(1, 41, "ALLREDUCE"),
                 timeout_line(2, 40, "BROADCAST"), timeout_line(3, 41, "ALLREDUCE")}));
  EXPECT_EQ(v.agreement, Agreement::kDesync);
  ASSERT_EQ(v.groups.size(), 1u);
  EXPECT_EQ(v.groups[0].behind, (std::vector<unsigned>{2}));
  EXPECT_TRUE(v.groups[0].missing.empty());
}

TEST(NcclJudge, SameSeqNumDifferentCollectivesIsAMismatch) {
  const auto v = judge_collectives(
      parse_all({timeout_line(0, 7, "ALLREDUCE"), timeout_line(1, 7, "ALLGATHER")}));
  EXPECT_EQ(v.agreement, Agreement::kDesync);
}

TEST(NcclJudge, EarliestStuckWorkPerRankAndQueueFromFlightRecorder) {
  // Capture 339: the watchdog line and the flight-recorder line of each rank meet.
  const auto v = judge_collectives(parse_all(
      {kNew, kException,
       "[rank0]:[E626 06:24:44.159932949 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught "
       "collective operation timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, "
       "NumelOut=9801523, Timeout(ms)=600000) ran for 600030 milliseconds before timing out.",
       timeout_line(0, 809, "ALLREDUCE")}));
  EXPECT_EQ(v.agreement, Agreement::kSameCollective);
  ASSERT_EQ(v.groups.size(), 1u);
  EXPECT_EQ(v.groups[0].group, "ID 0 PG GUID 0(default_pg)");
  ASSERT_EQ(v.groups[0].stops.size(), 2u);
  EXPECT_EQ(v.groups[0].stops[0].seq, 808u);
  EXPECT_EQ(v.groups[0].stops[0].last_enqueued, 811u);
  EXPECT_EQ(v.groups[0].stops[0].op_type, "ALLREDUCE");
}

TEST(NcclJudge, TwoNamedGroupsAreNotCompared) {
  // Capture 347: global ranks 13 and 15 in process groups 119 and 112.
  const auto v = judge_collectives(parse_all({
      " 2025-02-18 12:54 [rank13]:[E218 04:54:22.864467604 ProcessGroupNCCL.cpp:616] [Rank 1] "
      "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=216, OpType=ALLTOALL_BASE, "
      "NumelIn=1379328, NumelOut=1572864, Timeout(ms)=600000) ran for 600045 milliseconds "
      "before timing out.",
      " 2025-02-18 12:54 [rank13]:[E218 04:54:22.864535778 ProcessGroupNCCL.cpp:1795] [PG ID 11 "
      "PG GUID 119 Rank 1] Exception (either an error or timeout) detected by watchdog at work: "
      "216, last enqueued NCCL work: 220, last completed NCCL work: 215.",
      " 2025-02-18 12:54 [rank15]:[E218 04:54:22.883327702 ProcessGroupNCCL.cpp:616] [Rank 1] "
      "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=57, OpType=ALLREDUCE, "
      "NumelIn=32, NumelOut=32, Timeout(ms)=600000) ran for 600045 milliseconds before timing "
      "out.",
      " 2025-02-18 12:54 [rank15]:[E218 04:54:22.883358915 ProcessGroupNCCL.cpp:1795] [PG ID 11 "
      "PG GUID 112 Rank 0] Exception (either an error or timeout) detected by watchdog at work: "
      "57, last enqueued NCCL work: 57, last completed NCCL work: 56.",
  }));
  EXPECT_NE(v.agreement, Agreement::kDesync);
  EXPECT_EQ(v.groups.size(), 2u);
}

TEST(NcclJudge, SeqNumsFarApartAreDifferentGroups) {
  // Capture 349: rank 0 at 96117 and later works, rank 7 at 64088, no group named.
  const auto v = judge_collectives(
      parse_all({timeout_line(0, 96120, "ALLREDUCE"), timeout_line(0, 96117, "ALLREDUCE"),
                 timeout_line(7, 64088, "ALLREDUCE")}));
  EXPECT_EQ(v.agreement, Agreement::kApart);
  ASSERT_EQ(v.groups.size(), 1u);
  EXPECT_EQ(v.groups[0].stops[0].seq, 96117u);
}

TEST(NcclJudge, RanksWithoutPositionAndNoReports) {
  EXPECT_EQ(judge_collectives({}).agreement, Agreement::kNoPosition);
  const auto v = judge_collectives(parse_all(
      {"[rank7]:[E626 05:14:36.393067540 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID "
       "0(default_pg) Rank 7] ProcessGroupNCCL's watchdog got stuck for 480 seconds without "
       "making progress in monitoring enqueued collectives.",
       timeout_line(2, 120049, "_ALLGATHER_BASE")}));
  EXPECT_EQ(v.agreement, Agreement::kSameCollective);
  EXPECT_EQ(v.without_position, (std::vector<unsigned>{7}));
  ASSERT_EQ(v.groups.size(), 1u);
  EXPECT_EQ(v.groups[0].missing, (std::vector<unsigned>{0, 1}));
}

}  // namespace
}  // namespace gw
