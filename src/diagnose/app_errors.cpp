// Rules over application and tool errors found in captures (gw::AppMessage): CUDA out of
// memory with the remedy its figures point to, NCCL failures, CUDA runtime errors, and the
// nvidia-smi / NVML / Docker messages that say why no GPU can be used.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/nccl_watchdog.h"
#include "diagnose/context.h"
#include "diagnose/kernel_events.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = kMiB * 1024.0;
// Reserved-but-unallocated at a quarter of what the allocator holds (and 512 MiB or more) is
// memory lost to fragmentation; below that it is the caching allocator's normal slack
// (fixture 100: 194.87 MiB of 23.09 GiB).
constexpr double kFragmentedShare = 0.25;
constexpr double kFragmentedMinBytes = 512.0 * kMiB;
// Memory used on the GPU beyond this process, at 1 GiB or 5 % of the card, is another holder;
// less is other contexts and rounding in the message (fixture 100: about 40 MiB).
constexpr double kOtherHolderMinBytes = 1.0 * kGiB;
constexpr double kOtherHolderMinShare = 0.05;
// Evidence keeps a few example lines; the count says how many there were.
constexpr size_t kExampleLines = 3;

// "22.00 MiB", "23.65 GiB": the units the frameworks print.
std::string bytes_text(uint64_t b) {
  const double v = static_cast<double>(b);
  if (v >= kGiB) return fmt::format("{:.2f} GiB", v / kGiB);
  if (v >= kMiB) return fmt::format("{:.2f} MiB", v / kMiB);
  return fmt::format("{} bytes", b);
}

// "3 messages; first: <text> (app.log:12)" plus up to kExampleLines distinct lines.
std::vector<std::string> message_lines(const std::vector<const AppMessage*>& ms) {
  std::vector<std::string> ev;
  std::vector<std::string_view> seen;
  for (const AppMessage* m : ms) {
    if (std::find(seen.begin(), seen.end(), m->text) != seen.end()) continue;
    if (seen.size() == kExampleLines) break;
    seen.push_back(m->text);
    ev.push_back(fmt::format("\"{}\"{}", m->text, m->origin.empty() ? "" : " (" + m->origin + ")"));
  }
  if (const size_t n = copies_of(ms); n > 1)
    ev.push_back(fmt::format("{} such messages in the input", n));
  return ev;
}

std::string gpu_words(const AppMessage& m) {
  return m.gpu_index ? fmt::format(" on GPU {} (as the process numbers it)", *m.gpu_index) : "";
}

// ---- CUDA out of memory ----------------------------------------------------------------

struct OomFigures {
  std::optional<double> tried, total, free, allocated, process;
  std::optional<double> unallocated;  // reserved by the allocator but not in use
  std::optional<double> reserved;     // everything the allocator holds
};

