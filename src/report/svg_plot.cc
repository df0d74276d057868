// Line and bar charts as SVG text. Layout is computed from estimated text widths (no font
// metrics), so the output depends only on the input.
#include "tirtune/report/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "format_numbers.h"

namespace tirtune::report {
namespace {

constexpr const char* kPalette[] = {"#1f6fb4", "#e07b1a", "#2a9d4b",
                                    "#c0392b", "#7b4fb0", "#6b6b6b"};
constexpr const char* kAtOrAboveColor = "#2a9d4b";
constexpr const char* kBelowColor = "#e07b1a";
constexpr const char* kGridColor = "#e3e3e3";
constexpr const char* kAxisColor = "#444";
constexpr double kCharWidth = 6.6;  // average width of a 12px sans-serif character
constexpr double kTitleHeight = 26;
constexpr double kLegendRowHeight = 18;

const char* Color(size_t i) { return kPalette[i % std::size(kPalette)]; }

template <typename... Args>
void Append(std::string& out, fmt::format_string<Args...> f, Args&&... args) {
  fmt::format_to(std::back_inserter(out), f, std::forward<Args>(args)...);
}

/// A coordinate with one decimal; never "-0.0".
std::string Coord(double v) {
  std::string s = fmt::format("{:.1f}", v);
  return s == "-0.0" ? "0.0" : s;
}

/// Characters, not bytes, of UTF-8 text.
size_t TextLength(std::string_view text) {
  return std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; });
}

double TextWidth(std::string_view text) {
  return static_cast<double>(TextLength(text)) * kCharWidth;
}

/// `text` cut to at most `max_chars` characters, with an ellipsis when cut (UTF-8 aware).
std::string Truncate(std::string_view text, size_t max_chars) {
  if (TextLength(text) <= max_chars) return std::string(text);
  if (max_chars == 0) return "";
  size_t chars = 0, i = 0;
  for (; i < text.size(); ++i) {
    if ((text[i] & 0xC0) != 0x80 && ++chars == max_chars) break;
  }
  return std::string(text.substr(0, i)) + "\u2026";
}

/// Maps data values to pixels along one axis.
struct Axis {
  NiceScale scale;
  bool log = false;
  double from = 0;  // pixel of scale.lo
  double to = 1;    // pixel of scale.hi

  double Map(double v) const {
    double t =
        log ? (std::log10(v) - std::log10(scale.lo)) / (std::log10(scale.hi) - std::log10(scale.lo))
            : (v - scale.lo) / (scale.hi - scale.lo);
    return from + t * (to - from);
  }
  /// The spacing used to format the tick `i`.
  double StepAt(size_t i) const {
    if (log) return scale.ticks[i];
    return scale.ticks.size() > 1 ? scale.ticks[1] - scale.ticks[0] : 1;
  }
};

void OpenSvg(std::string& out, double width, double height, const std::string& title) {
  Append(out,
         "<svg class=\"chart\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" role=\"img\" "
         "aria-label=\"{2}\" font-family=\"sans-serif\" font-size=\"12\">\n",
         Coord(width), Coord(height), EscapeXml(title));
  Append(out, "<title>{}</title>\n", EscapeXml(title));
  Append(out, "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#fff\"/>\n", Coord(width),
         Coord(height));
  if (!title.empty()) {
    Append(out, "<text x=\"8\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
           EscapeXml(title));
  }
}

bool Drawable(const Point& p, bool log_x) {
  return std::isfinite(p.x) && std::isfinite(p.y) && (!log_x || p.x > 0);
}

/// One legend entry per named series, wrapped into rows that fit `width`; returns the rows used.
int DrawLegend(std::string& out, const LineChart& chart, double left, double top, double width) {
  double x = left, y = top;
  int rows = 0;
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const Series& s = chart.series[i];
    if (s.name.empty()) continue;
    double item = 18 + TextWidth(s.name) + 16;
    if (rows == 0) {
      rows = 1;
    } else if (x + item > left + width && x > left) {
      x = left;
      y += kLegendRowHeight;
      ++rows;
    }
    if (s.style == SeriesStyle::kDots) {
      Append(out, "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"/>\n", Coord(x + 7), Coord(y - 4),
             Color(i));
    } else {
      Append(out,
             "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"/>\n",
             Coord(x), Coord(y - 4), Coord(x + 14), Coord(y - 4), Color(i));
    }
    Append(out, "<text x=\"{}\" y=\"{}\">{}</text>\n", Coord(x + 18), Coord(y), EscapeXml(s.name));
    x += item;
  }
  return rows;
}

int CountLegendRows(const LineChart& chart, double width) {
  std::string scratch;
  return DrawLegend(scratch, chart, 0, 0, width);
}

