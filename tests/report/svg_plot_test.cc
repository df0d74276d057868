// The SVG charts: well-formed, escaped, nice ticks, deterministic, and no NaN from degenerate
// data.
#include "tirtune/report/svg_plot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "markup_check.h"

namespace tirtune::report {
namespace {

using testing::CheckMarkup;
using testing::CountOf;

/// The mantissa of `step` (1, 2 or 5 for a nice step).
double Mantissa(double step) { return step / std::pow(10.0, std::floor(std::log10(step) + 1e-9)); }

void ExpectNoNumbersGoneWrong(const std::string& svg) {
  EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("inf"), std::string::npos) << svg;
}

Series MakeSeries(std::string name, std::vector<Point> points,
                  SeriesStyle style = SeriesStyle::kLine, bool mark_last = false) {
  return Series{std::move(name), std::move(points), style, mark_last};
}

LineChart TwoSeriesChart() {
  LineChart chart;
  chart.title = "Best GFLOP/s by trial";
  chart.x_label = "trial";
  chart.y_label = "GFLOP/s";
  chart.series.push_back(
      MakeSeries("each trial", {{1, 3}, {2, 5}, {3, 4}, {4, 9}}, SeriesStyle::kDots));
  chart.series.push_back(
      MakeSeries("best so far", {{1, 3}, {2, 5}, {4, 9}}, SeriesStyle::kSteps, /*mark_last=*/true));
  return chart;
}

TEST(NiceScale, TicksAreOneTwoFiveTimesAPowerOfTenAndCoverTheRange) {
  const std::pair<double, double> ranges[] = {
      {0, 1},       {0, 207.8}, {1, 1000},      {0.013, 0.0171}, {-3.5, 12.25},
      {1e-7, 3e-6}, {42, 42.5}, {0, 123456789}, {-1000, -999},   {0.1, 0.30000000000000004}};
  for (auto [lo, hi] : ranges) {
    NiceScale s = MakeLinearScale(lo, hi);
    ASSERT_GE(s.ticks.size(), 2u) << lo << " " << hi;
    EXPECT_LE(s.ticks.size(), 6u) << lo << " " << hi;
    // Covering up to rounding: a tick is an integer times the step.
    EXPECT_LE(s.lo, lo + 1e-12 * std::fabs(lo)) << hi;
    EXPECT_GE(s.hi, hi - 1e-12 * std::fabs(hi)) << lo;
    EXPECT_EQ(s.lo, s.ticks.front());
    EXPECT_EQ(s.hi, s.ticks.back());
    double step = s.ticks[1] - s.ticks[0];
    double m = Mantissa(step);
    EXPECT_TRUE(std::fabs(m - 1) < 1e-6 || std::fabs(m - 2) < 1e-6 || std::fabs(m - 5) < 1e-6)
        << "step " << step << " for [" << lo << ", " << hi << "]";
    for (size_t i = 1; i < s.ticks.size(); ++i) {
      EXPECT_NEAR(s.ticks[i] - s.ticks[i - 1], step, step * 1e-9);
      double units = s.ticks[i] / step;
      EXPECT_NEAR(units, std::round(units), 1e-6) << "tick " << s.ticks[i] << " off the grid";
    }
  }
}

TEST(NiceScale, ThroughputFromZeroGetsRoundTicks) {
  NiceScale s = MakeLinearScale(0, 207.8);
  EXPECT_EQ(s.ticks, (std::vector<double>{0, 50, 100, 150, 200, 250}));
}

TEST(NiceScale, DegenerateRangesGetAUsableScale) {
  for (auto [lo, hi] : std::vector<std::pair<double, double>>{
           {5, 5}, {0, 0}, {-2, -2}, {1e-300, 1e-300}, {NAN, 1}, {0, INFINITY}}) {
    NiceScale s = MakeLinearScale(lo, hi);
    ASSERT_GE(s.ticks.size(), 2u);
    EXPECT_LT(s.lo, s.hi);
    EXPECT_TRUE(std::isfinite(s.lo) && std::isfinite(s.hi));
    if (std::isfinite(lo) && std::isfinite(hi)) {
      EXPECT_LE(s.lo, lo);
      EXPECT_GE(s.hi, hi);
    }
  }
}

TEST(NiceScale, LogScaleRunsFromPowerToPowerOfTen) {
  EXPECT_EQ(MakeLogScale(1, 1000).ticks, (std::vector<double>{1, 10, 100, 1000}));
  EXPECT_EQ(MakeLogScale(3, 70).ticks, (std::vector<double>{1, 2, 5, 10, 20, 50, 100}));
  NiceScale one = MakeLogScale(7, 7);
  EXPECT_EQ(one.lo, 1);
  EXPECT_EQ(one.hi, 10);
}

TEST(FormatTick, UsesTheDigitsTheStepNeeds) {
  EXPECT_EQ(FormatTick(0.30000000000000004, 0.1), "0.3");
  EXPECT_EQ(FormatTick(0.25, 0.05), "0.25");
  EXPECT_EQ(FormatTick(1000, 200), "1000");
  EXPECT_EQ(FormatTick(0, 0.1), "0");
  EXPECT_EQ(FormatTick(-0.0, 1), "0");
  EXPECT_EQ(FormatTick(2.5e6, 5e5), "2.5e+06");
}

TEST(EscapeXml, ReplacesEveryMarkupCharacter) {
  EXPECT_EQ(EscapeXml("a<b&\"c\"'d'>"), "a&lt;b&amp;&quot;c&quot;&#39;d&#39;&gt;");
  EXPECT_EQ(EscapeXml("plain 1,2,3"), "plain 1,2,3");
}

TEST(LineChart, IsWellFormedWithTitleLabelsAndLegend) {
  std::string svg = RenderLineChart(TwoSeriesChart());
  EXPECT_EQ(CheckMarkup(svg), "");
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_NE(svg.find(">Best GFLOP/s by trial</text>"), std::string::npos);
  EXPECT_NE(svg.find(">trial</text>"), std::string::npos);
  EXPECT_NE(svg.find(">GFLOP/s</text>"), std::string::npos);
  EXPECT_NE(svg.find(">each trial</text>"), std::string::npos);
  EXPECT_NE(svg.find(">best so far</text>"), std::string::npos);
  EXPECT_EQ(svg.find("http"), std::string::npos) << "inline SVG needs no namespace URL";
  ExpectNoNumbersGoneWrong(svg);
}

TEST(LineChart, MarksTheFinalValue) {
  std::string svg = RenderLineChart(TwoSeriesChart());
  EXPECT_NE(svg.find("font-weight=\"bold\" fill=\"#e07b1a\">9.000</text>"), std::string::npos)
      << svg;
}

TEST(LineChart, StepsHoldEachValueUntilTheNextPoint) {
  LineChart chart;
  chart.series.push_back(MakeSeries("s", {{0, 0}, {1, 1}, {2, 2}}, SeriesStyle::kSteps));
  std::string svg = RenderLineChart(chart);
  size_t at = svg.find("stroke-width=\"2\" stroke-linejoin=\"round\" points=\"");
  ASSERT_NE(at, std::string::npos) << svg;
  std::string points = svg.substr(at, svg.find('"', svg.find("points=\"", at) + 8) - at);
  EXPECT_EQ(CountOf(points, ","), 5u) << points;  // 3 points and 2 corners
}

TEST(LineChart, EscapesSeriesNamesAndTitles) {
  LineChart chart;
  chart.title = "<script>";
  chart.x_label = "x & y";
  chart.series.push_back(MakeSeries("a<b&\"c\"", {{1, 2}, {2, 3}}));
  std::string svg = RenderLineChart(chart);
  EXPECT_EQ(CheckMarkup(svg), "");
  EXPECT_NE(svg.find("a&lt;b&amp;&quot;c&quot;"), std::string::npos);
  EXPECT_EQ(svg.find("a<b"), std::string::npos);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_NE(svg.find("x &amp; y"), std::string::npos);
}

TEST(LineChart, DegenerateDataDrawsWithoutNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::vector<Point>> cases = {
      {},                                  // empty series
      {{1, 5}},                            // one point
      {{1, 5}, {2, 5}, {3, 5}},            // all equal y
      {{3, 1}, {3, 2}},                    // all equal x
      {{0, 0}, {0, 0}},                    // all zero
      {{1, nan}, {nan, 2}, {INFINITY, 1}}  // nothing drawable
  };
  for (bool log_x : {false, true}) {
    for (const std::vector<Point>& points : cases) {
      LineChart chart;
      chart.log_x = log_x;
      chart.series.push_back(MakeSeries("s", points, SeriesStyle::kSteps, /*mark_last=*/true));
      std::string svg = RenderLineChart(chart);
      EXPECT_EQ(CheckMarkup(svg), "") << svg;
      ExpectNoNumbersGoneWrong(svg);
    }
  }
  LineChart no_series;
  std::string svg = RenderLineChart(no_series);
  EXPECT_NE(svg.find(">no data</text>"), std::string::npos);
  ExpectNoNumbersGoneWrong(svg);
}

TEST(LineChart, SinglePointIsDrawnAsADot) {
  LineChart chart;
  chart.series.push_back(MakeSeries("one", {{1, 5}}, SeriesStyle::kLine));
  std::string svg = RenderLineChart(chart);
  EXPECT_EQ(CountOf(svg, "<circle"), 1u) << svg;  // the legend swatch is a line
  EXPECT_EQ(CountOf(svg, "<polyline"), 1u);       // the axes only
}

TEST(LineChart, LogXLeavesOutNonPositiveX) {
  LineChart chart;
  chart.log_x = true;
  chart.series.push_back(MakeSeries("s", {{0, 1}, {1, 2}, {10, 3}, {100, 4}}, SeriesStyle::kDots));
  std::string svg = RenderLineChart(chart);
  EXPECT_EQ(CountOf(svg, "<circle"), 4u);  // 3 points and the legend swatch
  EXPECT_NE(svg.find(">100</text>"), std::string::npos);
  ExpectNoNumbersGoneWrong(svg);
}

TEST(LineChart, SameChartGivesTheSameBytes) {
  LineChart a = TwoSeriesChart();
  LineChart b = TwoSeriesChart();
  EXPECT_EQ(RenderLineChart(a), RenderLineChart(b));
}

TEST(BarChart, DrawsBarsOnBothSidesOfTheReference) {
  BarChart chart;
  chart.title = "tirtune vs onednn";
  chart.x_label = "ratio";
  chart.reference = 1.0;
  chart.bars = {{"gemm", 1.25}, {"conv2d", 0.8}, {"a<b", 1.0}};
  std::string svg = RenderBarChart(chart);
  EXPECT_EQ(CheckMarkup(svg), "");
  EXPECT_EQ(CountOf(svg, "<rect"), 4u);  // background + 3 bars
  EXPECT_EQ(CountOf(svg, "fill=\"#2a9d4b\""), 2u);
  EXPECT_EQ(CountOf(svg, "fill=\"#e07b1a\""), 1u);
  EXPECT_EQ(CountOf(svg, "stroke-dasharray"), 1u);
  EXPECT_NE(svg.find(">1.250</text>"), std::string::npos);
  EXPECT_NE(svg.find("a&lt;b"), std::string::npos);
  ExpectNoNumbersGoneWrong(svg);
  EXPECT_EQ(svg, RenderBarChart(chart));
}

TEST(BarChart, LongLabelsAreCutButKeptInATooltip) {
  BarChart chart;
  std::string long_label(200, 'x');
  chart.bars = {{long_label, 2}};
  std::string svg = RenderBarChart(chart);
  EXPECT_NE(svg.find("<title>" + long_label + "</title>"), std::string::npos);
  EXPECT_NE(svg.find("\u2026<title>"), std::string::npos);
}

TEST(BarChart, EmptyAndNonFiniteValuesDrawWithoutNaN) {
  BarChart empty;
  std::string svg = RenderBarChart(empty);
  EXPECT_EQ(CheckMarkup(svg), "");
  EXPECT_NE(svg.find(">no data</text>"), std::string::npos);
  ExpectNoNumbersGoneWrong(svg);

  BarChart odd;
  odd.reference = 1.0;
  odd.bars = {{"missing", std::numeric_limits<double>::quiet_NaN()}, {"zero", 0}, {"same", 1.0}};
  svg = RenderBarChart(odd);
  EXPECT_EQ(CheckMarkup(svg), "");
  EXPECT_NE(svg.find(">n/a</text>"), std::string::npos);
  EXPECT_EQ(svg.find("nan<"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
}

}  // namespace
}  // namespace tirtune::report