std::optional<double> as_d(const std::optional<uint64_t>& v) {
  return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

// reserved_bytes is everything the allocator holds (PyTorch >= 2.2 states the unallocated
// cache separately: reserved_unallocated_bytes); the cache is reserved minus allocated otherwise.
OomFigures figures(const AppMessage& m) {
  OomFigures f{as_d(m.tried_bytes),     as_d(m.total_bytes),   as_d(m.free_bytes),
               as_d(m.allocated_bytes), as_d(m.process_bytes), {},
               as_d(m.reserved_bytes)};
  if (m.reserved_unallocated_bytes) {
    f.unallocated = static_cast<double>(*m.reserved_unallocated_bytes);
    if (!f.reserved && f.allocated) f.reserved = *f.allocated + *f.unallocated;
  } else if (f.reserved && f.allocated && *f.reserved >= *f.allocated) {
    f.unallocated = *f.reserved - *f.allocated;
  }
  return f;
}

const std::string kShrinkRemedy =
    "Make the step need less memory: a smaller batch (keep the effective batch with gradient "
    "accumulation), shorter sequences or smaller inputs, mixed precision (BF16/FP16), activation "
    "(gradient) checkpointing; for inference, process the input in smaller tiles or chunks.";

// The message with the most figures speaks for the group.
const AppMessage* richest(const std::vector<const AppMessage*>& ms) {
  return *std::max_element(ms.begin(), ms.end(), [](auto* a, auto* b) {
    auto n = [](const AppMessage* x) {
      return int(x->tried_bytes.has_value()) + int(x->total_bytes.has_value()) +
             int(x->free_bytes.has_value()) + int(x->allocated_bytes.has_value()) +
             int(x->reserved_bytes.has_value()) + int(x->process_bytes.has_value());
    };
    return n(a) < n(b);
  });
}

// What the message states: the request against the card, and what this process holds.
std::vector<std::string> oom_figure_lines(const AppMessage& m, const OomFigures& f) {
  std::vector<std::string> ev;
  std::string head = "CUDA out of memory" + gpu_words(m);
  if (f.tried) head += ": tried to allocate " + bytes_text(*m.tried_bytes);
  if (f.free) head += ", " + bytes_text(*m.free_bytes) + " free";
  // TensorFlow's figures are its BFC allocator's: the limit it may use, not the card.
  if (f.total)
    head += " of " + bytes_text(*m.total_bytes) +
            (m.framework == "tensorflow" ? " the allocator may use (its limit)" : " total");
  ev.push_back(head);
  if (f.process) {
    std::string line = "this process holds " + bytes_text(*m.process_bytes);
    if (f.allocated) line += ": " + bytes_text(*m.allocated_bytes) + " allocated by the framework";
    if (f.unallocated)
      line += fmt::format(", {} reserved but unallocated",
                          bytes_text(static_cast<uint64_t>(*f.unallocated)));
    ev.push_back(std::move(line));
  } else if (f.allocated && f.reserved) {
    ev.push_back(fmt::format("{} allocated, {} reserved by the framework",
                             bytes_text(*m.allocated_bytes),
                             bytes_text(static_cast<uint64_t>(*f.reserved))));
  } else if (f.allocated || f.reserved) {
    ev.push_back(fmt::format(
        "{} {} by the framework",
        bytes_text(f.allocated ? *m.allocated_bytes : static_cast<uint64_t>(*f.reserved)),
        f.allocated ? "in use" : "reserved"));
  }
  return ev;
}

// The arithmetic the causes are told apart by.
struct OomFacts {
  bool beyond_card = false;  // figures exceed the card: no "who else holds memory" arithmetic
  bool too_big = false;      // one request larger than the whole GPU
  bool fragmented = false;   // much of what the allocator holds is cached but unused
  bool other_holder = false;
  double reclaimable = 0;  // free + cached
  std::optional<double> others;
  std::optional<uint32_t> self_listed;  // the "Process N" that is this process (containers)
};

OomFacts oom_facts(const AppMessage& m, const OomFigures& f) {
  OomFacts k;
  k.beyond_card = f.total && ((f.allocated && *f.allocated > *f.total) ||
                              (f.reserved && *f.reserved > *f.total));
  k.too_big = f.tried && f.total && *f.tried > *f.total;
  k.fragmented = f.unallocated && f.reserved && *f.reserved > 0 && !k.beyond_card &&
                 *f.unallocated >= kFragmentedMinBytes &&
                 *f.unallocated >= kFragmentedShare * *f.reserved;
  k.reclaimable = f.free.value_or(0) + f.unallocated.value_or(0);
  if (f.total && f.free && f.process && !k.beyond_card) k.others = *f.total - *f.free - *f.process;
  // The message may name the other holders itself ("Process 1234 has 20.00 GiB memory in use").
  // Without its own "this process has" figure, a listed process holding at least what the
  // framework reserved is the process itself: in a container PyTorch cannot match its own PID
  // (another PID namespace) and lists itself as "Process N".
  double named_others = 0;
  for (const AppProcessMemory& p : m.other_processes) {
    const auto held = static_cast<double>(p.bytes);
    if (!f.process && f.reserved && held >= *f.reserved && !k.self_listed) {
      k.self_listed = p.pid;
      continue;
    }
    named_others += held;
  }
  if (named_others > 0 && (!k.others || named_others > *k.others)) k.others = named_others;
  k.other_holder = k.others && *k.others >= std::max(kOtherHolderMinBytes,
                                                     kOtherHolderMinShare * f.total.value_or(0));
  return k;
}

struct OomCause {
  std::string title, remedy;
};

OomCause cause_too_big(const AppMessage& m, std::vector<std::string>& ev) {
  ev.push_back("the request alone cannot fit on this GPU, whatever else is freed");
  return {fmt::format("CUDA out of memory{}: one request ({}) is larger than the whole GPU ({})",
                      gpu_words(m), bytes_text(*m.tried_bytes), bytes_text(*m.total_bytes)),
          "Reduce the batch or input size (e.g. run inference on smaller tiles), split the "
          "operation, or use a GPU with more memory / shard the model across GPUs. " +
              kShrinkRemedy};
}

OomCause cause_other_holder(const AppMessage& m, const OomFigures& f, const OomFacts& k,
                            std::vector<std::string>& ev) {
  if (f.total && f.free && f.process)
    ev.push_back(fmt::format(
        "{} total - {} free - {} this process = {} held by others", bytes_text(*m.total_bytes),
        bytes_text(*m.free_bytes), bytes_text(*m.process_bytes),
        bytes_text(static_cast<uint64_t>(std::max(0.0, *f.total - *f.free - *f.process)))));
  for (const AppProcessMemory& p : m.other_processes)
    ev.push_back(fmt::format("process {} holds {}", p.pid, bytes_text(p.bytes)));
  return {fmt::format("CUDA out of memory{}: other processes hold {} of the GPU", gpu_words(m),
                      bytes_text(static_cast<uint64_t>(*k.others))),
          "Find the other holders (nvidia-smi --query-compute-apps=pid,name,used_memory "
          "--format=csv) and stop stale jobs or notebook kernels, or run on a free GPU "
          "(CUDA_VISIBLE_DEVICES)."};
}

OomCause cause_fragmented(const AppMessage& m, const OomFigures& f, const OomFacts& k,
                          std::vector<std::string>& ev) {
  ev.push_back(fmt::format(
      "{} of the {} the allocator holds is cached but unused; free + cached ({}) would fit the "
      "request",
      pct(*f.unallocated / *f.reserved), bytes_text(static_cast<uint64_t>(*f.reserved)),
      bytes_text(static_cast<uint64_t>(k.reclaimable))));
  return {fmt::format("CUDA out of memory{}: fragmentation ({} reserved but unallocated)",
                      gpu_words(m), bytes_text(static_cast<uint64_t>(*f.unallocated))),
          "Let the allocator grow segments instead of fragmenting: "
          "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (older PyTorch: "
          "max_split_size_mb:128); avoid keeping many differently sized tensors alive. If it "
          "still fails: " +
              kShrinkRemedy};
}

OomCause cause_beyond_reclaimable(const AppMessage& m, const OomFigures& f, const OomFacts& k,
                                  std::vector<std::string>& ev) {
  ev.push_back(
      fmt::format("{} free + {} reserved but unallocated = {} < {} requested",
                  bytes_text(*m.free_bytes), bytes_text(static_cast<uint64_t>(*f.unallocated)),
                  bytes_text(static_cast<uint64_t>(k.reclaimable)), bytes_text(*m.tried_bytes)));
  if (k.fragmented)
    ev.push_back(
        "the cached share is large: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True may reduce "
        "the waste, but on its own it cannot make this request fit");
  return {fmt::format(
              "CUDA out of memory{}: the request ({}) is larger than free plus cached memory ({})",
              gpu_words(m), bytes_text(*m.tried_bytes),
              bytes_text(static_cast<uint64_t>(k.reclaimable))),
          "The operation needs more memory than this GPU can give while the model is "
          "resident: reduce the input/patch/batch size or split the operation. " +
              kShrinkRemedy};
}

// The message says more is free than was asked for, and the allocation still failed: the free
// memory is in pieces none of which holds the request, or it was taken between the report and
// the allocation (another process), or the display driver holds it back (Windows WDDM).
OomCause cause_free_exceeds_request(const AppMessage& m, std::vector<std::string>& ev) {
  ev.push_back(fmt::format("{} free >= {} requested: not a shortage of memory in all",
                           bytes_text(*m.free_bytes), bytes_text(*m.tried_bytes)));
  return {fmt::format("CUDA out of memory{}: the request ({}) is smaller than the free memory "
                      "({}), which is split or not the job's to take",
                      gpu_words(m), bytes_text(*m.tried_bytes), bytes_text(*m.free_bytes)),
          "Free memory is in pieces none of which holds the request, or another process took it "
          "first, or (Windows, WSL) the display driver holds part back: "
          "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (older PyTorch: "
          "max_split_size_mb:128) lets the allocator use the pieces; check nvidia-smi for "
          "other processes on the GPU; lower the peak (a smaller batch) if it persists."};
}

OomCause cause_working_set(const AppMessage& m, const OomFigures& f, const OomFacts& k,
                           std::vector<std::string>& ev) {
  if (k.others && f.total)
    ev.push_back(
        fmt::format("no other process holds a significant share ({} beyond this "
                    "process)",
                    bytes_text(static_cast<uint64_t>(std::max(0.0, *k.others)))));
  if (k.self_listed)
    ev.push_back(fmt::format(
        "process {} is this process: it holds at least the {} the framework reserved (inside a "
        "container PyTorch cannot tell its own PID and lists itself)",
        *k.self_listed, bytes_text(static_cast<uint64_t>(f.reserved.value_or(0)))));
  if (f.unallocated && !k.fragmented)
    ev.push_back(fmt::format("{} reserved but unallocated: not fragmentation",
                             bytes_text(static_cast<uint64_t>(*f.unallocated))));
  if (f.tried && f.free && f.total && f.allocated && !f.unallocated && *f.tried > *f.free)
    ev.push_back(fmt::format("{} requested > {} left ({} - {} in use)", bytes_text(*m.tried_bytes),
                             bytes_text(*m.free_bytes), bytes_text(*m.total_bytes),
                             bytes_text(*m.allocated_bytes)));
  return {fmt::format("CUDA out of memory{}: the job's own working set does not fit", gpu_words(m)),
          kShrinkRemedy};
}

OomCause oom_cause(const AppMessage& m, const OomFigures& f, const OomFacts& k,
                   std::vector<std::string>& ev) {
  if (k.too_big) return cause_too_big(m, ev);
  if (k.other_holder) return cause_other_holder(m, f, k, ev);
  if (k.fragmented && f.tried && *f.tried <= k.reclaimable) return cause_fragmented(m, f, k, ev);
  if (f.tried && f.free && *f.tried > k.reclaimable && f.unallocated)
    return cause_beyond_reclaimable(m, f, k, ev);
  if (f.tried && f.free && *f.free >= *f.tried) return cause_free_exceeds_request(m, ev);
  return cause_working_set(m, f, k, ev);
}

// What the framework reserves by itself when several processes share a GPU.
std::string framework_note(const std::string& framework) {
  if (framework == "tensorflow")
    return " TensorFlow reserves nearly all GPU memory up front: enable memory growth "
           "(tf.config.experimental.set_memory_growth) when several processes share a GPU.";
  if (framework == "jax")
    return " JAX preallocates 75% of GPU memory: XLA_PYTHON_CLIENT_PREALLOCATE=false or "
           "XLA_PYTHON_CLIENT_MEM_FRACTION when the GPU is shared.";
  if (framework == "hami-core")
    return " The limit here is HAMi-core's share of the GPU for this pod, not the GPU's memory "
           "(nvidia-smi in the pod shows the share as the total): ask for a larger share (the "
           "pod's nvidia.com/gpumem or nvidia.com/gpumem-percentage) or fit the job in it; "
           "the CUDA context takes a few hundred MiB of the share too.";
  if (framework == "vllm")
    return " For vLLM: give it more of the GPU (gpu_memory_utilization), a shorter "
           "max_model_len or fewer max_num_seqs (a smaller activation peak), a quantized model, "
           "or a GPU with more memory; tensor parallelism spreads the weights over GPUs.";
  if (framework == "nccl")
    return " Here NCCL itself could not allocate its buffers (a few MiB per peer and channel): "
           "the GPU was already full, so leave it headroom (a lower memory fraction for the "
           "framework's cache, e.g. vLLM gpu_memory_utilization, TensorRT-LLM "
           "kv_cache_free_gpu_mem_fraction) or lower NCCL_BUFFSIZE / NCCL_MAX_NCHANNELS.";
  return {};
}

void oom_finding(const std::vector<const AppMessage*>& ms, Findings& out) {
  const AppMessage* m = richest(ms);
  const OomFigures f = figures(*m);
  const OomFacts k = oom_facts(*m, f);
  std::vector<std::string> ev = oom_figure_lines(*m, f);
  if (k.beyond_card)
    ev.push_back(fmt::format(
        "the figures are inconsistent: the framework reports more allocated/reserved than the "
        "GPU's {} total, so the process already uses more than the card's dedicated memory "
        "(most likely spilled into shared system memory: Windows sysmem fallback or unified "
        "memory, which is slow); no per-holder arithmetic is possible",
        bytes_text(*m->total_bytes)));
  OomCause cause = oom_cause(*m, f, k, ev);
  // A share enforced by HAMi-core, or vLLM's own budget, explains the framework's message
  // beside it too.
  const auto budget = std::find_if(ms.begin(), ms.end(), [](const AppMessage* x) {
    return x->framework == "hami-core" || x->framework == "vllm";
  });
  cause.remedy += framework_note(budget != ms.end() ? (*budget)->framework : m->framework);
  if (budget != ms.end()) ev.push_back((*budget)->detail);
  for (auto& line : message_lines(ms)) ev.push_back(std::move(line));
  Finding x = make_finding("memory.cuda_oom", Severity::kWarning, nullptr, std::move(cause.title),
                           std::move(ev), std::move(cause.remedy));
  x.pci_bus_id = m->pci_bus_id;
  out.push_back(std::move(x));
}

// Simple one-message-kind findings: the title, the severity and the registry's remedy.
void simple(const DiagnoseContext& c, AppMessageKind k, std::string_view code, Severity sev,
            const std::string& title, std::vector<std::string> extra, Findings& out) {
  const auto ms = app_messages_of(c, k);
  if (ms.empty()) return;
  auto ev = message_lines(ms);
  for (auto& e : extra) ev.push_back(std::move(e));
  Finding x = make_finding(code, sev, nullptr, title + gpu_words(*ms.front()), std::move(ev));
  x.pci_bus_id = ms.front()->pci_bus_id;
  out.push_back(std::move(x));
}

// ---- NCCL watchdog timeouts read across ranks ------------------------------------------

std::string rank_list(const std::vector<unsigned>& rs) {
  constexpr size_t kShown = 16;  // a 1024-rank job must not print 1024 numbers
  std::string out;
  for (size_t i = 0; i < rs.size() && i < kShown; ++i)
    out += (i > 0 ? ", " : "") + std::to_string(rs[i]);
  if (rs.size() > kShown) out += fmt::format(" and {} more", rs.size() - kShown);
  return out;
}

std::string op_words(const std::string& op) {
  return op.empty() ? "" : " (" + op + ")";
}

std::string stop_words(const RankStop& s) {
  std::string out =
      fmt::format("rank {} stopped at SeqNum {}{}", s.rank, s.seq, op_words(s.op_type));
  if (s.last_enqueued) out += fmt::format(", last enqueued {}", *s.last_enqueued);
  if (s.last_completed) out += fmt::format(", last completed {}", *s.last_completed);
  return out;
}

// Where one process group's ranks stopped, and which ranks never reported.
std::vector<std::string> group_evidence(const GroupVerdict& g) {
  std::vector<std::string> ev;
  const std::string in = g.group.empty() ? "" : fmt::format(" in process group {}", g.group);
  const std::string missing =
      g.missing.empty() ? "" : fmt::format("; ranks {} never reported", rank_list(g.missing));
  if (g.agreement == Agreement::kSameCollective) {
    ev.push_back(fmt::format("all {} reporting ranks{} stopped at SeqNum {}{}{}", g.stops.size(),
                             in, g.stops.front().seq, op_words(g.stops.front().op_type), missing));
    return ev;
  }
  if (g.agreement == Agreement::kApart)
    ev.push_back(fmt::format(
        "SeqNums{} are more than 1000 apart: positions of different process groups (a group's "
        "collective completes only when all its ranks join), so they are not compared",
        in));
  for (const RankStop& s : g.stops) ev.push_back(stop_words(s));
  if (!g.not_enqueued.empty())
    ev.push_back(fmt::format("ranks {} had not enqueued the collective the others wait in",
                             rank_list(g.not_enqueued)));
  if (!missing.empty()) ev.push_back(missing.substr(2));
  return ev;
}

struct NcclVerdict {
  std::vector<const AppMessage*> messages;
  CollectiveVerdict verdict;
  std::vector<std::string> evidence;  // the verdict in words
};

NcclVerdict nccl_verdict(const DiagnoseContext& c) {
  NcclVerdict v;
  v.messages = app_messages_of(c, AppMessageKind::kNcclTimeout);
  std::vector<WatchdogReport> reports;
  for (const AppMessage* m : v.messages)
    if (m->watchdog) reports.push_back(*m->watchdog);
  v.verdict = judge_collectives(reports);
  for (const GroupVerdict& g : v.verdict.groups)
    for (std::string& e : group_evidence(g)) v.evidence.push_back(std::move(e));
  if (!v.verdict.without_position.empty())
    v.evidence.push_back(fmt::format("ranks {} reported a stuck watchdog or an abort, no SeqNum",
                                     rank_list(v.verdict.without_position)));
  return v;
}

// "ranks 3 behind at SeqNum 40, others at 41" / "ranks stopped at SeqNum 41 in different
// collectives": the group that desynced first.
std::string desync_title(const CollectiveVerdict& v) {
  for (const GroupVerdict& g : v.groups) {
    if (g.agreement != Agreement::kDesync) continue;
    uint64_t lo = g.stops.front().seq, hi = lo;
    for (const RankStop& s : g.stops) {
      lo = std::min(lo, s.seq);
      hi = std::max(hi, s.seq);
    }
    if (lo == hi)
      return fmt::format("NCCL ranks stopped at SeqNum {} in different collectives (a mismatch)",
                         lo);
    return fmt::format(
        "NCCL ranks stopped at different collectives: rank(s) {} behind at SeqNum {}, others "
        "up to {}",
        rank_list(g.behind), lo, hi);
  }
  return "NCCL ranks stopped at different collectives";
}

}  // namespace

