// A screen as a grid of cells (one UTF-8 glyph and a tone each): what the pure layout writes
// and the ncurses layer (or the plain-text writer) copies out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gw::watch {

enum class Tone { kNormal, kGood, kWarn, kBad, kDim, kTitle, kSelected };

struct Cell {
  std::string glyph = " ";
  Tone tone = Tone::kNormal;
};

class Grid {
 public:
  Grid(int rows, int cols);
  int rows() const { return rows_; }
  int cols() const { return cols_; }
  // Writes `text` from (row, col), one code point per cell, cut at the right edge; returns
  // the column after the last cell written. Out-of-range rows are ignored.
  int put(int row, int col, std::string_view text, Tone tone = Tone::kNormal);
  const Cell& at(int row, int col) const { return cells_[index(row, col)]; }
  Cell& at(int row, int col) { return cells_[index(row, col)]; }
  // One row as text, trailing blanks removed.
  std::string line(int row) const;
  // Every row, newline-terminated: the plain-text form (no TTY, TERM=dumb).
  std::string text() const;

 private:
  size_t index(int row, int col) const {
    return static_cast<size_t>(row) * static_cast<size_t>(cols_) + static_cast<size_t>(col);
  }
  int rows_, cols_;
  std::vector<Cell> cells_;
};

}  // namespace gw::watch
