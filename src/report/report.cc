// BuildReport: the page, its header, the table of (workload, target) groups and their tuning
// curves. The comparison with baselines is comparison_section.cc.
#include "tirtune/report/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <map>
#include <set>

#include "comparison_section.h"
#include "format_numbers.h"
#include "tirtune/ir/flop_count.h"
#include "tirtune/ir/printer.h"
#include "tirtune/report/svg_plot.h"
#include "tirtune/report/tuning_curve.h"

namespace tirtune::report {
namespace {

/// Every status in the order of its enum value, which indexes Group::status_counts.
constexpr std::array<RecordStatus, 7> kStatuses = {
    RecordStatus::kOk,        RecordStatus::kBuildError,  RecordStatus::kRuntimeError,
    RecordStatus::kTimeout,   RecordStatus::kWrongResult, RecordStatus::kRunnerLost,
    RecordStatus::kDeviceLost};
static_assert(static_cast<size_t>(RecordStatus::kDeviceLost) == kStatuses.size() - 1);

// Inline only: the page must render with no network.
constexpr const char* kStyle = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #222;
       max-width: 1400px; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 18px; margin-top: 32px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 24px 0 4px; }
p.meta { color: #555; margin: 2px 0; }
table { border-collapse: collapse; font-size: 12px; margin: 8px 0; }
th, td { border: 1px solid #ddd; padding: 3px 6px; text-align: left; vertical-align: top; }
thead th { background: #f3f4f6; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.zero { color: #bbb; }
td.bad { color: #b3261e; }
.sig { color: #666; font-size: 11px; }
.note { color: #555; font-size: 13px; }
.none { color: #b35900; }
.faster { color: #1a7f37; font-weight: 600; }
.slower { color: #b35900; font-weight: 600; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
svg.chart { border: 1px solid #e5e5e5; }
code { font-size: 11px; }
td code { white-space: nowrap; }
td.workload { min-width: 200px; }
)";

template <typename... Args>
void Append(std::string& out, fmt::format_string<Args...> f, Args&&... args) {
  fmt::format_to(std::back_inserter(out), f, std::forward<Args>(args)...);
}

/// A workload's facts the report needs more than once.
struct WorkloadInfo {
  const WorkloadEntry* entry = nullptr;
  /// EstimateFlops of the function; 0 when it does no floating-point work.
  double flops = 0;
  /// Throughput unit of the curves: GFLOP/s, or runs per second without a FLOP count.
  std::string unit;
  double work = 1;  // what a run does, in the unit's numerator (GFLOP, or one run)
};

/// The records of one workload on one target.
struct Group {
  const WorkloadInfo* workload = nullptr;
  /// Empty for a workload without any record.
  std::string target;
  std::string anchor;  // the id of its curves
  std::array<size_t, kStatuses.size()> status_counts{};
  std::optional<double> best_median_secs;
  std::vector<Trial> trials;
};

/// "A: float32[16, 128, 128], B: ...": tells apart workloads of one family.
std::string Signature(const PrimFunc& func) {
  std::string out;
  for (const Buffer& b : func->params) {
    if (!out.empty()) out += ", ";
    Append(out, "{}: {}[", b->name, b->dtype.str());
    for (size_t i = 0; i < b->shape.size(); ++i) {
      Append(out, "{}{}", i == 0 ? "" : ", ", ToString(b->shape[i]));
    }
    out += "]";
  }
  return out;
}

/// "1 trial", "2 trials".
std::string Counted(size_t n, std::string_view noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

/// Where the records came from: the devices and program versions that measured them.
struct Provenance {
  std::set<std::string> devices;
  std::set<std::string> versions;
};

/// One group per (workload, target) with records, and one for each workload without any.
std::vector<Group> MakeGroups(Database& db, const std::vector<WorkloadInfo>& workloads,
                              Provenance* provenance) {
  std::vector<Group> groups;
  for (const WorkloadInfo& w : workloads) {
    std::vector<TuningRecord> records = db.RecordsOf(w.entry->id);
    std::map<std::string, Group> by_target;
    for (const TuningRecord& r : records) {
      if (!r.device.empty()) provenance->devices.insert(r.device);
      if (!r.program_version.empty()) provenance->versions.insert(r.program_version);
      Group& g = by_target[r.target];
      g.status_counts[static_cast<size_t>(r.status)]++;
      if (r.status == RecordStatus::kOk && r.median_secs &&
          (!g.best_median_secs || *r.median_secs < *g.best_median_secs)) {
        g.best_median_secs = r.median_secs;
      }
    }
    if (by_target.empty()) by_target[""] = Group{};
    for (auto& [target, g] : by_target) {
      g.workload = &w;
      g.target = target;
      g.anchor = fmt::format("g{}", groups.size());
      g.trials = TrialsOnTarget(records, target, w.work);
      groups.push_back(std::move(g));
    }
  }
  return groups;
}

void AppendHeader(std::string& out, Database& db, size_t num_workloads,
                  const Provenance& provenance, const ReportOptions& options,
                  bool with_comparison) {
  Append(out, "<h1>{}</h1>\n", EscapeXml(options.title));
  Append(out, "<p class=\"meta\">Generated at {} from {}: {}, {}.</p>\n",
         FormatUtc(options.generated_at), EscapeXml(db.Describe()),
         Counted(num_workloads, "workload"), Counted(db.Size(), "record"));
  auto join = [](const std::set<std::string>& items) {
    std::string s;
    for (const std::string& item : items) s += (s.empty() ? "" : "; ") + EscapeXml(item);
    return s;
  };
  if (!provenance.devices.empty()) {
    Append(out, "<p class=\"meta\">Measured on: {}.</p>\n", join(provenance.devices));
  }
  if (!provenance.versions.empty()) {
    Append(out, "<p class=\"meta\">Measured by: {}.</p>\n", join(provenance.versions));
  }
  out +=
      "<p class=\"meta\">Contents: <a href=\"#summary\">workloads</a> &middot; "
      "<a href=\"#curves\">tuning curves</a>";
  if (with_comparison) out += " &middot; <a href=\"#comparison\">comparison with baselines</a>";
  out += "</p>\n";
}

void AppendSummaryTable(std::string& out, const std::vector<Group>& groups) {
  out += "<section id=\"summary\">\n<h2>Workloads</h2>\n";
  out +=
      "<p class=\"note\">One row per workload and target. Best median: the smallest median "
      "latency of an ok record. To 90% / 95%: the trials (and tuning time) until the best so far "
      "reached that share of the final best throughput.</p>\n";
  out +=
      "<table id=\"summary-table\">\n<thead><tr><th>Workload</th><th>Target</th>"
      "<th>Records</th>";
  for (RecordStatus s : kStatuses) {
    std::string name(RecordStatusName(s));
    std::replace(name.begin(), name.end(), '_', ' ');  // lets the narrow columns wrap
    Append(out, "<th>{}</th>", name);
  }
  out +=
      "<th>Best median</th><th>GFLOP/s</th><th>To 90%</th><th>To 95%</th></tr></thead>\n"
      "<tbody>\n";
  for (const Group& g : groups) {
    const WorkloadEntry& w = *g.workload->entry;
    Append(out,
           "<tr><td class=\"workload\"><a href=\"#{}\">{}</a> <code title=\"{}\">{}</code><div "
           "class=\"sig\">{}</div></td>",
           g.anchor, EscapeXml(w.name), EscapeXml(w.shash), EscapeXml(w.shash.substr(0, 8)),
           EscapeXml(Signature(w.func)));
    Append(out, "<td>{}</td><td class=\"num\">{}</td>",
           g.target.empty() ? "(no records)" : "<code>" + EscapeXml(g.target) + "</code>",
           g.trials.size());
    for (size_t i = 0; i < kStatuses.size(); ++i) {
      size_t n = g.status_counts[i];
      const char* look = n == 0 ? " zero" : (kStatuses[i] != RecordStatus::kOk ? " bad" : "");
      Append(out, "<td class=\"num{} st-{}\">{}</td>", look, RecordStatusName(kStatuses[i]), n);
    }
    std::string best = "-", gflops = "-";
    if (g.best_median_secs) {
      best = FormatLatency(*g.best_median_secs);
      if (g.workload->flops > 0) {
        gflops = FormatQuantity(g.workload->flops / *g.best_median_secs / 1e9);
      }
    }
    Append(out, "<td class=\"num\">{}</td><td class=\"num\">{}</td>", best, gflops);
    for (double fraction : {0.9, 0.95}) {
      std::optional<size_t> trials = TrialsToReach(g.trials, fraction);
      std::optional<double> secs = SecondsToReach(g.trials, fraction);
      std::string cell = trials ? fmt::format("{} ({})", *trials, FormatDuration(*secs)) : "-";
      Append(out, "<td class=\"num\">{}</td>", cell);
    }
    out += "</tr>\n";
  }
  out += "</tbody>\n</table>\n</section>\n";
}

/// The best-so-far series as step points: one where the best changes, and the last trial.
Series BestSeries(const std::vector<Trial>& trials, bool by_time) {
  Series s{"best so far", {}, SeriesStyle::kSteps, /*mark_last=*/true};
  std::vector<std::optional<double>> best = BestSoFar(trials);
  for (size_t i = 0; i < trials.size(); ++i) {
    if (!best[i]) continue;
    bool changed = i == 0 || !best[i - 1] || *best[i - 1] != *best[i];
    if (!changed && i + 1 != trials.size()) continue;
    double x = by_time ? trials[i].elapsed_s : static_cast<double>(i + 1);
    s.points.push_back({x, *best[i]});
  }
  return s;
}

void AppendCurves(std::string& out, const Group& g, const ReportOptions& options) {
  const WorkloadInfo& w = *g.workload;
  Append(out, "<div class=\"group\" id=\"{}\">\n<h3>{} <code>{}</code>", g.anchor,
         EscapeXml(w.entry->name), EscapeXml(w.entry->shash.substr(0, 8)));
  if (!g.target.empty()) Append(out, " on <code>{}</code>", EscapeXml(g.target));
  Append(out, "</h3>\n<div class=\"sig\">{}</div>\n", EscapeXml(Signature(w.entry->func)));
  if (g.trials.empty()) {
    out += "<p class=\"none\">No records.</p>\n</div>\n";
    return;
  }
  std::optional<double> final_best = FinalBest(g.trials);
  if (!final_best) {
    std::string counts;
    for (size_t i = 0; i < kStatuses.size(); ++i) {
      if (g.status_counts[i] == 0) continue;
      Append(counts, "{}{} {}", counts.empty() ? "" : ", ", g.status_counts[i],
             RecordStatusName(kStatuses[i]));
    }
    Append(out, "<p class=\"none\">No successful trial among {} ({}): no curve.</p>\n</div>\n",
           Counted(g.trials.size(), "record"), counts);
    return;
  }
  size_t num_ok = g.status_counts[static_cast<size_t>(RecordStatus::kOk)];
  // With a successful trial, every share of the final best is reached by some trial.
  auto reached = [&](double fraction) {
    return fmt::format("{} ({})", *TrialsToReach(g.trials, fraction),
                       FormatDuration(*SecondsToReach(g.trials, fraction)));
  };
  Append(out,
         "<p class=\"note\">{} ({} ok) over {}; best {} {} at trial {}; 90% of it after trial {}, "
         "95% after trial {}.</p>\n",
         Counted(g.trials.size(), "trial"), num_ok, FormatDuration(g.trials.back().elapsed_s),
         FormatQuantity(*final_best), w.unit, reached(1.0), reached(0.9), reached(0.95));

  LineChart by_trial;
  by_trial.title = fmt::format("Best {} by trial", w.unit);
  by_trial.x_label = options.log_trials ? "trial (log scale)" : "trial";
  by_trial.y_label = w.unit;
  by_trial.log_x = options.log_trials;
  by_trial.x_from_zero = true;
  Series each{"each ok trial", {}, SeriesStyle::kDots, /*mark_last=*/false};
  for (size_t i = 0; i < g.trials.size(); ++i) {
    if (g.trials[i].throughput) {
      each.points.push_back({static_cast<double>(i + 1), *g.trials[i].throughput});
    }
  }
  // The best first, so that it has the same color in both charts.
  by_trial.series = {BestSeries(g.trials, /*by_time=*/false), std::move(each)};

  LineChart by_time;
  by_time.title = fmt::format("Best {} by tuning time", w.unit);
  by_time.x_label = "seconds since the first trial";
  by_time.y_label = w.unit;
  by_time.x_from_zero = true;
  by_time.series = {BestSeries(g.trials, /*by_time=*/true)};

  out += "<div class=\"charts\">\n";
  out += RenderLineChart(by_trial);
  out += RenderLineChart(by_time);
  out += "</div>\n</div>\n";
}

}  // namespace

std::string BuildReport(Database& db, const std::optional<BenchResults>& bench,
                        const ReportOptions& options) {
  std::vector<WorkloadEntry> entries = db.Workloads();
  std::vector<WorkloadInfo> workloads;
  workloads.reserve(entries.size());
  for (const WorkloadEntry& e : entries) {
    WorkloadInfo w;
    w.entry = &e;
    w.flops = EstimateFlops(e.func);
    w.unit = w.flops > 0 ? "GFLOP/s" : "runs/s";
    w.work = w.flops > 0 ? w.flops / 1e9 : 1;
    workloads.push_back(std::move(w));
  }
  Provenance provenance;
  std::vector<Group> groups = MakeGroups(db, workloads, &provenance);

  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  Append(out, "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n", EscapeXml(options.title),
         kStyle);
  AppendHeader(out, db, entries.size(), provenance, options, bench.has_value());
  AppendSummaryTable(out, groups);
  out += "<section id=\"curves\">\n<h2>Tuning curves</h2>\n";
  out +=
      "<p class=\"note\">Trials in the order they were stored; a failed trial counts as a trial "
      "but does not change the best. Time runs from the first stored trial; a record's time is "
      "when it was stored, so the trials of one measured batch share about the same time.</p>\n";
  for (const Group& g : groups) AppendCurves(out, g, options);
  out += "</section>\n";
  if (bench) AppendComparisonSection(out, *bench);
  out += "</body>\n</html>\n";
  return out;
}

}  // namespace tirtune::report