void rule_app_cuda_oom(const DiagnoseContext& c, Findings& out) {
  // One finding per GPU the messages name: several ranks may each run out.
  std::map<std::optional<unsigned>, std::vector<const AppMessage*>> by_gpu;
  for (const AppMessage* m : app_messages_of(c, AppMessageKind::kCudaOutOfMemory))
    by_gpu[m->gpu_index].push_back(m);
  for (const auto& [gpu, ms] : by_gpu) oom_finding(ms, out);
}

void rule_app_nccl_error(const DiagnoseContext& c, Findings& out) {
  // A peer-access failure underneath names the cause itself (cuda.peer_access_unsupported).
  if (!app_messages_of(c, AppMessageKind::kPeerAccessUnsupported).empty()) return;
  // NCCL's IB transport naming the verbs completion status: the network path itself failed.
  const auto ms = app_messages_of(c, AppMessageKind::kNcclError);
  const auto ib = std::find_if(ms.begin(), ms.end(), [](const AppMessage* m) {
    return m->detail.rfind("IB/RoCE work completion status", 0) == 0;
  });
  if (ib == ms.end()) {
    simple(c, AppMessageKind::kNcclError, "nccl.error", Severity::kWarning,
           "NCCL communication failed", {}, out);
    return;
  }
  simple(c, AppMessageKind::kNcclError, "nccl.error", Severity::kWarning,
         "NCCL's network transport failed: IB/RoCE completions with an error",
         {(*ib)->detail,
          "the RDMA path between the nodes dropped: check both NICs' link state and port "
          "counters (ibstat, ethtool -S), the switch ports between them, and for RoCE the "
          "lossless settings (PFC/ECN) and GID index"},
         out);
}

