#include "core/toml_guard.h"

#include <algorithm>

namespace gw {
namespace {

bool non_ascii(char c) {
  return static_cast<unsigned char>(c) >= 0x80;
}

// A scan over the text that knows where strings and comments begin and end, as TOML 1.0 and
// toml++ read them: enough to tell "inside a string or comment" from "outside", nothing more.
// Malformed text (an unclosed string) only has to keep the scan from calling valid text
// invalid; toml++ reports the malformation itself.
class Scan {
 public:
  explicit Scan(std::string_view text) : s_(text) {}

  std::optional<TomlRefusal> run() {
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") i_ = 3;  // a UTF-8 byte order mark, read by toml++
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == '#') {
        skip_to_line_end();
      } else if (starts("\"\"\"")) {
        if (auto r = multi_line_basic()) return r;
      } else if (starts("'''")) {
        multi_line_literal();
      } else if (c == '"' || c == '\'') {
        single_line(c);
      } else if (non_ascii(c)) {
        return refusal(i_,
                       "a non-ASCII character outside a string or comment (TOML allows "
                       "them only in quoted strings and comments)");
      } else {
        ++i_;
      }
    }
    return std::nullopt;
  }

 private:
  bool starts(std::string_view p) const { return s_.substr(i_, p.size()) == p; }

  void skip_to_line_end() {
    const size_t nl = s_.find('\n', i_);
    i_ = nl == std::string_view::npos ? s_.size() : nl;
  }

  // After a closing delimiter of three, up to two more of its quote belong to the string.
  void close_delimiter(char q) {
    i_ += 3;
    for (int extra = 0; extra < 2 && i_ < s_.size() && s_[i_] == q; ++extra) ++i_;
  }

  void single_line(char q) {
    for (++i_; i_ < s_.size() && s_[i_] != '\n'; ++i_) {
      if (s_[i_] == q) {
        ++i_;
        return;
      }
      if (q == '"' && s_[i_] == '\\') ++i_;  // the escaped character, whatever it is
    }
  }

  void multi_line_literal() {
    const size_t end = s_.find("'''", i_ + 3);
    if (end == std::string_view::npos) {
      i_ = s_.size();
      return;
    }
    i_ = end;
    close_delimiter('\'');
  }

  std::optional<TomlRefusal> multi_line_basic() {
    for (i_ += 3; i_ < s_.size();) {
      if (starts("\"\"\"")) {
        close_delimiter('"');
        return std::nullopt;
      }
      if (s_[i_] != '\\') {
        ++i_;
        continue;
      }
      // A backslash followed by spaces and a line end trims the whitespace that follows,
      // and toml++ asks of each character there whether it is whitespace.
      size_t j = i_ + 1;
      while (j < s_.size() && (s_[j] == ' ' || s_[j] == '\t')) ++j;
      if (j < s_.size() && (s_[j] == '\n' || s_[j] == '\r')) {
        while (j < s_.size() && (s_[j] == ' ' || s_[j] == '\t' || s_[j] == '\n' || s_[j] == '\r'))
          ++j;
        if (j < s_.size() && non_ascii(s_[j]))
          return refusal(j,
                         "a non-ASCII character first after a line-ending backslash in a "
                         "multi-line string (start the line with an ASCII character, or "
                         "write it as \\uXXXX)");
        i_ = j;
      } else {
        i_ += 2;  // an escape: the backslash and the character it escapes
      }
    }
    return std::nullopt;
  }

  TomlRefusal refusal(size_t at, std::string description) const {
    const std::string_view before = s_.substr(0, at);
    const size_t line_start = before.rfind('\n');
    TomlRefusal r;
    r.line = static_cast<size_t>(std::count(before.begin(), before.end(), '\n')) + 1;
    r.column = at - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
    r.description = std::move(description);
    return r;
  }

  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

std::optional<TomlRefusal> toml_refusal(std::string_view text) {
  return Scan(text).run();
}

}  // namespace gw
