#include "sim/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace gw::sim::svg {
namespace {

// Colour-blind-friendly palette (Okabe-Ito, with black replaced by grey).
constexpr std::array<std::string_view, 8> kPalette = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                                      "#CC79A7", "#56B4E9", "#F0E442", "#777777"};

struct Frame {
  double left = 70, right = 200, top = 20, bottom = 55;  // margins; legend sits on the right
  double w = 0, h = 0;                                   // plot area
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;                 // data range
  bool log_x = false;

  double fx(double x) const {
    if (log_x) {
      const double lx0 = std::log10(x0), lx1 = std::log10(x1);
      return left + (std::log10(std::max(x, x0)) - lx0) / (lx1 - lx0) * w;
    }
    return left + (x - x0) / (x1 - x0) * w;
  }
  double fy(double y) const { return top + h - (y - y0) / (y1 - y0) * h; }
};

// Time axis unit so that tick labels stay short.
struct TimeUnit {
  double seconds;
  std::string_view name;
};
TimeUnit time_unit(double span_s) {
  if (span_s > 3 * 86400.0) return {86400.0, "days"};
  if (span_s > 3 * 3600.0) return {3600.0, "hours"};
  if (span_s > 180.0) return {60.0, "minutes"};
  return {1.0, "seconds"};
}

std::string num(double v) {
  if (std::fabs(v) >= 1e6) return fmt::format("{:.3g}M", v / 1e6);
  if (std::fabs(v) >= 1e4) return fmt::format("{:.3g}k", v / 1e3);
  return fmt::format("{:.6g}", v);
}

void data_range(const std::vector<Series>& series, Frame& f) {
  bool any = false;
  double x0 = 0, x1 = 0, y1 = 0;
  for (const Series& s : series)
    for (const Point& p : s.points) {
      if (f.log_x && p.x <= 0) continue;
      x0 = any ? std::min(x0, p.x) : p.x;
      x1 = any ? std::max(x1, p.x) : p.x;
      y1 = any ? std::max(y1, p.y) : p.y;
      any = true;
    }
  if (!any) {
    x0 = f.log_x ? 1 : 0;
    x1 = x0 + 1;
  }
  if (x1 <= x0) x1 = f.log_x ? x0 * 10 : x0 + 1;
  f.x0 = x0;
  f.x1 = x1;
  f.y1 = y1 > 0 ? y1 * 1.05 : 1;  // headroom so the highest line does not touch the frame
}

void axes(const PlotSpec& spec, const Frame& f, std::string& o) {
  // Grid and ticks.
  if (spec.x_axis == XAxis::kLogDuration) {
    for (double t : duration_ticks(f.x0, f.x1)) {
      const double x = f.fx(t);
      o +=
          fmt::format(R"(<line class="grid" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}"/>)",
                      x, f.top, f.top + f.h);
      o += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)",
                       x, f.top + f.h + 16, escape(duration_label(t)));
    }
  } else {
    const TimeUnit u = time_unit(f.x1 - f.x0);
    for (double t : nice_ticks(f.x0 / u.seconds, f.x1 / u.seconds, 8)) {
      const double x = f.fx(t * u.seconds);
      o +=
          fmt::format(R"(<line class="grid" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}"/>)",
                      x, f.top, f.top + f.h);
      o += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)",
                       x, f.top + f.h + 16, num(t));
    }
  }
  for (double v : nice_ticks(f.y0, f.y1, 5)) {
    const double y = f.fy(v);
    o += fmt::format(R"(<line class="grid" x1="{0:.1f}" y1="{2:.1f}" x2="{1:.1f}" y2="{2:.1f}"/>)",
                     f.left, f.left + f.w, y);
    o += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)",
                     f.left - 6, y + 4, spec.y_percent ? num(v * 100) + "%" : num(v));
  }
  // Axis lines and labels.
  o += fmt::format(R"(<path class="axis" d="M{:.1f},{:.1f}V{:.1f}H{:.1f}"/>)", f.left, f.top,
                   f.top + f.h, f.left + f.w);
  std::string xl = spec.x_label;
  if (spec.x_axis == XAxis::kLinearTime) xl += fmt::format(" ({})", time_unit(f.x1 - f.x0).name);
  if (spec.x_axis == XAxis::kLogDuration) xl += " (log scale)";
  o += fmt::format(R"(<text class="label" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)",
                   f.left + f.w / 2, f.top + f.h + 40, escape(xl));
  o += fmt::format(
      R"svg(<text class="label" transform="translate(16,{:.1f}) rotate(-90)" text-anchor="middle">{}</text>)svg",
      f.top + f.h / 2, escape(spec.y_label));
}