void rule_app_nccl_timeout(const DiagnoseContext& c, Findings& out) {
  NcclVerdict v = nccl_verdict(c);
  if (v.messages.empty() || v.verdict.agreement == Agreement::kDesync) return;
  v.evidence.push_back(
      "the rank that timed out is usually the victim: the cause is on the rank that stopped "
      "answering");
  simple(c, AppMessageKind::kNcclTimeout, "nccl.timeout", Severity::kWarning,
         "An NCCL collective timed out (watchdog): a rank stalled or died", std::move(v.evidence),
         out);
}

void rule_app_nccl_desync(const DiagnoseContext& c, Findings& out) {
  NcclVerdict v = nccl_verdict(c);
  if (v.verdict.agreement != Agreement::kDesync) return;
  v.evidence.push_back(
      "the ranks furthest behind are the likely culprits: they did not reach the collective the "
      "others wait in (a skipped or extra collective, a crash, a hang outside NCCL)");
  for (std::string& e : message_lines(v.messages)) v.evidence.push_back(std::move(e));
  out.push_back(make_finding("nccl.desync", Severity::kWarning, nullptr, desync_title(v.verdict),
                             std::move(v.evidence)));
}

void rule_app_peer_access(const DiagnoseContext& c, Findings& out) {
  const auto ms = app_messages_of(c, AppMessageKind::kPeerAccessUnsupported);
  if (ms.empty()) return;
  auto ev = message_lines(ms);
  const auto nccl = app_messages_of(c, AppMessageKind::kNcclError);
  if (!nccl.empty())
    ev.push_back(fmt::format("the job then failed with \"{}\"", nccl.front()->text));
  ev.push_back(
      "the failing path is direct GPU peer-to-peer (P2P/IPC) inside the node, not the network");
  out.push_back(make_finding("cuda.peer_access_unsupported", Severity::kWarning, nullptr,
                             "GPU peer-to-peer access is not supported between these GPUs",
                             std::move(ev)));
}