void DrawSeries(std::string& out, const Series& s, const char* color, const Axis& x, const Axis& y,
                bool log_x) {
  std::vector<std::pair<double, double>> px;  // pixel coordinates of the drawable points
  for (const Point& p : s.points) {
    if (Drawable(p, log_x)) px.emplace_back(x.Map(p.x), y.Map(p.y));
  }
  if (px.empty()) return;
  if (s.style == SeriesStyle::kDots) {
    for (const auto& [cx, cy] : px) {
      Append(out, "<circle cx=\"{}\" cy=\"{}\" r=\"2.5\" fill=\"{}\" fill-opacity=\"0.45\"/>\n",
             Coord(cx), Coord(cy), color);
    }
  } else if (px.size() == 1) {
    Append(out, "<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"/>\n", Coord(px[0].first),
           Coord(px[0].second), color);
  } else {
    std::string points = Coord(px[0].first) + "," + Coord(px[0].second);
    for (size_t i = 1; i < px.size(); ++i) {
      if (s.style == SeriesStyle::kSteps) {
        Append(points, " {},{}", Coord(px[i].first), Coord(px[i - 1].second));
      }
      Append(points, " {},{}", Coord(px[i].first), Coord(px[i].second));
    }
    Append(out,
           "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" stroke-linejoin=\"round\" "
           "points=\"{}\"/>\n",
           color, points);
  }
}

/// A dot on the last drawable point and its y value beside it, kept inside the plot area.
void MarkLast(std::string& out, const Series& s, const char* color, const Axis& x, const Axis& y,
              bool log_x) {
  auto last = std::find_if(s.points.rbegin(), s.points.rend(),
                           [&](const Point& p) { return Drawable(p, log_x); });
  if (last == s.points.rend()) return;
  double cx = x.Map(last->x), cy = y.Map(last->y);
  std::string label = FormatQuantity(last->y);
  bool right_side = cx - 8 - TextWidth(label) < x.from;
  double ty = cy - 8 - 12 < y.to ? cy + 18 : cy - 8;
  Append(out, "<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\" stroke=\"#fff\"/>\n", Coord(cx),
         Coord(cy), color);
  Append(out,
         "<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" stroke=\"#fff\" stroke-width=\"3\" "
         "paint-order=\"stroke\" font-weight=\"bold\" fill=\"{}\">{}</text>\n",
         Coord(right_side ? cx + 8 : cx - 8), Coord(ty), right_side ? "start" : "end", color,
         EscapeXml(label));
}

}  // namespace

NiceScale MakeLinearScale(double lo, double hi, int max_ticks) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || !std::isfinite(hi - lo)) {
    lo = 0;
    hi = 1;
  }
  if (lo > hi) std::swap(lo, hi);
  double magnitude = std::max(std::fabs(lo), std::fabs(hi));
  if (!(hi - lo > 1e-9 * magnitude) || hi - lo < 1e-300) {
    // One value (or none): a range around it that still shows it.
    double pad = magnitude > 0 ? magnitude * 0.1 : 1;
    lo = lo == 0 ? 0 : lo - pad;
    hi = hi + pad;
  }
  int intervals = std::max(max_ticks, 2) - 1;
  double step = 0;
  int64_t first = 0, last = 0;
  // The smallest 1, 2, 5 × 10^k whose round range needs at most `intervals` steps.
  for (int k = static_cast<int>(std::floor(std::log10((hi - lo) / intervals))); step == 0; ++k) {
    for (double m : {1.0, 2.0, 5.0}) {
      double s = m * std::pow(10.0, k);
      first = static_cast<int64_t>(std::floor(lo / s + 1e-9));
      last = static_cast<int64_t>(std::ceil(hi / s - 1e-9));
      if (last - first <= intervals) {
        step = s;
        break;
      }
    }
  }
  if (last == first) ++last;
  NiceScale scale;
  for (int64_t i = first; i <= last; ++i) {
    double v = static_cast<double>(i) * step;
    scale.ticks.push_back(v == 0 ? 0 : v);  // no -0
  }
  scale.lo = scale.ticks.front();
  scale.hi = scale.ticks.back();
  return scale;
}

NiceScale MakeLogScale(double lo, double hi) {
  if (!(lo > 0) || !std::isfinite(lo)) lo = 1;
  if (!(hi >= lo) || !std::isfinite(hi)) hi = lo;
  int first = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  int last = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  if (last <= first) last = first + 1;
  NiceScale scale;
  scale.lo = std::pow(10.0, first);
  scale.hi = std::pow(10.0, last);
  // Over two decades or less, 2 and 5 help reading; over more they only crowd the axis.
  bool fine = last - first <= 2;
  for (int k = first; k <= last; ++k) {
    double decade = std::pow(10.0, k);
    scale.ticks.push_back(decade);
    if (fine && k < last) {
      scale.ticks.push_back(2 * decade);
      scale.ticks.push_back(5 * decade);
    }
  }
  return scale;
}

