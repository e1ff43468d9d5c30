// The bounds a `dcgmi dmon` row of a known shape is held to (DmonShape, issue 20): a row is
// within them exactly when reading it cell by cell would move no largest value and report no
// Xid. Checked against that reading, written out here, on random rows of random shapes.
#include "sources/dcgm/dmon_shapes.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace gw::dcgm {
namespace {

__extension__ typedef __int128 Wide;  // GCC's and Clang's; -Wpedantic allows it so

unsigned draw(std::mt19937& rng) {
  return static_cast<unsigned>(rng());
}

Wide pow10(size_t n) {
  Wide x = 1;
  while (n-- > 0) x *= 10;
  return x;
}

// One field of the shape: its bound, and how its maker's cell is written.
struct Field {
  CellBound bound;
  size_t width = 1;
  size_t point = 0;  // where the point is, 0: none (a point never comes first)
  bool na = false;   // the maker's cell is "N/A"
};

// What reading the cell by cell says: a plain decimal with the point where the maker's was,
// not above the bound; "0" for XIDER.
bool cell_within(const std::string& cell, const Field& f) {
  if (f.bound.kind == CellBound::kZero) return cell == "0";
  Wide v = 0;
  size_t decimals = 0;
  for (size_t i = 0; i < cell.size(); ++i) {
    if (f.point != 0 && i == f.point) {
      if (cell[i] != '.') return false;
      decimals = cell.size() - 1 - i;
      continue;
    }
    if (cell[i] < '0' || cell[i] > '9') return false;
    v = v * 10 + (cell[i] - '0');
  }
  return v * pow10(f.bound.decimals) <= Wide{f.bound.m} * pow10(decimals);
}

std::string random_cell(const Field& f, std::mt19937& rng) {
  if (f.na) {
    const char* const other[] = {"N/S", "N/a", "1.5", "123", "N/A"};
    return draw(rng) % 4 == 0 ? other[draw(rng) % std::size(other)] : "N/A";
  }
  if (f.bound.kind == CellBound::kZero)
    return draw(rng) % 4 == 0 ? std::to_string(draw(rng) % 10) : "0";
  std::string c;
  for (size_t i = 0; i < f.width; ++i)
    c += f.point != 0 && i == f.point ? '.' : static_cast<char>('0' + draw(rng) % 10);
  return c;
}

// What reading the row cell by cell says, for a row of the maker's layout (`cells`; a wrong
// byte anywhere else is another shape): kWithin where no cell moves a largest value.
// Each way this CPU can run fit: 16 bytes a step, and 32 where it has AVX2.
std::vector<FitFn> fits() {
  std::vector<FitFn> out = {fit};
#if GW_DMON_FIT_AVX2
  if (__builtin_cpu_supports("avx2")) out.push_back(fit_avx2);
#endif
  EXPECT_EQ(fit_for_this_cpu(), out.back());
  return out;
}

Fit reference(const std::vector<std::string>& cells, const std::vector<Field>& fields) {
  for (size_t k = 0; k < fields.size(); ++k) {
    if (fields[k].na) {
      if (cells[k] != "N/A") return Fit::kOther;
      continue;
    }
    if (fields[k].bound.kind == CellBound::kZero && cells[k] != "0") return Fit::kOther;
    if (fields[k].point != 0 && cells[k][fields[k].point] != '.') return Fit::kOther;
  }
  for (size_t k = 0; k < fields.size(); ++k)
    if (!fields[k].na && !cell_within(cells[k], fields[k])) return Fit::kAbove;
  return Fit::kWithin;
}

TEST(DmonShapes, WithinBoundsExactlyWhereNoCellIsAboveItsLargest) {
  const char wrong[] = {'.', '-', '/', ':', 'a', '\r', '\x80', '\xff', '0', '9', 'G', ' ', '\n'};
  std::mt19937 rng(20261208);
  std::map<Fit, size_t> seen;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<Field> fields(1 + draw(rng) % 7);  // rows of up to 110 bytes
    for (Field& f : fields) {
      if (draw(rng) % 8 == 0) {  // whatever its bound says, or none
        f.na = true;
        f.width = 3;
        f.bound.kind = draw(rng) % 2 == 0 ? CellBound::kNone : CellBound::kZero;
        continue;
      }
      if (draw(rng) % 5 == 0) {
        f.bound.kind = CellBound::kZero;
        continue;
      }
      f.width = 1 + draw(rng) % 9;
      f.point = f.width > 1 && draw(rng) % 2 == 0 ? 1 + draw(rng) % (f.width - 1) : 0;
      f.bound.kind = CellBound::kMax;
      f.bound.decimals = static_cast<unsigned>(draw(rng) % 5);
      // Near a cell's own magnitude most of the time, so that the compare is decided late.
      const size_t digits = f.width - (f.point != 0 ? 1 : 0);
      const size_t decimals = f.point != 0 ? f.width - 1 - f.point : 0;
      const int64_t scale = static_cast<int64_t>(pow10(f.bound.decimals)) /
                            std::max<int64_t>(1, static_cast<int64_t>(pow10(decimals)));
      const auto top = static_cast<int64_t>(pow10(digits));
      f.bound.m = draw(rng) % 3 == 0
                      ? static_cast<int64_t>(draw(rng) % 1000000)
                      : (static_cast<int64_t>(rng()) % top) * std::max<int64_t>(scale, 1);
    }
    const std::string gaps[] = {"   ", " \t ", "      "};
    const std::string gap = gaps[draw(rng) % std::size(gaps)];
    const auto row_text = [&gap](const std::vector<std::string>& cells) {
      std::string r = "GPU 7";
      for (const std::string& c : cells) r += gap + c;
      return r;
    };
    const auto padded = [](const std::string& r) { return r + "\n" + std::string(140, ' '); };
    std::vector<std::string> made;
    for (const Field& f : fields)
      made.push_back(f.na ? "N/A" : f.bound.kind == CellBound::kZero ? "0" : random_cell(f, rng));
    const std::string maker = padded(row_text(made));
    text::RowWords w;
    size_t nl = 0, len = 0;
    ASSERT_TRUE(text::line_words(maker.data(), w, nl, len));
    std::vector<CellBound> bounds;
    for (const Field& f : fields) bounds.push_back(f.bound);
    DmonShape s;
    make_shape(maker.data(), nl, w, bounds, s);
    ASSERT_TRUE(s.usable) << row_text(made);
    for (int r = 0; r < 60; ++r) {
      std::vector<std::string> cells;
      for (const Field& f : fields) cells.push_back(random_cell(f, rng));
      const unsigned odd = draw(rng) % 8;
      if (odd == 0) {  // one byte of a cell written wrong
        const size_t k = draw(rng) % cells.size();
        cells[k][draw(rng) % cells[k].size()] = wrong[draw(rng) % std::size(wrong)];
      }
      std::string row = row_text(cells);
      Fit want = reference(cells, fields);
      if (odd == 1) {  // the entity, a blank or the end written otherwise: another shape
        const size_t at = std::string("GPU 7").size() + gap.size() - 1;
        const std::string other[] = {"GPU 8", "GPU 70", "GPUS7", "gpu 7", " GPU 7"};
        row = draw(rng) % 2 == 0   ? other[draw(rng) % std::size(other)] + row.substr(5)
              : draw(rng) % 2 == 0 ? row.substr(0, at) + "\t" + row.substr(at + 1)
                                   : row + (draw(rng) % 2 == 0 ? " " : "\r");
        want = Fit::kOther;
      }
      const std::string buf = padded(row);
      for (const FitFn f : fits())
        EXPECT_EQ(static_cast<int>(f(s, buf.data())), static_cast<int>(want))
            << row << " shape of " << row_text(made);
      ++seen[want];
    }
  }
  // Each answer is common: the bounds are near the cells.
  const size_t rows = 400 * 60;
  EXPECT_GT(seen[Fit::kWithin], rows / 10);
  EXPECT_GT(seen[Fit::kAbove], rows / 5);
  EXPECT_GT(seen[Fit::kOther], rows / 20);
}