void rule_app_driver_insufficient(const DiagnoseContext& c, Findings& out) {
  const auto ms = app_messages_of(c, AppMessageKind::kDriverInsufficient);
  if (ms.empty()) return;
  auto ev = message_lines(ms);
  // The CUDA runtime in use: from the message, else a framework's or toolkit's in host facts.
  std::optional<std::string> runtime;
  for (const AppMessage* m : ms) {
    if (m->cuda_runtime_version) runtime = m->cuda_runtime_version;
  }
  if (!runtime && c.obs.host) {
    for (const FrameworkRuntime& fw : c.obs.host->frameworks) {
      if (fw.cuda) runtime = fw.cuda;
    }
    if (!runtime && !c.obs.host->cuda_toolkits.empty())
      runtime = c.obs.host->cuda_toolkits.back().version;
  }
  std::optional<DriverVersion> drv = running_driver(c);
  for (const AppMessage* m : ms) {
    if (!drv && m->driver_version) drv = parse_driver_version(*m->driver_version);
  }
  const auto need = runtime ? cuda_driver_need(*runtime) : std::nullopt;
  const auto max_cuda = driver_max_cuda(c);
  if (drv) ev.push_back("driver " + driver_version_string(*drv));
  if (max_cuda) {
    ev.push_back("the driver supports CUDA up to " + cuda_version_string(*max_cuda));
  } else {
    for (const AppMessage* m : ms)
      if (m->driver_cuda_version) {
        ev.push_back("the driver supports CUDA up to " + *m->driver_cuda_version +
                     " (the message's \"found version\")");
        break;
      }
  }
  if (runtime) ev.push_back("CUDA runtime in use: " + *runtime);
  bool supported = false;
  if (drv && need) {
    supported = *drv >= need->compat_min.value_or(need->toolkit_min);
    ev.push_back(fmt::format("CUDA {} needs driver >= {}", need->cuda,
                             driver_version_string(need->compat_min.value_or(need->toolkit_min))));
  }
  if (supported) {
    ev.push_back(fmt::format("driver {} does support CUDA {}: the error has another cause",
                             driver_version_string(*drv), need->cuda));
    out.push_back(make_finding(
        "cuda.driver_insufficient", Severity::kCritical, nullptr,
        fmt::format("\"CUDA driver version is insufficient\" although driver {} supports CUDA {}",
                    driver_version_string(*drv), need->cuda),
        std::move(ev),
        "The process does not load the host driver's libcuda: a cuda-compat package or an "
        "image's stub libcuda.so earlier on LD_LIBRARY_PATH, or a container started without the "
        "driver libraries mounted (use the NVIDIA Container Toolkit: --gpus all / "
        "--runtime=nvidia). Check with ldconfig -p | grep libcuda and ldd on the program."));
    return;
  }
  std::string title = "The NVIDIA driver is older than the CUDA runtime the program uses";
  std::string remedy =
      "Upgrade the driver to one that supports the program's CUDA version, or use a build of "
      "the program/framework for the CUDA version the driver supports (nvidia-smi shows it as "
      "\"CUDA Version\").";
  if (drv && need) {
    title =
        fmt::format("Driver {} is too old for CUDA {}", driver_version_string(*drv), need->cuda);
    remedy = fmt::format(
        "Install driver {} or newer, or use a build of the program for the CUDA version the "
        "driver supports.",
        driver_version_string(need->toolkit_min));
  }
  out.push_back(make_finding("cuda.driver_insufficient", Severity::kCritical, nullptr,
                             std::move(title), std::move(ev), std::move(remedy)));
}

