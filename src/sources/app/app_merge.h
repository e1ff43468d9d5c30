// Application messages that repeat, folded into their first copy as they are read. A log that
// prints the same warning or error on every step kept every copy, and each copy became a
// finding of its own (64 MB of such a log: 481 MB of memory; the repository's app-log fixtures
// repeated to 256 MB: 17.6 GB). Now a log holds as many messages as it has different ones,
// whatever its length (issue 20).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/observation.h"

namespace gw {

// Where the messages of `out` went in one fold: an index from before it, the index of the
// message that holds it now (moved down, or the first copy it was folded into).
class MessageMoves {
 public:
  MessageMoves(size_t from, std::vector<size_t> to) : from_(from), to_(std::move(to)) {}
  size_t operator()(size_t i) const { return i < from_ ? i : to_[i - from_]; }

 private:
  size_t from_;             // indices below it did not move
  std::vector<size_t> to_;  // index - from_ -> its new index
};

class AppMessageMerge {
 public:
  // Messages of `out` from index `first` on are this input's (earlier inputs' stay as they are).
  // `reads` counts the messages read over all inputs (Observation::app_messages_read): each
  // message's AppMessage::read_at is taken from it as it is folded.
  AppMessageMerge(size_t first, size_t& reads) : kept_(first), reads_(reads) {}

  // Folds every message of out[first, size - tail) into the first copy of it, keeping the
  // order of first copies; the last `tail` messages stay as they are (a reader may still be
  // adding to them). A copy is the same message but for where it was read; NCCL's transport and
  // setting facts (counted in `steps`, one message per fact) add their counts together. The
  // first copy's read_at becomes its newest copy's.
  MessageMoves fold(std::vector<AppMessage>& out, size_t tail);

  // Different messages of one kind kept per input at most: past it a new one is counted on the
  // last kept of its kind (its copies), so that "N such messages" stays exact while a log whose
  // every step prints a different out-of-memory or watchdog line keeps a bounded number.
  static constexpr size_t kMaxPerKind = 512;
  // Messages counted on another of their kind by that cap, so far.
  size_t unlisted() const { return unlisted_; }

 private:
  static uint64_t key_of(const AppMessage& m);
  static bool fold_into(AppMessage& first, AppMessage& copy);
  size_t kept_;  // out[first, kept_) holds no two copies of one message
  size_t& reads_;
  std::unordered_multimap<uint64_t, size_t> by_key_;
  struct OfKind {
    size_t kept = 0;  // different messages of the kind kept
    size_t last = 0;  // the index of the last of them
  };
  std::unordered_map<int, OfKind> of_kind_;
  size_t unlisted_ = 0;
};

}  // namespace gw
