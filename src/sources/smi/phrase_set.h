// Up to 64 phrases looked for in one pass over a line: an Aho-Corasick automaton over the
// line's bytes with A-Z lowered. A reader that asks "which of these phrases does the line hold"
// searched for each in turn: 55 searches a line, a fifth of an application log's CPU (issue 20).
// Case-blind phrases match in any case; a case-sensitive one is confirmed against the line's own
// bytes where its lowered form matched.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace gw::text {

struct Phrase {
  std::string_view text;  // not empty
  bool case_blind = false;
};

class PhraseSet {
 public:
  static constexpr size_t kMaxPhrases = 64;
  // The phrases, by index (at most kMaxPhrases; any beyond are never found).
  explicit PhraseSet(const std::vector<Phrase>& phrases);
  // Texts that share one case rule (a reader's list of phrases).
  PhraseSet(std::span<const std::string_view> texts, bool case_blind);

  // Bit i set when phrase i occurs in `line`.
  uint64_t found(std::string_view line) const;
  // Whether the line holds any of them (it stops at the first found).
  bool any(std::string_view line) const;
  // The lowest index of a phrase the line holds; npos when none.
  size_t first(std::string_view line) const;
  static constexpr size_t npos = static_cast<size_t>(-1);

 private:
  std::vector<Phrase> phrases_;
  uint8_t class_of_[256] = {};  // a byte (A-Z as a-z) -> its class; 0: no phrase holds it
  size_t classes_ = 1;
  // [row + class] -> the next state's row (state * classes_; the root's is 0), with kOut set
  // when phrases end in that state: one load a byte, no multiply, outputs read only on a hit.
  static constexpr uint32_t kOut = uint32_t{1} << 31;
  std::vector<uint32_t> next_;
  std::vector<uint64_t> blind_;  // per state: the case-blind phrases that end here
  std::vector<uint64_t> exact_;  // per state: the case-sensitive phrases that end here
  // The phrases (not in `have`) that end at line[i], where the automaton reached `row`.
  uint64_t hits(std::string_view line, size_t i, uint32_t row, uint64_t have) const;
  // The phrases the line holds; with `kFirstHit`, it stops at the first one found.
  template <bool kFirstHit>
  uint64_t scan(std::string_view line) const;
};

}  // namespace gw::text