void rule_app_no_cuda_device(const DiagnoseContext& c, Findings& out) {
  auto ms = app_messages_of(c, AppMessageKind::kNoCudaDevice);
  const auto not_loaded = app_messages_of(c, AppMessageKind::kDriverNotLoaded);
  if (ms.empty() && not_loaded.empty()) return;
  std::vector<std::string> ev = message_lines(ms);
  if (c.obs.host) {
    if (auto it = c.obs.host->env.find("CUDA_VISIBLE_DEVICES"); it != c.obs.host->env.end())
      ev.push_back("CUDA_VISIBLE_DEVICES=" + it->second);
  }
  if (!c.gpus.empty())
    ev.push_back(
        fmt::format("{} GPU(s) are visible to nvidia-smi/NVML in the input: the "
                    "process's view differs (CUDA_VISIBLE_DEVICES, container)",
                    c.gpus.size()));
  std::string title = "The CUDA program found no CUDA-capable device";
  std::string remedy;
  if (!not_loaded.empty()) {
    for (auto& line : message_lines(not_loaded)) ev.push_back(std::move(line));
    title += ": the NVIDIA kernel driver is not loaded on this host";
    remedy =
        "Load the driver: lsmod | grep nvidia; sudo modprobe nvidia (an error names the cause: no "
        "module built for this kernel - dkms status, reinstall the driver; Secure Boot refusing "
        "an unsigned module); in a container the host's driver counts: run it with --gpus all "
        "or the NVIDIA runtime.";
  }
  // nvidia-smi in the same input cannot reach the driver: that finding is the cause.
  const bool consequence = !app_messages_of(c, AppMessageKind::kSmiCannotTalkToDriver).empty();
  if (consequence) {
    title += " (a consequence: nvidia-smi cannot reach the driver either)";
    ev.push_back(
        "nvidia-smi in the same input cannot communicate with the driver: follow "
        "driver.smi_cannot_communicate");
  }
  if (ms.empty()) ms = not_loaded;
  Finding f =
      make_finding("cuda.no_device", consequence ? Severity::kInfo : Severity::kCritical, nullptr,
                   title + gpu_words(*ms.front()), std::move(ev), std::move(remedy));
  f.pci_bus_id = ms.front()->pci_bus_id;
  out.push_back(std::move(f));
}

