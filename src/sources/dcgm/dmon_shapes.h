#pragma once
// The rows of a long `dcgmi dmon` mostly change nothing: each cell is a number, none above its
// field's largest so far. For the rows of one shape (where each word begins and ends), a bound
// per cell written as such a row would write it tells those rows apart from the others with one
// pass of byte compares, where reading the row takes a number per cell. The bounds are made
// from the largest values and made again when one of them moves.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sources/smi/text_util.h"

namespace gw::dcgm {

// 10^0 .. 10^15: a decimal of at most 15 digits is scaled by these (dmon cells).
inline constexpr int64_t kPow10[] = {1,
                                     10,
                                     100,
                                     1000,
                                     10000,
                                     100000,
                                     1000000,
                                     10000000,
                                     100000000,
                                     1000000000,
                                     10000000000,
                                     100000000000,
                                     1000000000000,
                                     10000000000000,
                                     100000000000000,
                                     1000000000000000};

// What one field's cell of a row is held to: not above the largest so far (its digits `m`,
// `decimals` of them after the point), or exactly "0" (XIDER: a row reporting an Xid is read
// cell by cell), or nothing known (kNone: a shape with such a cell is not usable, unless the
// cell says "N/A").
struct CellBound {
  enum Kind : uint8_t { kNone, kMax, kZero } kind = kNone;
  int64_t m = 0;
  unsigned decimals = 0;
};

// One shape of a GPU's rows and its cells' bounds: the row's bytes up to its '\n', each as
// its maker wrote it but for a field's digits, which are held to the bound. Bit i of a mask:
// byte i of the row (0-63 in the first word, 64-127 in the second).
struct DmonShape {
  text::RowWords words;         // where each word begins and ends
  uint32_t nl = 0;              // where the '\n' is
  uint32_t made_at = 0;         // the owner's count of moved largest values when made
  bool usable = false;          // false: a shape whose rows are read cell by cell
  uint64_t digits[2] = {0, 0};  // a field's digit: compared with `bound` as a digit
  uint64_t exact[2] = {0, 0};   // every other byte up to the '\n': as in `bound`
  uint64_t cells[2] = {0, 0};   // a field's bytes (its digits and its point)
  uint64_t firsts[2] = {0, 0};  // a field's first byte
  uint64_t na_fields = 0;       // bit k: the k-th field's cell is "N/A" (one of the first 64)
  alignas(32) char bound[128] = {};
};

// Makes `s` the shape of the row at p (its '\n' at `nl`, at most 127; its words `w`: "GPU",
// the id, then one per field, `fields[i]` bounding the i-th field's cell). A cell "N/A" is held
// to be "N/A" (a field a GPU does not report says so in every row). Unusable where another
// cell's bound is kNone, it is not digits with at most one point (not first) or holds more than
// 15 digits, an XIDER cell is no "0", or a largest value is below zero; such a shape still
// knows its maker's bytes, so that fit tells a row written as them from another.
void make_shape(const char* p, size_t nl, const text::RowWords& w,
                const std::vector<CellBound>& fields, DmonShape& s);

// How the row at p (128 bytes readable) is held by s: its bytes as s's maker wrote them (its
// entity, blanks, points and '\n'), digits in its fields and none above its bound (kWithin:
// reading it cell by cell would move no largest value and report no Xid); as them but a cell
// above its bound or not digits, or s not usable (kAbove); written otherwise (kOther).
enum class Fit : uint8_t { kWithin, kAbove, kOther };
Fit fit(const DmonShape& s, const char* p);

// fit with 32-byte steps, where GCC or Clang builds for x86-64 (run only where the CPU has
// AVX2: fit_for_this_cpu).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GW_DMON_FIT_AVX2 1
Fit fit_avx2(const DmonShape& s, const char* p);
#else
#define GW_DMON_FIT_AVX2 0
#endif

// What hints at the shape of the row at p (64 bytes readable): where its first 64 bytes hold a
// blank, up to its '\n'. Rows of one shape have one key; a key that two shapes share only costs
// a row read by its words (DmonShapes::slot).
uint64_t row_key(const char* p);

// The shapes of one GPU's rows: those made, two slots for each shape's words, and a hint from a
// row's key to the shape that last held such a row.
struct DmonShapes {
  static constexpr size_t kSlots = 128, kHints = 64;
  std::array<DmonShape, kSlots> at;
  std::array<DmonShape*, kHints> hints{};
  uint32_t moves = 1;  // shapes made before one of the GPU's largest values moved are stale
  // Rows held within bounds, not yet counted in the GPU's readings; of them, those whose k-th
  // field said "N/A" (a row, not a value); the fields whose last text is such a row's "N/A".
  uint64_t uncounted = 0;
  std::array<uint64_t, 64> na_uncounted{};
  uint64_t na_last = 0;

  // The shape a row of `key` last went to, if still current (nullptr: none).
  const DmonShape* hinted(uint64_t key) const {
    const DmonShape* s = hints[hint_of(key)];
    return s != nullptr && s->made_at == moves ? s : nullptr;
  }
  void hint(uint64_t key, DmonShape& s) { hints[hint_of(key)] = &s; }
  // Whether `s` is the current shape of words `w` ('\n' at nl).
  bool holds(const DmonShape& s, const text::RowWords& w, size_t nl) const {
    return s.made_at == moves && s.nl == nl && s.words == w;
  }
  // Where the shape of words `w` ('\n' at nl) is (holds), or is to be made.
  DmonShape& slot(const text::RowWords& w, size_t nl);

 private:
  static size_t hint_of(uint64_t key) { return (key * 0x9e3779b97f4a7c15ull) >> 58; }
};

// The fit this CPU runs fastest, chosen once by a reader.
using FitFn = Fit (*)(const DmonShape&, const char*);
FitFn fit_for_this_cpu();

}  // namespace gw::dcgm
