#include "sources/smi/phrase_set.h"

#include <bit>
#include <deque>
#include <limits>

namespace gw::text {

namespace {

constexpr unsigned char lower(unsigned char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<unsigned char>(c + ('a' - 'A')) : c;
}

constexpr uint16_t kNone = std::numeric_limits<uint16_t>::max();

}  // namespace

PhraseSet::PhraseSet(const std::vector<Phrase>& phrases) {
  // The states a trie of them all needs: the phrases past what 16-bit state numbers hold are
  // left out (never found), as are those past kMaxPhrases.
  size_t states = 1;
  for (const Phrase& p : phrases) {
    if (phrases_.size() == kMaxPhrases || p.text.empty() || states + p.text.size() >= kNone) break;
    phrases_.push_back(p);
    states += p.text.size();
  }
  for (const Phrase& p : phrases_)
    for (const char ch : p.text) {
      const unsigned char c = lower(static_cast<unsigned char>(ch));
      if (class_of_[c] == 0) class_of_[c] = static_cast<uint8_t>(classes_++);
    }
  for (unsigned b = 'A'; b <= 'Z'; ++b)
    class_of_[b] = class_of_[lower(static_cast<unsigned char>(b))];
  // The trie, by state number.
  std::vector<uint16_t> go;
  const auto add_state = [&] {
    go.resize(go.size() + classes_, kNone);
    blind_.push_back(0);
    exact_.push_back(0);
    return static_cast<uint16_t>(blind_.size() - 1);
  };
  add_state();
  for (size_t i = 0; i < phrases_.size(); ++i) {
    uint16_t s = 0;
    for (const char ch : phrases_[i].text) {
      const size_t at = s * classes_ + class_of_[static_cast<unsigned char>(ch)];
      if (go[at] == kNone) {
        const uint16_t n = add_state();
        go[at] = n;
      }
      s = go[at];
    }
    (phrases_[i].case_blind ? blind_ : exact_)[s] |= uint64_t{1} << i;
  }
  // Failure links, breadth first, folded into the transitions: each state's missing ones go
  // where its longest proper suffix in the trie goes, and it reports that suffix's phrases too.
  std::vector<uint16_t> fail(blind_.size(), 0);
  std::deque<uint16_t> queue;
  for (size_t c = 0; c < classes_; ++c) {
    uint16_t& u = go[c];
    if (u == kNone) {
      u = 0;
    } else {
      fail[u] = 0;
      queue.push_back(u);
    }
  }
  while (!queue.empty()) {
    const uint16_t s = queue.front();
    queue.pop_front();
    for (size_t c = 0; c < classes_; ++c) {
      const uint16_t via_fail = go[fail[s] * classes_ + c];
      uint16_t& u = go[s * classes_ + c];
      if (u == kNone) {
        u = via_fail;
        continue;
      }
      fail[u] = via_fail;
      blind_[u] |= blind_[via_fail];
      exact_[u] |= exact_[via_fail];
      queue.push_back(u);
    }
  }
  next_.resize(go.size());
  for (size_t i = 0; i < go.size(); ++i) {
    const uint16_t t = go[i];
    next_[i] = static_cast<uint32_t>(t * classes_) | ((blind_[t] | exact_[t]) != 0 ? kOut : 0);
  }
}

namespace {
std::vector<Phrase> with_case(std::span<const std::string_view> texts, bool case_blind) {
  std::vector<Phrase> v;
  for (std::string_view t : texts) v.push_back({t, case_blind});
  return v;
}
}  // namespace

PhraseSet::PhraseSet(std::span<const std::string_view> texts, bool case_blind)
    : PhraseSet(with_case(texts, case_blind)) {}

uint64_t PhraseSet::hits(std::string_view line, size_t i, uint32_t row, uint64_t have) const {
  const size_t s = row / classes_;
  uint64_t hit = blind_[s];
  for (uint64_t e = exact_[s] & ~have & ~hit; e != 0; e &= e - 1) {
    const auto j = static_cast<size_t>(std::countr_zero(e));
    const std::string_view t = phrases_[j].text;
    if (line.substr(i + 1 - t.size(), t.size()) == t) hit |= uint64_t{1} << j;
  }
  return hit;
}

template <bool kFirstHit>
uint64_t PhraseSet::scan(std::string_view line) const {
  uint64_t hit = 0;
  uint32_t row = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const uint32_t v = next_[row + class_of_[static_cast<unsigned char>(line[i])]];
    row = v & ~kOut;
    if ((v & kOut) == 0) continue;
    hit |= hits(line, i, row, hit);
    if (kFirstHit && hit != 0) break;
  }
  return hit;
}

uint64_t PhraseSet::found(std::string_view line) const {
  return scan<false>(line);
}

bool PhraseSet::any(std::string_view line) const {
  return scan<true>(line) != 0;
}

size_t PhraseSet::first(std::string_view line) const {
  const uint64_t hit = found(line);
  return hit == 0 ? npos : static_cast<size_t>(std::countr_zero(hit));
}

}  // namespace gw::text
