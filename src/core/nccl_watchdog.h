// What a PyTorch ProcessGroupNCCL watchdog / flight-recorder / desync-debug line says
// (WatchdogReport, read by sources/app/nccl_watchdog.h and carried on AppMessage), and the
// reports of one capture judged across ranks: did every rank stop at the same collective (the
// cause is outside it: a rank that never reported, the network, a straggler) or at different
// ones (a desync: the ranks furthest behind are the suspects)? Pure functions over data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gw {

enum class WatchdogWording {
  kWatchdogTimeout,  // "Watchdog caught collective operation timeout: WorkNCCL(...) ran for N ms"
  kBlockingWait,     // "Work WorkNCCL(...) timed out in blocking wait."
  kExceptionAtWork,  // "Exception (...) detected by watchdog at work: N, last enqueued ..."
  kTimeoutAtWork,    // "Timeout at NCCL work: N, last enqueued NCCL work: E, last completed ..."
  kWatchdogStuck,    // "ProcessGroupNCCL's watchdog got stuck for N seconds ..."
  kCommAborted,      // "NCCL communicator was aborted on rank N"
  kDesyncReport,     // TORCH_NCCL_DESYNC_DEBUG: "Desync debugging", "joined but didn't finish"
};

std::string_view watchdog_wording_name(WatchdogWording w);

struct WatchdogReport {
  WatchdogWording wording = WatchdogWording::kWatchdogTimeout;
  std::optional<unsigned> rank;           // in its process group: "[Rank N]", "[PG x Rank N]"
  std::optional<unsigned> launcher_rank;  // "[rank3]:", "[default3]:", "[1,3]<stderr>:"
  std::string group;  // the process group as printed ("1", "ID 2 PG GUID 9"), "" when unnamed
  std::optional<uint64_t> seq, numel_in, numel_out, timeout_ms, ran_for_ms;
  std::optional<uint64_t> last_enqueued, last_completed;
  std::string op_type;  // "ALLREDUCE", "_ALLGATHER_BASE"; "" when not given or cut
  bool operator==(const WatchdogReport&) const = default;
};

enum class Agreement {
  kNoPosition,      // no report states a SeqNum
  kSameCollective,  // every reporting rank stopped at the same SeqNum and OpType
  kDesync,          // ranks stopped at different collectives
  kApart,  // SeqNums too far apart to be one group's: reports of groups that cannot be told apart
};

struct RankStop {
  unsigned rank = 0;
  uint64_t seq = 0;     // the earliest work this rank reported stuck
  std::string op_type;  // of that work, when given
  std::optional<uint64_t> last_enqueued, last_completed;
};

struct GroupVerdict {
  std::string group;
  Agreement agreement = Agreement::kNoPosition;
  std::vector<RankStop> stops;         // one per rank, by rank
  std::vector<unsigned> behind;        // kDesync: the ranks at the lowest SeqNum
  std::vector<unsigned> not_enqueued;  // last enqueued work below another rank's stop
  std::vector<unsigned> missing;       // 0..highest reporting rank without any report
};

struct CollectiveVerdict {
  Agreement agreement = Agreement::kNoPosition;  // kDesync when any group is one
  std::vector<GroupVerdict> groups;
  std::vector<unsigned> without_position;  // reported (stuck watchdog, abort) but no SeqNum
};

CollectiveVerdict judge_collectives(const std::vector<WatchdogReport>& reports);

}  // namespace gw
