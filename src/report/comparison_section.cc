// The comparison section of the report: tirtune against each baseline of a benchmark run.
#include "comparison_section.h"

#include <fmt/format.h>

#include <cmath>
#include <iterator>
#include <set>

#include "format_numbers.h"
#include "tirtune/report/svg_plot.h"

namespace tirtune::report {
namespace {

template <typename... Args>
void Append(std::string& out, fmt::format_string<Args...> f, Args&&... args) {
  fmt::format_to(std::back_inserter(out), f, std::forward<Args>(args)...);
}

/// The baseline's entry of `w`, or nullptr.
const BenchTiming* FindBaseline(const BenchWorkload& w, const std::string& name) {
  for (const auto& [baseline, timing] : w.baselines) {
    if (baseline == name) return &timing;
  }
  return nullptr;
}

/// Baseline latency / tirtune latency: above 1, tirtune is faster.
double Ratio(const BenchWorkload& w, const BenchTiming& baseline) {
  return baseline.ratio.value_or(baseline.latency_s / w.tirtune.latency_s);
}

/// A ratio cell, colored by which side is faster.
std::string RatioCell(double ratio) {
  return fmt::format("<td class=\"num ratio {}\">{}</td>", ratio >= 1 ? "faster" : "slower",
                     FormatRatio(ratio));
}

/// "120 (50.1 s)", "120", "50.1 s" or "-".
std::string ReachCell(const std::optional<int64_t>& trials, const std::optional<double>& secs) {
  std::string text = "-";
  if (trials && secs) {
    text = fmt::format("{} ({})", *trials, FormatDuration(*secs));
  } else if (trials) {
    text = std::to_string(*trials);
  } else if (secs) {
    text = FormatDuration(*secs);
  }
  return fmt::format("<td class=\"num\">{}</td>", text);
}

void AppendKeyValueTable(std::string& out, const char* id, const char* heading,
                         const std::vector<std::pair<std::string, std::string>>& rows) {
  Append(out, "<table id=\"{}\"><thead><tr><th colspan=\"2\">{}</th></tr></thead><tbody>\n", id,
         heading);
  for (const auto& [key, value] : rows) {
    Append(out, "<tr><th>{}</th><td>{}</td></tr>\n", EscapeXml(key), EscapeXml(value));
  }
  out += "</tbody></table>\n";
}

void AppendComparisonTable(std::string& out, const BenchResults& bench,
                           const std::set<std::string>& baselines) {
  out +=
      "<table id=\"comparison-table\">\n<thead><tr><th>Workload</th><th>Group</th>"
      "<th>Kind</th><th>tirtune latency</th><th>tirtune GFLOP/s</th>";
  for (const std::string& b : baselines) {
    Append(out, "<th>{0} latency</th><th>ratio vs {0}</th>", EscapeXml(b));
  }
  out +=
      "<th>Trials</th><th>Tuning time</th><th>To 90%</th><th>To 95%</th><th>Verified</th>"
      "</tr></thead>\n<tbody>\n";
  for (const BenchWorkload& w : bench.workloads) {
    const BenchTiming& t = w.tirtune;
    Append(out,
           "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
           "<td class=\"num\">{}</td>",
           EscapeXml(w.name), EscapeXml(w.group), EscapeXml(w.kind), FormatLatency(t.latency_s),
           FormatQuantity(w.flops / t.latency_s / 1e9));
    for (const std::string& b : baselines) {
      const BenchTiming* baseline = FindBaseline(w, b);
      if (!baseline) {
        out += "<td class=\"num zero\">-</td><td class=\"num zero\">-</td>";
        continue;
      }
      Append(out, "<td class=\"num\">{}</td>{}", FormatLatency(baseline->latency_s),
             RatioCell(Ratio(w, *baseline)));
    }
    Append(out, "<td class=\"num\">{}</td><td class=\"num\">{}</td>{}{}",
           t.trials ? std::to_string(*t.trials) : "-",
           t.tuning_s ? FormatDuration(*t.tuning_s) : "-",
           ReachCell(t.trials_to_90, t.seconds_to_90), ReachCell(t.trials_to_95, t.seconds_to_95));
    if (!t.verified) {
      out += "<td>-</td></tr>\n";
    } else {
      Append(out, "<td{}>{}</td></tr>\n", *t.verified ? "" : " class=\"bad\"",
             *t.verified ? "yes" : "no");
    }
  }
  out += "</tbody>\n</table>\n";
}

}  // namespace

void AppendComparisonSection(std::string& out, const BenchResults& bench) {
  out += "<section id=\"comparison\">\n<h2>Comparison with baselines</h2>\n";
  Append(out, "<p class=\"meta\">Benchmark run of {}, budget {} ({} trials): <code>{}</code></p>\n",
         EscapeXml(bench.created_at), EscapeXml(bench.budget_name), bench.budget_trials,
         EscapeXml(bench.command));
  out += "<div class=\"charts\">\n";
  AppendKeyValueTable(out, "machine", "Machine", bench.machine);
  AppendKeyValueTable(out, "versions", "Versions", bench.versions);
  out += "</div>\n";
  out +=
      "<p class=\"note\">Ratio = baseline latency / tirtune latency: above 1, tirtune is "
      "faster.</p>\n";

  std::set<std::string> baselines;
  for (const BenchWorkload& w : bench.workloads) {
    for (const auto& [name, timing] : w.baselines) baselines.insert(name);
  }
  AppendComparisonTable(out, bench, baselines);

  // Geometric means (ratios multiply, so their average is geometric), then one chart per
  // baseline with the mean as its last bar.
  out +=
      "<table id=\"geomean-table\">\n<thead><tr><th>Baseline</th><th>Workloads</th>"
      "<th>tirtune faster on</th><th>Geometric mean ratio</th></tr></thead>\n<tbody>\n";
  std::vector<BarChart> charts;
  for (const std::string& b : baselines) {
    BarChart chart;
    chart.title = fmt::format("tirtune vs {}", b);
    chart.x_label = fmt::format("{} latency / tirtune latency (dashed: 1.0, same speed)", b);
    chart.reference = 1.0;
    chart.width = 640;
    double log_sum = 0;
    size_t faster = 0;
    for (const BenchWorkload& w : bench.workloads) {
      const BenchTiming* baseline = FindBaseline(w, b);
      if (!baseline) continue;
      double ratio = Ratio(w, *baseline);
      log_sum += std::log(ratio);
      faster += ratio >= 1 ? 1 : 0;
      chart.bars.push_back({w.name, ratio});
    }
    double geomean = std::exp(log_sum / static_cast<double>(chart.bars.size()));
    Append(out, "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>{}</tr>\n",
           EscapeXml(b), chart.bars.size(), faster, RatioCell(geomean));
    chart.bars.push_back({"geometric mean", geomean});
    charts.push_back(std::move(chart));
  }
  if (baselines.empty()) {
    out += "<tr><td colspan=\"4\">no baselines in this benchmark run</td></tr>\n";
  }
  out += "</tbody>\n</table>\n";
  out += "<div class=\"charts\">\n";
  for (const BarChart& chart : charts) out += RenderBarChart(chart);
  out += "</div>\n";
  out += "</section>\n";
}

}  // namespace tirtune::report