std::string path_of(const Series& s, const Frame& f, bool step) {
  std::string d;
  bool first = true;
  double last_y = 0;
  for (const Point& p : s.points) {
    if (f.log_x && p.x <= 0) continue;
    const double x = f.fx(p.x), y = f.fy(p.y);
    if (first)
      d += fmt::format("M{:.1f},{:.1f}", x, y);
    else if (step)
      d += fmt::format("H{:.1f}V{:.1f}", x, y);
    else
      d += fmt::format("L{:.1f},{:.1f}", x, y);
    first = false;
    last_y = y;
  }
  if (step && !first) d += fmt::format("H{:.1f}V{:.1f}", f.left + f.w, last_y);
  return d;
}

// Legend names longer than the right margin holds are cut (at a UTF-8 character boundary)
// and end in an ellipsis; the full name stays in a <title> tooltip.
std::string short_name(const std::string& s) {
  constexpr size_t kMax = 22;
  if (s.size() <= kMax) return s;
  size_t cut = kMax - 1;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return s.substr(0, cut) + "\u2026";
}

void legend(const std::vector<Series>& series, const Frame& f, std::string& o) {
  const double x = f.left + f.w + 16;
  for (size_t i = 0; i < series.size(); ++i) {
    const double y = f.top + 10 + 20.0 * static_cast<double>(i);
    o += fmt::format(
        R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="3"/>)",
        x, y, x + 22, y, color(i));
    o += fmt::format(R"(<text class="legend" x="{:.1f}" y="{:.1f}"><title>{}</title>{}</text>)",
                     x + 28, y + 4, escape(series[i].name), escape(short_name(series[i].name)));
  }
}

}  // namespace

std::string escape(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo) || target < 1) return {lo};
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) {
      step = m * mag;
      break;
    }
  std::vector<double> out;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
    out.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  return out;
}

std::vector<double> duration_ticks(double lo, double hi) {
  static constexpr std::array<double, 11> kTicks = {
      1, 10, 60, 600, 3600, 36000, 86400, 864000, 8640000, 86400000, 864000000};
  std::vector<double> out;
  for (double t : kTicks)
    if (t >= lo * 0.999 && t <= hi * 1.001) out.push_back(t);
  return out;
}

std::string duration_label(double s) {
  if (s >= 86400) return fmt::format("{:g} d", s / 86400);
  if (s >= 3600) return fmt::format("{:g} h", s / 3600);
  if (s >= 60) return fmt::format("{:g} min", s / 60);
  return fmt::format("{:g} s", s);
}

std::vector<Point> decimate(const std::vector<Point>& pts, size_t max_points) {
  if (max_points == 0 || pts.size() <= max_points) return pts;
  std::vector<Point> out;
  out.reserve(max_points);
  const size_t per = (pts.size() + max_points - 1) / max_points;
  for (size_t i = 0; i < pts.size(); i += per) {
    const size_t end = std::min(pts.size(), i + per);
    double sum = 0;
    for (size_t k = i; k < end; ++k) sum += pts[k].y;
    out.push_back({pts[i].x, sum / static_cast<double>(end - i)});
  }
  return out;
}

std::string_view color(size_t i) {
  return kPalette[i % kPalette.size()];
}

std::string line_plot(const PlotSpec& spec, const std::vector<Series>& series) {
  Frame f;
  f.log_x = spec.x_axis == XAxis::kLogDuration;
  f.w = spec.width - f.left - f.right;
  f.h = spec.height - f.top - f.bottom;
  data_range(series, f);
  if (spec.y_percent) f.y1 = 1.0;
  std::string o = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {0} {1}" width="{0}" height="{1}" role="img"><title>{2}</title>)",
      spec.width, spec.height, escape(spec.title));
  axes(spec, f, o);
  for (size_t i = 0; i < series.size(); ++i)
    o += fmt::format(R"(<path class="series" d="{}" stroke="{}"/>)",
                     path_of(series[i], f, spec.step), color(i));
  legend(series, f, o);
  o += "</svg>";
  return o;
}

}  // namespace gw::sim::svg
