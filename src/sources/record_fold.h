// Records that a long input prints again and again (a looped script's every run: the same DCGM
// table, nccl-tests table, bandwidth matrix), folded into their first copy as they are read, and
// a cap on how many different ones one input keeps. The repository's application-log fixtures
// repeated to 128 MB kept every copy: 1.2 GB of memory and 193 MB of JSON, one finding per copy
// whose evidence named every other copy. Now an input holds as many records as it has different
// ones, up to the cap (issue 20). A copy is equal in every field but where it was read (origin,
// block, row lines); the first copy keeps its place and counts the others in `copies`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/bench.h"
#include "core/dcgm.h"

namespace gw {

// Content only: a hash and an equality that leave out where the record was read.
uint64_t content_hash(const DcgmResult& r);
bool same_content(const DcgmResult& a, const DcgmResult& b);
uint64_t content_hash(const CollectiveRun& r);
bool same_content(const CollectiveRun& a, const CollectiveRun& b);
uint64_t content_hash(const BandwidthMatrix& m);
bool same_content(const BandwidthMatrix& a, const BandwidthMatrix& b);

inline uint64_t hash_mix(uint64_t h, uint64_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

// Groups of records read together (one DCGM table or report, one line, one run), folded whole:
// a group is a copy of an earlier one when it holds as many records and each is a copy of the
// one at its place. Every record of the first group then counts the copy's `copies` too. A rule
// that groups a table's records by where the table starts (DcgmResult::block) sees the same
// table once, never half of it under another's name.
template <class T>
class GroupFold {
 public:
  // Records of `out` from index `first` on are this input's; at most `cap` of them are kept.
  GroupFold(size_t first, size_t cap) : limit_(first + cap) {}

  // Adds `group` to the end of `out`, or counts it on its first copy. Past the cap a new group
  // is left out whole (counted in dropped()); a copy is still counted.
  void add(std::vector<T>& out, std::vector<T>&& group) {
    if (group.size() > 1) fold_within(group);
    if (group.empty()) return;
    uint64_t key = group.size();
    for (const T& r : group) key = hash_mix(key, content_hash(r));
    for (auto [it, last] = by_key_.equal_range(key); it != last; ++it)
      if (is_copy(out, it->second, group)) {
        for (size_t i = 0; i < group.size(); ++i)
          out[it->second.begin + i].copies += group[i].copies;
        return;
      }
    if (out.size() + group.size() > limit_) {
      dropped_ += group.size();
      return;
    }
    by_key_.emplace(key, Kept{out.size(), group.size()});
    for (T& r : group) out.push_back(std::move(r));
  }
  void add(std::vector<T>& out, T&& one) {
    std::vector<T> g;
    g.push_back(std::move(one));
    add(out, std::move(g));
  }
  size_t dropped() const { return dropped_; }

 private:
  struct Kept {
    size_t begin, size;  // where in `out`
  };
  // A group that holds one record twice (a table read through its repeats: one block) keeps
  // the first, which counts the others.
  static void fold_within(std::vector<T>& group) {
    std::unordered_multimap<uint64_t, size_t> seen;
    size_t w = 0;
    for (size_t i = 0; i < group.size(); ++i) {
      const uint64_t h = content_hash(group[i]);
      bool folded = false;
      for (auto [it, last] = seen.equal_range(h); it != last && !folded; ++it)
        if (same_content(group[it->second], group[i])) {
          group[it->second].copies += group[i].copies;
          folded = true;
        }
      if (folded) continue;
      if (w != i) group[w] = std::move(group[i]);
      seen.emplace(h, w++);
    }
    group.resize(w);
  }
  static bool is_copy(const std::vector<T>& out, const Kept& k, const std::vector<T>& group) {
    if (k.size != group.size()) return false;
    for (size_t i = 0; i < k.size; ++i)
      if (!same_content(out[k.begin + i], group[i])) return false;
    return true;
  }
  size_t limit_;
  size_t dropped_ = 0;
  std::unordered_multimap<uint64_t, Kept> by_key_;
};

// What one input keeps at most: DCGM results (about 250 bytes each with their strings),
// nccl-tests runs (a table of a few dozen rows each) and bandwidth matrices.
inline constexpr size_t kMaxDcgmResultsPerInput = 16384;
inline constexpr size_t kMaxCollectiveRunsPerInput = 1024;
inline constexpr size_t kMaxMatricesPerInput = 1024;

}  // namespace gw