void rule_app_smi_no_driver(const DiagnoseContext& c, Findings& out) {
  const size_t before = out.size();
  simple(c, AppMessageKind::kSmiCannotTalkToDriver, "driver.smi_cannot_communicate",
         Severity::kCritical, "nvidia-smi cannot communicate with the NVIDIA driver", {}, out);
  if (out.size() == before || !c.obs.host || !c.obs.host->wsl) return;
  // WSL 2 has no NVIDIA kernel module to load: the Windows driver serves the GPU.
  Finding& f = out.back();
  f.evidence.push_back(
      "the capture shows WSL 2: the GPU comes from the Windows driver through /dev/dxg, and "
      "nvidia-smi and libcuda come from /usr/lib/wsl/lib");
  f.remedy =
      "Update the NVIDIA driver on Windows, then wsl --update and wsl --shutdown; check that the "
      "distribution runs as WSL 2 (wsl -l -v) and that nvidia-smi is /usr/lib/wsl/lib's (a Linux "
      "driver package installed inside the distribution, nvidia-driver-* or cuda-drivers, shadows "
      "it: remove it). There is no kernel module to load in WSL.";
}

void rule_app_no_device_handle(const DiagnoseContext& c, Findings& out) {
  const auto ms = app_messages_of(c, AppMessageKind::kNoDeviceHandle);
  if (ms.empty()) return;
  // nvidia-smi cannot open the GPU the kernel log shows lost (fallen off the bus, Xid 79) or
  // never initialised: that error's finding carries the verdict, this is its consequence.
  const std::optional<std::string> handle_gpu = normalise_event_pci(ms.front()->pci_bus_id);
  bool explained = false;
  for (const Event& e : c.obs.events) {
    const bool lost = e.kind == EventKind::kFallenOffBus ||
                      (e.kind == EventKind::kXid && e.code == 79) ||
                      e.driver_kind == DriverMessageKind::kInitFailed;
    explained =
        explained || (lost && (!handle_gpu || normalise_event_pci(e.pci_bus_id) == handle_gpu));
  }
  if (!explained) {
    simple(c, AppMessageKind::kNoDeviceHandle, "gpu.no_device_handle", Severity::kCritical,
           "The driver cannot get a handle for a GPU (lost or failed to initialise)", {}, out);
  } else {
    simple(c, AppMessageKind::kNoDeviceHandle, "gpu.no_device_handle", Severity::kInfo,
           "nvidia-smi cannot open the GPU the kernel log shows lost or uninitialised (a "
           "consequence)",
           {"the kernel log's fallen-off-the-bus or initialisation error for this GPU is the "
            "cause: follow that finding"},
           out);
  }
}