std::string FormatTick(double value, double step) {
  if (value == 0) return "0";
  double a = std::fabs(value);
  if (a >= 1e6 || a < 1e-4) return fmt::format("{:g}", value);
  int decimals = 0;
  if (step > 0 && std::isfinite(step)) {
    decimals = std::clamp(static_cast<int>(-std::floor(std::log10(step) + 1e-9)), 0, 6);
  }
  return fmt::format("{:.{}f}", value, decimals);
}

std::string EscapeXml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string RenderLineChart(const LineChart& chart) {
  const double width = std::max(chart.width, 160), height = std::max(chart.height, 120);

  // Step 1. The data ranges (unit ranges when there is nothing to draw).
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  for (const Series& s : chart.series) {
    for (const Point& p : s.points) {
      if (!Drawable(p, chart.log_x)) continue;
      x_lo = std::min(x_lo, p.x);
      x_hi = std::max(x_hi, p.x);
      y_lo = std::min(y_lo, p.y);
      y_hi = std::max(y_hi, p.y);
    }
  }
  bool empty = !(x_lo <= x_hi);
  if (empty) {
    x_lo = chart.log_x ? 1 : 0;
    x_hi = chart.log_x ? 10 : 1;
    y_lo = 0;
    y_hi = 1;
  }
  if (chart.x_from_zero && !chart.log_x) {
    x_lo = std::min(x_lo, 0.0);
    x_hi = std::max(x_hi, 0.0);
  }
  if (chart.y_from_zero) {
    y_lo = std::min(y_lo, 0.0);
    y_hi = std::max(y_hi, 0.0);
  }
  Axis y{MakeLinearScale(y_lo, y_hi), false};
  Axis x{chart.log_x ? MakeLogScale(x_lo, x_hi) : MakeLinearScale(x_lo, x_hi), chart.log_x};

  // Step 2. Margins from the text around the plot.
  double y_labels = 0;
  for (size_t i = 0; i < y.scale.ticks.size(); ++i) {
    y_labels = std::max(y_labels, TextWidth(FormatTick(y.scale.ticks[i], y.StepAt(i))));
  }
  double left = std::max(48.0, 24 + y_labels + 8);
  double right = std::max(
      16.0,
      TextWidth(FormatTick(x.scale.ticks.back(), x.StepAt(x.scale.ticks.size() - 1))) / 2 + 6);
  double legend_top = (chart.title.empty() ? 8 : kTitleHeight) + 14;
  int legend_rows = CountLegendRows(chart, width - left - right);
  double top = legend_top + legend_rows * kLegendRowHeight + (legend_rows > 0 ? 4 : 0);
  double bottom = height - 44;
  x.from = left;
  x.to = width - right;
  y.from = bottom;
  y.to = top;

  // Step 3. Frame, grid, ticks and labels, then the series over them.
  std::string out;
  OpenSvg(out, width, height, chart.title);
  DrawLegend(out, chart, left, legend_top, width - left - right);
  for (size_t i = 0; i < y.scale.ticks.size(); ++i) {
    double py = y.Map(y.scale.ticks[i]);
    Append(out, "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>\n", Coord(x.from),
           Coord(py), Coord(x.to), Coord(py), kGridColor);
    Append(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", Coord(x.from - 6),
           Coord(py + 4), EscapeXml(FormatTick(y.scale.ticks[i], y.StepAt(i))));
  }
  for (size_t i = 0; i < x.scale.ticks.size(); ++i) {
    double px = x.Map(x.scale.ticks[i]);
    Append(out, "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>\n", Coord(px),
           Coord(y.to), Coord(px), Coord(y.from), kGridColor);
    Append(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", Coord(px),
           Coord(y.from + 16), EscapeXml(FormatTick(x.scale.ticks[i], x.StepAt(i))));
  }
  Append(out, "<polyline fill=\"none\" stroke=\"{}\" points=\"{},{} {},{} {},{}\"/>\n", kAxisColor,
         Coord(x.from), Coord(y.to), Coord(x.from), Coord(y.from), Coord(x.to), Coord(y.from));
  Append(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
         Coord((x.from + x.to) / 2), Coord(height - 8), EscapeXml(chart.x_label));
  Append(out, "<text transform=\"translate(14,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
         Coord((y.from + y.to) / 2), EscapeXml(chart.y_label));
  if (empty) {
    Append(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#888\">no data</text>\n",
           Coord((x.from + x.to) / 2), Coord((y.from + y.to) / 2));
  }
  for (size_t i = 0; i < chart.series.size(); ++i) {
    DrawSeries(out, chart.series[i], Color(i), x, y, chart.log_x);
  }
  for (size_t i = 0; i < chart.series.size(); ++i) {
    if (chart.series[i].mark_last) MarkLast(out, chart.series[i], Color(i), x, y, chart.log_x);
  }
  out += "</svg>\n";
  return out;
}

