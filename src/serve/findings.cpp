#include "serve/findings.h"

#include <algorithm>

namespace gw::serve {
namespace {

constexpr size_t kClearedKept = 256;

}  // namespace

std::string finding_key(const Finding& f) {
  return f.code + "|" + (f.gpu ? std::to_string(*f.gpu) : "-") + "|" + f.pci_bus_id.value_or("");
}

void FindingTracker::restore(std::vector<store::FindingRecord> open) {
  for (auto& r : open) {
    if (std::none_of(active_.begin(), active_.end(), [&](const store::FindingRecord& a) {
          return finding_key(a.finding) == finding_key(r.finding);
        }))
      active_.push_back(std::move(r));
  }
}

std::vector<store::FindingRecord> FindingTracker::update(int64_t now_ms,
                                                         const std::vector<Finding>& findings) {
  std::vector<store::FindingRecord> changed;
  std::vector<bool> seen(active_.size(), false);
  for (const Finding& f : findings) {
    const std::string key = finding_key(f);
    auto it = std::find_if(active_.begin(), active_.end(), [&](const store::FindingRecord& a) {
      return finding_key(a.finding) == key;
    });
    if (it == active_.end()) {
      store::FindingRecord r;
      r.finding = f;
      r.raised_ms = r.last_active_ms = now_ms;
      active_.push_back(r);
      seen.push_back(true);
      changed.push_back(std::move(r));
      ++raised_total_;
      continue;
    }
    seen[static_cast<size_t>(it - active_.begin())] = true;
    it->last_active_ms = now_ms;
    if (it->finding.severity != f.severity || it->finding.title != f.title ||
        it->finding.evidence != f.evidence) {
      it->finding = f;
      changed.push_back(*it);
    }
  }
  std::vector<store::FindingRecord> still;
  for (size_t i = 0; i < active_.size(); ++i) {
    if (seen[i]) {
      still.push_back(std::move(active_[i]));
      continue;
    }
    store::FindingRecord r = std::move(active_[i]);
    r.cleared_ms = now_ms;
    changed.push_back(r);
    cleared_.push_front(std::move(r));
    if (cleared_.size() > kClearedKept) cleared_.pop_back();
    ++cleared_total_;
  }
  active_ = std::move(still);
  return changed;
}

void FindingTracker::assign_ids(const std::vector<store::FindingRecord>& changed) {
  for (const auto& c : changed) {
    if (c.id == 0) continue;
    auto same = [&](store::FindingRecord& a) {
      if (a.id == 0 && a.raised_ms == c.raised_ms &&
          finding_key(a.finding) == finding_key(c.finding))
        a.id = c.id;
    };
    for (auto& a : active_) same(a);
    for (auto& a : cleared_) same(a);
  }
}

}  // namespace gw::serve