void rule_app_docker_no_gpu(const DiagnoseContext& c, Findings& out) {
  simple(c, AppMessageKind::kDockerNoGpuDriver, "container.no_gpu_runtime", Severity::kCritical,
         "Docker has no GPU device driver: the NVIDIA Container Toolkit is missing or not "
         "configured",
         {}, out);
}

void rule_app_nvml_init_failed(const DiagnoseContext& c, Findings& out) {
  std::vector<std::string> extra;
  for (const AppMessage* m : app_messages_of(c, AppMessageKind::kNvmlInitFailed))
    if (m->text.find("nv-hostengine") != std::string::npos) {
      extra.push_back(
          "DCGM's host engine could not start on it: no GPU metrics or health checks from it");
      break;
    }
  simple(c, AppMessageKind::kNvmlInitFailed, "driver.nvml_init_failed", Severity::kCritical,
         "A program could not initialize NVML (the driver's management library)", std::move(extra),
         out);
}

void rule_app_windows_driver_event(const DiagnoseContext& c, Findings& out) {
  const auto ms = app_messages_of(c, AppMessageKind::kWindowsDriverEvent);
  if (ms.empty()) return;
  const std::string& id = ms.front()->detail;
  std::string title;
  if (id == "153" || id == "4101")
    title = fmt::format(
        "The NVIDIA Windows driver reset a GPU that stopped responding (nvlddmkm event {}: a "
        "timeout detection and recovery, TDR)",
        id);
  else if (id == "13" || id == "14")
    title = fmt::format(
        "The NVIDIA Windows driver logged a GPU error (nvlddmkm event {}: a graphics exception, "
        "the counterpart of a Linux Xid)",
        id);
  else
    title = fmt::format("The NVIDIA Windows driver logged event {} (nvlddmkm)", id);
  auto ev = message_lines(ms);
  out.push_back(
      make_finding("driver.windows_event", Severity::kWarning, nullptr, title, std::move(ev)));
}

void rule_app_launch_failure(const DiagnoseContext& c, Findings& out) {
  simple(c, AppMessageKind::kLaunchFailure, "cuda.launch_failure", Severity::kWarning,
         "A CUDA kernel crashed (unspecified launch failure)", {}, out);
}

void rule_app_illegal_address(const DiagnoseContext& c, Findings& out) {
  simple(c, AppMessageKind::kIllegalAddress, "cuda.illegal_address", Severity::kWarning,
         "A CUDA kernel accessed memory it does not own (illegal memory access)", {}, out);
}

void rule_app_uncorrectable_ecc(const DiagnoseContext& c, Findings& out) {
  simple(c, AppMessageKind::kUncorrectableEcc, "ecc.uncorrectable_reported", Severity::kCritical,
         "The GPU reported an uncorrectable ECC memory error to the application",
         {"a GPU memory health event, not a bug in the program: the generic "
          "CUDA_LAUNCH_BLOCKING / TORCH_USE_CUDA_DSA hints printed with it do not apply"},
         out);
}

}  // namespace gw