std::string RenderBarChart(const BarChart& chart) {
  constexpr double kRowHeight = 22, kBarHeight = 14;
  const double width = std::max(chart.width, 200);

  // Step 1. The value range, the reference included.
  double lo = 0, hi = 0;
  bool any = false;
  for (const Bar& b : chart.bars) {
    if (!std::isfinite(b.value)) continue;
    lo = std::min(lo, b.value);
    hi = std::max(hi, b.value);
    any = true;
  }
  if (chart.reference && std::isfinite(*chart.reference)) {
    lo = std::min(lo, *chart.reference);
    hi = std::max(hi, *chart.reference);
  }
  if (!any && hi == lo) hi = 1;

  // Step 2. Layout: labels on the left (cut to at most 45% of the width), values right of bars.
  double label_width = 0;
  for (const Bar& b : chart.bars) label_width = std::max(label_width, TextWidth(b.label));
  double left = std::min(label_width, width * 0.45) + 16;
  size_t label_chars = static_cast<size_t>((left - 16) / kCharWidth + 0.5);
  double top = (chart.title.empty() ? 8 : kTitleHeight) + 8;
  double rows = std::max<double>(static_cast<double>(chart.bars.size()), 1);
  double height = top + rows * kRowHeight + 44;
  Axis x{MakeLinearScale(lo, hi), false, left, width - 56};
  double plot_bottom = top + rows * kRowHeight;

  // Step 3. Grid and ticks, the reference line, then the bars with their values over them.
  std::string out;
  OpenSvg(out, width, height, chart.title);
  for (size_t i = 0; i < x.scale.ticks.size(); ++i) {
    double px = x.Map(x.scale.ticks[i]);
    Append(out, "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>\n", Coord(px),
           Coord(top), Coord(px), Coord(plot_bottom), kGridColor);
    Append(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", Coord(px),
           Coord(plot_bottom + 16), EscapeXml(FormatTick(x.scale.ticks[i], x.StepAt(i))));
  }
  if (chart.bars.empty()) {
    Append(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#888\">no data</text>\n",
           Coord((x.from + x.to) / 2), Coord(top + kRowHeight / 2 + 4));
  }
  if (chart.reference && std::isfinite(*chart.reference)) {
    double px = x.Map(*chart.reference);
    Append(out,
           "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1.5\" "
           "stroke-dasharray=\"5 3\"/>\n",
           Coord(px), Coord(top - 4), Coord(px), Coord(plot_bottom), kAxisColor);
  }
  double zero = x.Map(std::clamp(0.0, x.scale.lo, x.scale.hi));
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const Bar& b = chart.bars[i];
    double row_top = top + static_cast<double>(i) * kRowHeight;
    double text_y = row_top + kRowHeight / 2 + 4;
    Append(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}<title>{}</title></text>\n",
           Coord(left - 8), Coord(text_y), EscapeXml(Truncate(b.label, label_chars)),
           EscapeXml(b.label));
    if (!std::isfinite(b.value)) {
      Append(out, "<text x=\"{}\" y=\"{}\" fill=\"#888\">n/a</text>\n", Coord(zero + 4),
             Coord(text_y));
      continue;
    }
    const char* color = !chart.reference              ? Color(0)
                        : b.value >= *chart.reference ? kAtOrAboveColor
                                                      : kBelowColor;
    double end = x.Map(b.value);
    Append(out, "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n",
           Coord(std::min(zero, end)), Coord(row_top + (kRowHeight - kBarHeight) / 2),
           Coord(std::fabs(end - zero)), Coord(kBarHeight), color);
    // A white outline keeps the value readable where it crosses the reference line.
    Append(out,
           "<text x=\"{}\" y=\"{}\" stroke=\"#fff\" stroke-width=\"3\" "
           "paint-order=\"stroke\">{}</text>\n",
           Coord(std::max(zero, end) + 4), Coord(text_y), EscapeXml(FormatQuantity(b.value)));
  }
  Append(out, "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>\n", Coord(x.from),
         Coord(plot_bottom), Coord(x.to), Coord(plot_bottom), kAxisColor);
  Append(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
         Coord((x.from + x.to) / 2), Coord(height - 8), EscapeXml(chart.x_label));
  out += "</svg>\n";
  return out;
}

}  // namespace tirtune::report
