// Finding lifecycle: each diagnosis round's findings are matched (by code, GPU and PCI address)
// to the ones already active. New ones are raised, missing ones cleared with the time: a
// finding never stays active on a sticky last value.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "core/finding.h"
#include "store/store.h"

namespace gw::serve {

// code + GPU + PCI: what makes two findings "the same one".
std::string finding_key(const Finding& f);

class FindingTracker {
 public:
  // Resumes lifecycles left open when the daemon last stopped.
  void restore(std::vector<store::FindingRecord> open);
  // Applies one diagnosis at `now_ms`; returns every record that changed (raised, cleared,
  // or its severity/title/evidence moved), for the store.
  std::vector<store::FindingRecord> update(int64_t now_ms, const std::vector<Finding>& findings);
  // After the store wrote `changed`, remember the ids it gave new rows.
  void assign_ids(const std::vector<store::FindingRecord>& changed);

  const std::vector<store::FindingRecord>& active() const { return active_; }
  // The most recently cleared, newest first (bounded).
  const std::deque<store::FindingRecord>& cleared() const { return cleared_; }
  uint64_t raised_total() const { return raised_total_; }
  uint64_t cleared_total() const { return cleared_total_; }

 private:
  std::vector<store::FindingRecord> active_;
  std::deque<store::FindingRecord> cleared_;
  uint64_t raised_total_ = 0, cleared_total_ = 0;
};

}  // namespace gw::serve
