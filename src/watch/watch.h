// `gpuwarden watch` below the CLI: the refresh loop over a Feed, drawn with ncurses on a
// terminal or printed as plain text (no TTY, TERM=dumb).
#pragma once

#include <iosfwd>

#include "watch/feed.h"
#include "watch/view.h"

namespace gw::watch {

struct RunOptions {
  int refresh_ms = 1000;
  bool color = true;     // false: NO_COLOR, --no-color: no colour and no attributes at all
  bool unicode = true;   // block sparklines (UTF-8 locale)
  bool plain = false;    // no TTY or TERM=dumb: print frames as text, no keys
  int frames = 1;        // plain mode: how many frames to print (one per refresh)
  int plain_cols = 100;  // plain mode: the width of a frame
};

// Returns the exit status: 0 after `q` (or the plain frames), 69 when the first poll failed.
int run_watch(Feed& feed, const RunOptions& options, std::ostream& out, std::ostream& err);

// Rows a plain frame needs to show every GPU with its history line and every active finding.
int plain_rows(const Frame& frame);

}  // namespace gw::watch
