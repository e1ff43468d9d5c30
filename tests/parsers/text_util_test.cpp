// The shared text helpers the parsers stand on: newline counting (SIMD with a scalar tail),
// padded-table columns, calendar days.
#include "sources/smi/text_util.h"

#include <gtest/gtest.h>

#include <cctype>
#include <random>
#include <string>
#include <vector>

#include "sources/smi/phrase_set.h"

namespace gw {
namespace {

size_t naive_newlines(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

TEST(TextUtil, CountNewlinesMatchesACharByCharCountAtEveryOffsetAndLength) {
  std::mt19937 rng(7);
  std::string text(10000, 'x');
  // Dense and sparse newlines, and 0xFF bytes that must not count (the SIMD path compares
  // to 0xFF internally).
  for (size_t i = 0; i < text.size(); ++i) {
    const auto r = static_cast<unsigned>(rng() % 100);
    text[i] = r < 30 ? '\n' : r < 35 ? '\xff' : r < 40 ? '\0' : static_cast<char>('a' + r % 26);
  }
  for (size_t off = 0; off < 40; ++off)
    for (size_t len : {size_t{0}, size_t{1}, size_t{7}, size_t{15}, size_t{16}, size_t{17},
                       size_t{31}, size_t{32}, size_t{63}, size_t{64}, size_t{65},
                       size_t{255 * 16 - 1}, size_t{255 * 16}, size_t{255 * 16 + 1},
                       size_t{255 * 32 - 1}, size_t{255 * 32}, size_t{255 * 32 + 1}, size_t{9000}})
      EXPECT_EQ(text::count_newlines(text.data() + off, len),
                naive_newlines(std::string_view(text).substr(off, len)))
          << "offset " << off << " length " << len;
}

TEST(TextUtil, CountNewlinesOfTextThatIsAllNewlinesDoesNotWrap) {
  // 255 steps of newlines fill every byte counter to 255 before the sum (16 bytes a step in
  // SSE2, 32 in AVX2); more must carry over.
  for (size_t len : {size_t{4080}, size_t{4096}, size_t{8160}, size_t{8161}, size_t{100000}}) {
    const std::string text(len, '\n');
    EXPECT_EQ(text::count_newlines(text.data(), text.size()), len);
  }
}

// split_words' 16-byte steps: words of random strings of every length around the step's size
// (words across steps, at the ends, runs of blanks) are those a byte-by-byte split finds.
TEST(TextUtil, SplitWordsAgreesWithAByteByByteSplit) {
  const auto naive = [](std::string_view s, bool any_space) {
    std::vector<std::string_view> out;
    size_t i = 0;
    const auto blank = [&](char c) {
      return c == ' ' || c == '\t' || (any_space && (c == '\r' || c == '\n'));
    };
    while (i < s.size()) {
      while (i < s.size() && blank(s[i])) ++i;
      const size_t b = i;
      while (i < s.size() && !blank(s[i])) ++i;
      if (i > b) out.push_back(s.substr(b, i - b));
    }
    return out;
  };
  std::mt19937 rng(20261207);
  // Blanks as often as not, and words of tens of bytes that run across 16-byte steps.
  const std::string alphabets[] = {"a1 \t\r\n.", "aaaaaaaaaaaaaaaaaaaa1. \t"};
  std::vector<std::string_view> got;
  for (size_t n = 0; n <= 100; ++n) {
    for (int round = 0; round < 80; ++round) {
      const std::string& alphabet = alphabets[round % 2];
      std::string s(n, 'a');
      for (char& c : s) c = alphabet[rng() % alphabet.size()];
      text::split_words(s, got);
      ASSERT_EQ(got, naive(s, false)) << "'" << s << "'";
      text::split_words_any_space(s, got);
      ASSERT_EQ(got, naive(s, true)) << "'" << s << "'";
    }
  }
}

// line_words: the line up to its '\n', trimmed as LineReader and trim leave it, gives the words
// split_words gives; or it declines (no '\n' in 128 bytes, a '\r' ending the last word).
TEST(TextUtil, LineWordsAgreesWithSplitWordsOfTheTrimmedLine) {
  std::mt19937 rng(20261207);
  const std::string alphabets[] = {"G1 \t\r.", "GGGGGGGGGGGGGGGGGG1. \t", "G1 "};
  std::vector<std::string_view> want;
  size_t read = 0;
  for (size_t n = 0; n <= 140; ++n) {
    for (int round = 0; round < 60; ++round) {
      const std::string& alphabet = alphabets[round % 3];
      std::string s(n, 'a');
      for (char& c : s) c = alphabet[rng() % alphabet.size()];
      std::string buf = s + "\n" + std::string(128, 'x');  // readable past the line
      text::RowWords w;
      size_t nl = 0, len = 0;
      const bool ok = text::line_words(buf.data(), w, nl, len);
      if (n >= 128) {
        EXPECT_FALSE(ok) << "'" << s << "'";
        continue;
      }
      const std::string_view line = text::trim(std::string_view(s));
      if (!ok) {  // only where trim dropped a '\r' next to a word
        const std::string_view inner = std::string_view(s).substr(
            0, s.find_last_not_of(" \t") == std::string::npos ? 0 : s.find_last_not_of(" \t") + 1);
        const size_t first = inner.find_first_not_of(" \t");
        EXPECT_TRUE(!inner.empty() && (inner.back() == '\r' || inner[first] == '\r'))
            << "'" << s << "'";
        continue;
      }
      ++read;
      EXPECT_EQ(nl, n);
      EXPECT_EQ(
          std::string_view(buf.data() + (line.empty() ? 0 : line.data() - s.data()),
                           line.empty() ? 0 : len - static_cast<size_t>(line.data() - s.data())),
          line)
          << "'" << s << "'";
      text::split_words(line, want);
      std::vector<std::string_view> got;
      size_t b = 0, e = 0;
      while (w.next(b, e)) got.emplace_back(buf.data() + b, e - b);
      std::vector<std::string> g(got.begin(), got.end()), x(want.begin(), want.end());
      ASSERT_EQ(g, x) << "'" << s << "'";
    }
  }
  EXPECT_GT(read, 5000u);
}

// text::find's 16-byte steps: a needle at every offset of haystacks around the step's size,
// near matches that share only the first or the last byte, and starting points past a match.
TEST(TextUtil, FindAgreesWithStringViewFindAtEveryOffsetAndStart) {
  std::mt19937 rng(20261207);
  const std::string alphabet = "ab :";
  for (size_t n = 0; n <= 70; ++n) {
    for (int round = 0; round < 20; ++round) {
      std::string hay(n, 'a');
      for (char& c : hay) c = alphabet[rng() % alphabet.size()];
      for (size_t m = 1; m <= 6; ++m) {
        std::string needle(m, 'a');
        for (char& c : needle) c = alphabet[rng() % alphabet.size()];
        for (size_t from = 0; from <= n + 1; from += 1 + rng() % 5) {
          const std::string_view h(hay);
          ASSERT_EQ(text::find(h, needle, from), h.find(needle, from))
              << "hay '" << hay << "' needle '" << needle << "' from " << from;
        }
      }
    }
  }
}

TEST(TextUtil, FindSeesAMatchThatEndsOnTheHaystacksLastByte) {
  for (size_t n = 2; n <= 80; ++n) {
    std::string hay(n, 't');
    hay[n - 1] = 'e';  // "tt...te": first and last bytes of "time" everywhere, one "te" end
    EXPECT_EQ(text::find(hay, "time"), std::string_view::npos) << n;
    EXPECT_EQ(text::find(hay, "te"), n - 2) << n;
    hay.replace(n - 2, 2, "me");
    if (n >= 4) hay.replace(n - 4, 4, "time");
    EXPECT_EQ(text::find(hay, "time"), n >= 4 ? n - 4 : std::string_view::npos) << n;
    EXPECT_EQ(text::find(hay, ""), 0u);
    EXPECT_EQ(text::find(hay, "", n), n);
    EXPECT_EQ(text::find(hay, "e", n + 1), std::string_view::npos);
  }
}

// Which phrases a line holds, the slow way: each searched on its own.
uint64_t found_one_by_one(const std::vector<text::Phrase>& phrases, const std::string& line) {
  uint64_t hit = 0;
  const std::string low = text::ascii_lower(line);
  for (size_t i = 0; i < phrases.size() && i < text::PhraseSet::kMaxPhrases; ++i) {
    const std::string want =
        phrases[i].case_blind ? text::ascii_lower(phrases[i].text) : std::string(phrases[i].text);
    if ((phrases[i].case_blind ? low : line).find(want) != std::string::npos)
      hit |= uint64_t{1} << i;
  }
  return hit;
}

TEST(PhraseSet, FindsWhatEachPhraseSearchedAloneFinds) {
  // A small alphabet in both cases: phrases overlap, nest, share prefixes and suffixes.
  std::mt19937 rng(20261207);
  const std::string alphabet = "abAB :";
  for (int round = 0; round < 300; ++round) {
    std::vector<std::string> texts(1 + rng() % 12);
    std::vector<text::Phrase> phrases;
    for (auto& t : texts) {
      t.resize(1 + rng() % 5);
      for (char& c : t) c = alphabet[rng() % alphabet.size()];
    }
    for (const auto& t : texts) phrases.push_back({t, rng() % 2 == 0});
    const text::PhraseSet set(phrases);
    for (int line_round = 0; line_round < 20; ++line_round) {
      std::string line(rng() % 40, 'a');
      for (char& c : line) c = alphabet[rng() % alphabet.size()];
      const uint64_t want = found_one_by_one(phrases, line);
      ASSERT_EQ(set.found(line), want) << "line '" << line << "'";
      ASSERT_EQ(set.first(line),
                want == 0 ? text::PhraseSet::npos : static_cast<size_t>(__builtin_ctzll(want)));
    }
  }
}

TEST(PhraseSet, CaseSensitivePhrasesNeedTheirOwnCaseAndBlindOnesAnyCase) {
  const text::PhraseSet set({{"cudaErrorNoDevice", false}, {"out of memory", true}, {"X", false}});
  EXPECT_EQ(set.found("RuntimeError: cudaErrorNoDevice"), 1u);
  EXPECT_EQ(set.found("runtimeerror: cudaerrornodevice"), 0u);
  EXPECT_EQ(set.found("CUDA OUT OF MEMORY. Tried"), 2u);
  EXPECT_EQ(set.found("x marks"), 0u);
  EXPECT_EQ(set.found("cudaErrorNoDevice: Out Of Memory X"), 7u);
  EXPECT_EQ(set.first(""), text::PhraseSet::npos);
  // More than 64 phrases: the ones past it are never found.
  std::vector<text::Phrase> many;
  std::vector<std::string> texts;
  for (int i = 0; i < 70; ++i) texts.push_back("p" + std::to_string(i) + ";");
  for (const auto& t : texts) many.push_back({t, false});
  const text::PhraseSet big(many);
  EXPECT_EQ(big.first("x p63; y"), 63u);
  EXPECT_EQ(big.first("x p64; y"), text::PhraseSet::npos);
}

TEST(TextUtil, SplitColumnsKeepsSingleSpacesInsideACellWhenTheGapIsTwo) {
  const auto cells = text::split_columns("  aten::mm   512.00 Mb\t10  64.9us", 2);
  ASSERT_EQ(cells.size(), 4U);
  EXPECT_EQ(cells[0], "aten::mm");
  EXPECT_EQ(cells[1], "512.00 Mb");
  EXPECT_EQ(cells[2], "10");
  EXPECT_EQ(cells[3], "64.9us");
  const auto words = text::split_columns("NODE SELECTOR   AGE", 1);
  ASSERT_EQ(words.size(), 3U);
  EXPECT_EQ(words[1], "SELECTOR");
  EXPECT_TRUE(text::split_columns("   ", 2).empty());
}

TEST(TextUtil, MonthWordReadsEnglishAbbreviationsLikeTheirLowerCaseForms) {
  const char* en[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (unsigned m = 0; m < 12; ++m) {
    std::string word = std::string(en[m]) + " 4 10:17:39 host kernel:";
    size_t len = 0;
    EXPECT_EQ(text::month_word(word, len), m + 1) << word;
    EXPECT_EQ(len, 3U);
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(text::month_word(word, len), m + 1) << word;  // the folded table's path
  }
  size_t len = 0;
  EXPECT_EQ(text::month_word("Dez 4 10:17:39", len), 12U);
  EXPECT_EQ(text::month_word("Dex 4 10:17:39", len), 0U);
  EXPECT_EQ(text::month_word("Dec", len), 0U);  // a word with nothing after it is no date
  EXPECT_EQ(text::month_word("Dec\t4 10:17:39", len), 12U);  // a tab after it, not a space
  EXPECT_EQ(len, 3U);
  EXPECT_EQ(text::month_word("Dec ", len), 12U);
  EXPECT_EQ(len, 3U);
  EXPECT_EQ(text::month_word("D c 4 10:17:39", len), 0U);
}

TEST(TextUtil, MonthWordReadsLocalWordsAndTurnsAwayWordsWithOtherSigns) {
  const std::pair<const char*, unsigned> local[] = {
      {"janv.", 1}, {"Févr.", 2}, {"févr", 2},  {"Mär", 3},  {"avril", 4}, {"MAI", 5},  {"juin", 6},
      {"juil.", 7}, {"août", 8},  {"sept.", 9}, {"paź", 10}, {"Dez.", 12}, {"дек", 12}, {"май", 5}};
  for (const auto& [word, m] : local) {
    size_t len = 0;
    EXPECT_EQ(text::month_word(std::string(word) + " 4 10:17:39 host kernel:", len), m) << word;
    EXPECT_EQ(len, std::string_view(word).size()) << word;
  }
  // A word with a sign no month has: a dmesg message, a clock, a tag. None is a month.
  for (const char* word :
       {"NVRM: Xid", "kernel: x", "10:17:39 x", "Dec: 4 10", "ja.n 4 10", "Dec1 08:14", "déc, 4 10",
        "gpu-node-17 kernel: x", "Decembre 4 10", "dec.. 4 10"}) {
    size_t len = 0;
    EXPECT_EQ(text::month_word(word, len), 0U) << word;
  }
}

TEST(TextUtil, DaysFromCivilCountsFromTheEpochAcrossLeapYears) {
  EXPECT_EQ(text::days_from_civil(1970, 1, 1), 0);
  EXPECT_EQ(text::days_from_civil(1969, 12, 31), -1);
  EXPECT_EQ(text::days_from_civil(2000, 2, 29) + 1, text::days_from_civil(2000, 3, 1));
  EXPECT_EQ(text::days_from_civil(1900, 2, 28) + 1, text::days_from_civil(1900, 3, 1));
  EXPECT_EQ(text::days_from_civil(2026, 12, 4), 20791);
}

}  // namespace
}  // namespace gw
