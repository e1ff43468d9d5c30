// Strings that came from inputs (GPU names, process names, kernel log lines, file names) can
// hold anything: invalid UTF-8, which makes nlohmann::json::dump throw, and terminal control
// sequences, which can rewrite the screen of whoever reads the report. These helpers make such
// strings safe at the points where they leave the program.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace gw {

struct Snapshot;
struct Observation;
struct Finding;

// True when `s` is well-formed UTF-8 (no overlong forms, surrogates or code points > U+10FFFF).
bool valid_utf8(std::string_view s);

// Each maximal invalid UTF-8 subsequence becomes U+FFFD; valid text is returned unchanged.
std::string repair_utf8(std::string_view s);

// For printing to a terminal: removes escape sequences (CSI, OSC, DCS/PM/APC/SOS strings and
// two-byte ESC forms), C0 controls other than tab and newline, DEL and C1 controls (U+0080 to
// U+009F, including the one-byte CSI), and repairs UTF-8. Carriage return is removed too: it
// lets a line overwrite itself.
std::string terminal_safe(std::string_view s);

// nlohmann's dump with invalid UTF-8 replaced by U+FFFD instead of throwing.
std::string dump_json(const nlohmann::json& j, int indent = 2);
std::string dump_json(const nlohmann::ordered_json& j, int indent = 2);

// Applies terminal_safe to every string of the model that an input could have supplied.
void make_terminal_safe(Snapshot& s);
void make_terminal_safe(Observation& o);
void make_terminal_safe(Finding& f);

}  // namespace gw
