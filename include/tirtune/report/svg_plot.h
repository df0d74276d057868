// Small SVG charts for the HTML report: line charts (several series, optional log-x, a legend)
// and horizontal bar charts. The output is meant to be inlined in HTML (no xmlns, no external
// references), every text is escaped, and the same chart always gives the same bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tirtune::report {

struct Point {
  double x = 0;
  double y = 0;
};

/// How a series is drawn.
enum class SeriesStyle : uint8_t {
  kLine,   // straight segments between the points
  kSteps,  // horizontal, then vertical: a value that holds until the next point (best so far)
  kDots,   // a small circle per point, no line
};

struct Series {
  std::string name;
  /// Drawn in this order; points with a non-finite coordinate (or x <= 0 on a log-x axis) are
  /// left out.
  std::vector<Point> points;
  SeriesStyle style = SeriesStyle::kLine;
  /// Mark the last point with a dot and print its y value next to it.
  bool mark_last = false;
};

struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  /// Drawn in order, each in the next color of a fixed palette; named in the legend.
  std::vector<Series> series;
  /// A logarithmic x axis (ticks at 1, 2, 5 × 10^k, or only powers of ten over a wide range).
  bool log_x = false;
  /// Let the x axis start at zero even when every value is larger (ignored on a log-x axis).
  bool x_from_zero = false;
  /// Let the y axis start at zero even when every value is larger (throughput charts).
  bool y_from_zero = true;
  int width = 560;   // pixels
  int height = 320;  // pixels
};

/// The chart as an `<svg>` element. A chart without any drawable point shows its axes and
/// "no data".
std::string RenderLineChart(const LineChart& chart);

struct Bar {
  std::string label;
  double value = 0;
};

struct BarChart {
  std::string title;
  std::string x_label;
  /// One horizontal bar per entry, top to bottom; non-finite values are drawn as "n/a".
  std::vector<Bar> bars;
  /// A vertical line at this value (e.g. 1.0 for ratios); bars at or above it are drawn in one
  /// color, bars below it in another.
  std::optional<double> reference;
  int width = 560;  // pixels; the height follows from the number of bars
};

/// The chart as an `<svg>` element.
std::string RenderBarChart(const BarChart& chart);

/// An axis range with round ends and the ticks between them.
struct NiceScale {
  double lo = 0;
  double hi = 1;
  /// From lo to hi inclusive; each a multiple of 1, 2 or 5 × 10^k (linear), or 1, 2, 5 × 10^k
  /// themselves (log).
  std::vector<double> ticks;
};

/// A linear scale covering [lo, hi] with about `max_ticks` ticks (at most), its ends on ticks.
/// An empty or degenerate range (lo == hi, non-finite) gets a sensible unit range around it.
NiceScale MakeLinearScale(double lo, double hi, int max_ticks = 6);
/// A log scale covering [lo, hi] (both > 0) from a power of ten to a power of ten.
NiceScale MakeLogScale(double lo, double hi);

/// A tick value as text: as few digits as distinguish ticks `step` apart ("0.25", "1000", "1e+06").
std::string FormatTick(double value, double step);

/// `text` with & < > " ' replaced by entities: safe in XML/HTML text and quoted attributes.
std::string EscapeXml(std::string_view text);

}  // namespace tirtune::report
