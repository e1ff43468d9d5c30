#include "sources/kmsg/log_prefix.h"

#include <array>

#include "sources/smi/text_util.h"

namespace gw::kmsg {

namespace {

bool digit(char c) {
  return c >= '0' && c <= '9';
}
bool lower(char c) {
  return c >= 'a' && c <= 'z';
}

std::string_view ltrim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

int64_t in_year_ms(unsigned month, unsigned day, unsigned h, unsigned mi, unsigned sec) {
  static constexpr std::array<int, 12> kBefore = {0,   31,  59,  90,  120, 151,
                                                  181, 212, 243, 273, 304, 334};
  const int64_t days = kBefore[month - 1] + static_cast<int64_t>(day) - 1;
  return (((days * 24 + h) * 60 + mi) * 60 + sec) * 1000;
}

// n digits at s[p..p+n) or -1.
int num(std::string_view s, size_t p, size_t n) {
  if (p + n > s.size()) return -1;
  int v = 0;
  for (size_t i = p; i < p + n; ++i) {
    if (!digit(s[i])) return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

// "HH:MM[:SS[.frac]]" at s; returns characters used (0 when not a time).
size_t clock_at(std::string_view s, bool need_seconds, unsigned& h, unsigned& mi, unsigned& sec,
                int64_t& ms) {
  const int hh = num(s, 0, 2), mm = num(s, 3, 2);
  if (hh < 0 || mm < 0 || s[2] != ':' || hh > 23 || mm > 59) return 0;
  h = static_cast<unsigned>(hh);
  mi = static_cast<unsigned>(mm);
  sec = 0;
  ms = 0;
  size_t i = 5;
  if (i < s.size() && s[i] == ':') {
    const int ss = num(s, 6, 2);
    if (ss < 0 || ss > 60) return 0;
    sec = static_cast<unsigned>(ss);
    i = 8;
    if (i < s.size() && s[i] == '.') {
      ++i;
      int64_t scale = 100;
      for (; i < s.size() && digit(s[i]); ++i, scale /= 10) ms += (s[i] - '0') * scale;
    }
  } else if (need_seconds) {
    return 0;
  }
  return i;
}

// /dev/kmsg record: "6,1234,5678901,-;message".
bool strip_kmsg_record(std::string_view& s, LogPrefix& p) {
  if (s.empty() || !digit(s.front())) return false;
  const size_t semi = s.find(';');
  if (semi == std::string_view::npos || semi > 64) return false;
  const auto head = s.substr(0, semi);
  const size_t c1 = head.find(',');
  if (c1 == std::string_view::npos) return false;
  const size_t c2 = head.find(',', c1 + 1);
  if (c2 == std::string_view::npos) return false;
  const size_t c3 = head.find(',', c2 + 1);
  const auto usec =
      text::parse_u64(head.substr(c2 + 1, c3 == std::string_view::npos ? head.npos : c3 - c2 - 1));
  if (!usec) return false;
  if (const double up = static_cast<double>(*usec) / 1e6; up <= kMaxUptimeS) {
    p.uptime_s = up;
  } else {
    p.time_refused = true;
  }
  s = s.substr(semi + 1);
  return true;
}

// "<node>: kern: warning: [<RFC 3339>]: " (talosctl dmesg and similar node-log tools).
bool strip_node_log(std::string_view& s, LogPrefix& p) {
  // The node's name is the first word, so ": kern:" can only begin one byte before the first
  // space: looked for there alone (a search of the line ran for every line, up to four times).
  size_t sp = 0;
  while (sp < s.size() && sp <= 81 && s[sp] != ' ') ++sp;
  if (sp < 2 || sp > 81 || s.substr(sp - 1, 7) != ": kern:") return false;
  const size_t k = sp - 1;
  std::string_view r = ltrim(s.substr(k + 7));
  size_t i = 0;
  while (i < r.size() && lower(r[i])) ++i;
  if (i == 0 || i >= r.size() || r[i] != ':') return false;
  r = ltrim(r.substr(i + 1));
  if (!r.empty() && r.front() == '[') {
    size_t used = 0;
    if (auto t = parse_iso_ms(r.substr(1), used); t && 1 + used < r.size() && r[1 + used] == ']') {
      p.time_ms = t;
      r = r.substr(2 + used);
      if (!r.empty() && r.front() == ':') r.remove_prefix(1);
    }
  }
  s = ltrim(r);
  return true;
}

// dmesg --decode: "kern  :warn  : " (facility, level, each padded).
bool strip_decode(std::string_view& s) {
  size_t i = 0;
  for (int part = 0; part < 2; ++part) {
    const size_t b = i;
    while (i < s.size() && lower(s[i])) ++i;
    if (i == b || i - b > 8) return false;
    while (i < s.size() && s[i] == ' ') ++i;
    if (i >= s.size() || s[i] != ':') return false;
    ++i;
  }
  s = ltrim(s.substr(i));
  return true;
}

// "Mar  3 10:00:00[.123456] " (syslog, journalctl short / short-precise; no year). The month
// is the locale's: "août 25 19:38:04" from a French journalctl.
bool strip_syslog_time(std::string_view& s, LogPrefix& p) {
  size_t i = 0;
  const unsigned mon = s.size() < 15 ? 0 : text::month_word(s, i);
  if (mon == 0) return false;
  while (i < s.size() && s[i] == ' ') ++i;
  unsigned day = 0;
  const size_t d0 = i;
  while (i < s.size() && digit(s[i]) && i - d0 < 2)
    day = day * 10 + static_cast<unsigned>(s[i++] - '0');
  if (i == d0 || day < 1 || day > 31 || i >= s.size() || s[i] != ' ') return false;
  unsigned h = 0, mi = 0, sec = 0;
  int64_t ms = 0;
  const size_t used = clock_at(s.substr(i + 1), true, h, mi, sec, ms);
  if (used == 0) return false;
  p.time_in_year_ms = in_year_ms(mon, day, h, mi, sec) + ms;
  s = ltrim(s.substr(i + 1 + used));
  return true;
}

// dmesg -H minute line content "Dec 1 08:14" / "Dec15 08:14".
bool minute_stamp(std::string_view in, LogPrefix& p) {
  // Three letters, then the day with or without a blank ("Dec15 08:14").
  size_t i = 0;
  const unsigned mon = in.size() < 4 ? 0 : text::month_word(std::string(in.substr(0, 3)) + " ", i);
  if (mon == 0) return false;
  while (i < in.size() && in[i] == ' ') ++i;
  unsigned day = 0;
  const size_t d0 = i;
  while (i < in.size() && digit(in[i]) && i - d0 < 2)
    day = day * 10 + static_cast<unsigned>(in[i++] - '0');
  if (i == d0 || day < 1 || day > 31 || i + 1 >= in.size() || in[i] != ' ') return false;
  unsigned h = 0, mi = 0, sec = 0;
  int64_t ms = 0;
  const size_t used = clock_at(in.substr(i + 1), false, h, mi, sec, ms);
  if (used == 0 || i + 1 + used != in.size()) return false;
  p.time_in_year_ms = in_year_ms(mon, day, h, mi, sec) + ms;
  p.minute_line = true;
  return true;
}

// "[ 1234.567890]", "[Sun Feb 23 16:24:18 2025]", "[Dec 1 08:14]", "[  +0.000123]", then an
// optional caller id "[ T1946]".
bool strip_bracket(std::string_view& s, LogPrefix& p) {
  if (s.size() < 3 || s.front() != '[') return false;
  const size_t close = s.find(']');
  if (close == std::string_view::npos || close > 40) return false;
  const auto inner = text::trim(s.substr(1, close - 1));
  if (inner.empty()) return false;
  if (inner.front() == '+' && inner.size() > 1 && digit(inner[1])) {
    const auto d = text::parse_double(inner.substr(1));
    if (!d) return false;
    // "[+1e300]" is a bracket dmesg -H could not have written: the line is read, untimed.
    if (*d <= kMaxDeltaS) {
      p.delta_s = *d;
    } else {
      p.time_refused = true;
    }
  } else if (digit(inner.front())) {
    const auto up = text::parse_double(inner);
    if (!up || inner.find_first_not_of("0123456789.") != std::string_view::npos) return false;
    if (*up <= kMaxUptimeS) {
      p.uptime_s = *up;
    } else {
      p.time_refused = true;
    }
  } else if (auto t = text::parse_ctime_ms(inner)) {
    p.time_ms = *t;
  } else if (!minute_stamp(inner, p)) {
    return false;
  }
  s = ltrim(s.substr(close + 1));
  if (s.size() > 3 && s[0] == '[' && (s[1] == 'T' || s[1] == 'C' || s[1] == ' ')) {
    const size_t c2 = s.find(']');
    if (c2 != std::string_view::npos && c2 < 16) {
      const auto id = text::trim(s.substr(1, c2 - 1));
      if (id.size() > 1 && (id[0] == 'T' || id[0] == 'C') &&
          id.find_first_not_of("0123456789", 1) == std::string_view::npos)
        s = ltrim(s.substr(c2 + 1));
    }
  }
  return true;
}

// "kernel: ", "kernel:[", or "<host> kernel: " after a time.
bool strip_kernel_tag(std::string_view& s, bool after_time) {
  constexpr std::string_view kTag = "kernel:";
  if (text::starts_with(s, kTag)) {
    s = ltrim(s.substr(kTag.size()));
    return true;
  }
  if (!after_time) return false;
  const size_t sp = s.find(' ');
  if (sp == std::string_view::npos || sp == 0 || sp > 64) return false;
  const auto rest = ltrim(s.substr(sp));
  if (!text::starts_with(rest, kTag)) return false;
  s = ltrim(rest.substr(kTag.size()));
  return true;
}

}  // namespace

std::optional<int64_t> parse_iso_ms(std::string_view s, size_t& used) {
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') ||
      s[13] != ':' || s[16] != ':')
    return std::nullopt;
  const int y = num(s, 0, 4), mo = num(s, 5, 2), d = num(s, 8, 2), h = num(s, 11, 2),
            mi = num(s, 14, 2), sec = num(s, 17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
      sec < 0 || sec > 60)
    return std::nullopt;
  size_t i = 19;
  int64_t ms = 0;
  if (i < s.size() && (s[i] == ',' || s[i] == '.')) {
    ++i;
    int64_t scale = 100;
    for (; i < s.size() && digit(s[i]); ++i, scale /= 10) ms += (s[i] - '0') * scale;
  }
  int64_t offset_min = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i + 5 <= s.size() && (s[i] == '+' || s[i] == '-')) {
    const int sign = s[i] == '-' ? -1 : 1;
    const size_t colon = s[i + 3] == ':' ? 1 : 0;
    const int oh = num(s, i + 1, 2), om = num(s, i + 3 + colon, 2);
    if (oh >= 0 && om >= 0) {
      offset_min = sign * (oh * 60 + om);
      i += 5 + colon;
    }
  }
  used = i;
  const int64_t days =
      text::days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return (((days * 24 + h) * 60 + mi - offset_min) * 60 + sec) * 1000 + ms;
}

std::string_view strip_log_prefix(std::string_view line, LogPrefix& p) {
  std::string_view s = ltrim(line);
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
  if (strip_kmsg_record(s, p)) {
    p.recognised = true;
    return ltrim(s);
  }
  // dmesg --raw / syslog priority "<5>".
  if (s.size() > 3 && s[0] == '<' && digit(s[1]) && (s[2] == '>' || (digit(s[2]) && s[3] == '>'))) {
    s = ltrim(s.substr(s[2] == '>' ? 3 : 4));
    p.recognised = true;
  }
  bool timed = false;
  for (int round = 0; round < 4 && !s.empty(); ++round) {
    size_t used = 0;
    if (strip_node_log(s, p)) {
      timed = true;
    } else if (strip_decode(s)) {
      // facility/level only; a time follows
    } else if (auto t = parse_iso_ms(s, used)) {
      p.time_ms = t;
      s = ltrim(s.substr(used));
      timed = true;
    } else if (strip_syslog_time(s, p) || strip_bracket(s, p)) {
      timed = true;
    } else if (!strip_kernel_tag(s, timed)) {
      break;
    } else {
      timed = false;  // a bracket may follow the tag: "kernel: [ 13.18] NVRM: ..."
    }
    p.recognised = true;
  }
  return s;
}

}  // namespace gw::kmsg
