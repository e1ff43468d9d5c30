// Minimal SVG line plots for the HTML report: axes, ticks, grid, labels, legend. No external
// assets; every text is XML-escaped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gw::sim::svg {

struct Point {
  double x = 0, y = 0;
};

struct Series {
  std::string name;
  std::vector<Point> points;  // sorted by x
};

enum class XAxis { kLinearTime, kLogDuration };  // x in seconds either way

struct PlotSpec {
  std::string title;    // for <title> (accessibility)
  std::string x_label;  // unit is appended for time axes
  std::string y_label;
  XAxis x_axis = XAxis::kLinearTime;
  bool step = true;        // draw as a step function (value holds until the next point)
  bool y_percent = false;  // y in 0..1, labelled as %
  int width = 960, height = 360;
};

// Escapes & < > " ' for XML/HTML text and attributes.
std::string escape(std::string_view s);

// "Nice" ticks (1, 2, 5 x 10^k steps) covering [lo, hi], about `target` of them.
std::vector<double> nice_ticks(double lo, double hi, int target);

// Log-axis ticks for durations: 1 s, 10 s, 1 min, 10 min, 1 h, 10 h, 1 d, 10 d, 100 d within
// [lo, hi] (seconds).
std::vector<double> duration_ticks(double lo, double hi);
std::string duration_label(double seconds);  // "1 s", "10 min", "1 h", "10 d"

// At most `max_points` points: the mean of equal-count buckets (first x of each bucket).
std::vector<Point> decimate(const std::vector<Point>& pts, size_t max_points);

// The plot as one <svg> element.
std::string line_plot(const PlotSpec& spec, const std::vector<Series>& series);

// The i-th colour of the palette used for policies (also used by the HTML table legend).
std::string_view color(size_t i);

}  // namespace gw::sim::svg
