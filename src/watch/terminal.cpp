// The thin I/O layer: ncurses for the screen and the keys, everything else is view.cpp and
// layout.cpp. Redraws only when a frame arrives, a key is pressed or the terminal resized.
#include <curses.h>

#include <algorithm>
#include <chrono>
#include <clocale>
#include <ostream>
#include <thread>

#include "watch/watch.h"

namespace gw::watch {
namespace {

using Clock = std::chrono::steady_clock;

void start_colors() {
  start_color();
  use_default_colors();
  init_pair(1, COLOR_GREEN, -1);
  init_pair(2, COLOR_YELLOW, -1);
  init_pair(3, COLOR_RED, -1);
  init_pair(4, COLOR_CYAN, -1);
}

attr_t tone_attr(Tone t, bool color) {
  if (!color) return A_NORMAL;
  switch (t) {
    case Tone::kGood:
      return COLOR_PAIR(1);
    case Tone::kWarn:
      return COLOR_PAIR(2) | A_BOLD;
    case Tone::kBad:
      return COLOR_PAIR(3) | A_BOLD;
    case Tone::kDim:
      return A_DIM;
    case Tone::kTitle:
      return COLOR_PAIR(4) | A_BOLD;
    case Tone::kSelected:
      return A_REVERSE;
    case Tone::kNormal:
      break;
  }
  return A_NORMAL;
}

void draw(const Grid& g, bool color) {
  erase();
  for (int r = 0; r < g.rows(); ++r)
    for (int c = 0; c < g.cols(); ++c) {
      const Cell& cell = g.at(r, c);
      if (cell.glyph == " " && cell.tone == Tone::kNormal) continue;
      const attr_t a = tone_attr(cell.tone, color);
      if (a != A_NORMAL) attron(a);
      mvaddstr(r, c, cell.glyph.c_str());
      if (a != A_NORMAL) attroff(a);
    }
  refresh();
}

struct Screen {
  explicit Screen(bool color) {
    std::setlocale(LC_ALL, "");
    set_escdelay(25);
    initscr();
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    if (color && has_colors()) start_colors();
  }
  ~Screen() { endwin(); }
  Screen(const Screen&) = delete;
  Screen& operator=(const Screen&) = delete;
};

int run_plain(Feed& feed, const RunOptions& o, std::ostream& out, std::ostream& err) {
  UiState ui;
  for (int k = 0; k < o.frames; ++k) {
    if (k > 0) std::this_thread::sleep_for(std::chrono::milliseconds(o.refresh_ms));
    auto f = feed.poll({ui.span_ms(), 0, std::clamp((o.plain_cols - 69) / 2, 8, 30)});
    if (!f) {
      err << "gpuwarden watch: " << f.error().to_string() << " [" << f.error().code << "]\n";
      return 69;
    }
    if (k > 0) out << "\n";
    out << render(*f, ui, plain_rows(*f), o.plain_cols, {o.unicode}).text() << std::flush;
  }
  return 0;
}

}  // namespace

int plain_rows(const Frame& frame) {
  int active = 0;
  for (const WatchFinding& w : frame.findings) active += w.active ? 1 : 0;
  return 3 + 2 * static_cast<int>(frame.snapshot.gpus.size()) + 2 + active + 1;
}

int run_watch(Feed& feed, const RunOptions& o, std::ostream& out, std::ostream& err) {
  if (o.plain) return run_plain(feed, o, out, err);
  auto first = feed.poll({});
  if (!first) {
    err << "gpuwarden watch: " << first.error().to_string() << " [" << first.error().code << "]\n";
    return 69;
  }
  Frame frame = std::move(*first);
  UiState ui;
  Screen screen(o.color);
  const bool color = o.color && has_colors();
  auto next_poll = Clock::now() + std::chrono::milliseconds(o.refresh_ms);
  bool dirty = true, refetch = false;
  timeout(100);
  while (!ui.quit) {
    if ((!ui.paused && Clock::now() >= next_poll) || refetch) {
      auto f = feed.poll({ui.span_ms(), ui.back_ms, std::clamp((COLS - 69) / 2, 8, 30)});
      if (f)
        frame = std::move(*f);
      else
        frame.error = f.error().message;
      next_poll = Clock::now() + std::chrono::milliseconds(o.refresh_ms);
      dirty = true;
      refetch = false;
    }
    if (dirty) draw(render(frame, ui, LINES, COLS, {o.unicode}), color);
    dirty = false;
    const int ch = getch();
    if (ch == ERR) continue;
    dirty = true;
    if (ch == KEY_RESIZE) continue;
    refetch = handle_key(ui, ch == KEY_ENTER ? kKeyEnter : ch, frame.snapshot.gpus.size());
  }
  return 0;
}

}  // namespace gw::watch
