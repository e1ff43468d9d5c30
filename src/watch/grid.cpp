#include "watch/grid.h"

#include <algorithm>

namespace gw::watch {
namespace {

// Bytes of the UTF-8 sequence starting with `lead` (1 for stray continuation bytes).
size_t utf8_len(unsigned char lead) {
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

}  // namespace

Grid::Grid(int rows, int cols)
    : rows_(std::max(rows, 0)),
      cols_(std::max(cols, 0)),
      cells_(static_cast<size_t>(rows_) * static_cast<size_t>(cols_)) {}

int Grid::put(int row, int col, std::string_view text, Tone tone) {
  if (row < 0 || row >= rows_) return col;
  size_t i = 0;
  while (i < text.size() && col < cols_) {
    const size_t n = std::min(utf8_len(static_cast<unsigned char>(text[i])), text.size() - i);
    if (col >= 0) {
      const unsigned char c = static_cast<unsigned char>(text[i]);
      // Control characters never reach the terminal: process names and messages are input.
      Cell& cell = at(row, col);
      cell.glyph =
          (n == 1 && (c < 0x20 || c == 0x7F)) ? std::string("?") : std::string(text.substr(i, n));
      cell.tone = tone;
    }
    i += n;
    ++col;
  }
  return col;
}

std::string Grid::line(int row) const {
  std::string out;
  for (int c = 0; c < cols_; ++c) out += at(row, c).glyph;
  const size_t end = out.find_last_not_of(' ');
  out.erase(end == std::string::npos ? 0 : end + 1);
  return out;
}

std::string Grid::text() const {
  std::string out;
  for (int r = 0; r < rows_; ++r) out += line(r) + "\n";
  return out;
}

}  // namespace gw::watch