// A shape that cannot be held to bounds holds no row, not even its maker's, which is read cell
// by cell (kAbove); a usable one holds its maker's row.
TEST(DmonShapes, ShapesThatCannotBeHeldToBoundsAreNotUsable) {
  const auto usable = [](const std::string& row, const std::vector<CellBound>& bounds) {
    const std::string buf = row + "\n" + std::string(140, ' ');
    text::RowWords w;
    size_t nl = 0, len = 0;
    EXPECT_TRUE(text::line_words(buf.data(), w, nl, len));
    DmonShape s;
    make_shape(buf.data(), nl, w, bounds, s);
    for (const FitFn f : fits())
      EXPECT_EQ(static_cast<int>(f(s, buf.data())),
                static_cast<int>(s.usable ? Fit::kWithin : Fit::kAbove))
          << row;
    return s.usable;
  };
  const CellBound max{CellBound::kMax, 650, 1}, zero{CellBound::kZero, 0, 0};
  EXPECT_TRUE(usable("GPU 0  12.5  0", {max, zero}));
  EXPECT_FALSE(usable("GPU 0  12.5  10", {max, zero})) << "an XIDER cell of two bytes";
  EXPECT_FALSE(usable("GPU 0  12.5", {max, zero})) << "a field with no cell";
  EXPECT_FALSE(usable("GPU 0  12.5  0  7", {max, zero})) << "a word past the fields";
  EXPECT_TRUE(usable("GPU 0  N/A  0", {max, zero})) << "held to say N/A again";
  EXPECT_TRUE(usable("GPU 0  N/A  N/A", {CellBound{}, CellBound{}})) << "N/A needs no bound";
  EXPECT_FALSE(usable("GPU 0  N/S  0", {max, zero})) << "no other text";
  EXPECT_FALSE(usable("GPU 0  .5  0", {max, zero})) << "a point first is no number";
  EXPECT_FALSE(usable("GPU 0  1.2.3  0", {max, zero}));
  EXPECT_FALSE(usable("GPU 0  -1.5  0", {max, zero}));
  EXPECT_FALSE(usable("GPU 0  1234567890123456  0", {max, zero})) << "16 digits: a double";
  EXPECT_TRUE(
      usable("GPU 0  123456789012345  0", {CellBound{CellBound::kMax, 999999999999999, 0}, zero}));
  EXPECT_FALSE(usable("GPU 0  12.5  7", {max, zero})) << "an Xid: read cell by cell";
  EXPECT_FALSE(usable("GPU 0  12.5  0", {CellBound{CellBound::kMax, -3, 0}, zero}));
  EXPECT_FALSE(usable("GPU 0  12.5  0", {CellBound{}, zero})) << "no largest yet";
}

}  // namespace
}  // namespace gw::dcgm
