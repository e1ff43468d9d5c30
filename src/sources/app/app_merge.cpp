#include "sources/app/app_merge.h"

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "sources/record_fold.h"  // hash_mix

namespace gw {

namespace {

// One message per fact and input, its repeats counted in `steps` (AppScanner::add_counted).
bool counted(AppMessageKind k) {
  return k == AppMessageKind::kNcclTransport || k == AppMessageKind::kNcclSetting;
}

}  // namespace

uint64_t AppMessageMerge::key_of(const AppMessage& m) {
  const std::hash<std::string_view> hash;
  uint64_t h = hash_mix(static_cast<uint64_t>(m.kind), hash(m.detail));
  return counted(m.kind) ? h : hash_mix(h, hash(m.text));
}

bool AppMessageMerge::fold_into(AppMessage& first, AppMessage& copy) {
  if (first.kind != copy.kind) return false;
  if (counted(first.kind)) {
    if (first.detail != copy.detail) return false;
    first.steps += copy.steps;
    first.read_at = std::max(first.read_at, copy.read_at);
    return true;
  }
  // Every field but the origin, the count and the read order: set aside (swapped with empty
  // ones) to compare.
  std::string a, b;
  first.origin.swap(a);
  copy.origin.swap(b);
  const size_t n = std::exchange(first.copies, copy.copies);
  const size_t at = std::exchange(first.read_at, copy.read_at);
  const bool same = first == copy;
  first.origin.swap(a);
  copy.origin.swap(b);
  first.copies = n + (same ? copy.copies : 0);
  first.read_at = same ? std::max(at, copy.read_at) : at;
  return same;
}

MessageMoves AppMessageMerge::fold(std::vector<AppMessage>& out, size_t tail) {
  const size_t end = out.size() > tail ? out.size() - tail : 0;
  const size_t from = kept_;
  if (end <= from) return MessageMoves(out.size(), {});
  std::vector<size_t> to(out.size() - from);
  for (size_t p = from; p < end; ++p) {
    out[p].read_at = ++reads_;
    const uint64_t key = key_of(out[p]);
    bool folded = false;
    for (auto [it, last] = by_key_.equal_range(key); it != last && !folded; ++it)
      if (fold_into(out[it->second], out[p])) {
        to[p - from] = it->second;
        folded = true;
      }
    if (folded) continue;
    // Counted kinds are one message a fact.
    if (const AppMessageKind k = out[p].kind; !counted(k)) {
      OfKind& n = of_kind_[static_cast<int>(k)];
      if (n.kept == kMaxPerKind) {
        out[n.last].copies += out[p].copies;
        out[n.last].read_at = out[p].read_at;
        to[p - from] = n.last;
        ++unlisted_;
        continue;
      }
      ++n.kept;
      n.last = kept_;
    }
    if (p != kept_) out[kept_] = std::move(out[p]);
    by_key_.emplace(key, kept_);
    to[p - from] = kept_++;
  }
  const size_t gone = end - kept_;
  for (size_t p = end; p < out.size(); ++p) to[p - from] = p - gone;
  out.erase(out.begin() + static_cast<std::ptrdiff_t>(kept_),
            out.begin() + static_cast<std::ptrdiff_t>(end));
  return MessageMoves(from, std::move(to));
}

}  // namespace gw
