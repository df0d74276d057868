// The table of workloads and the parsing of workload specs ("conv2d:1,56,56,64,64,3,1,1").
#include "tirtune/te/workload_registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>

#include "tirtune/ir/packed_layout.h"
#include "tirtune/support/error.h"
#include "workloads/workload_families.h"

namespace tirtune {
namespace {

// Larger arguments would overflow the int64 element counts of the shapes they build.
constexpr int64_t kMaxArg = int64_t{1} << 24;

std::vector<WorkloadDef> BuildTable() {
  std::vector<WorkloadDef> all;
  for (auto family : {te::LinearAlgebraWorkloads, te::ConvolutionWorkloads,
                      te::Conv2dVariantWorkloads, te::NormalizationWorkloads, te::SubgraphWorkloads,
                      te::ElementwiseWorkloads, te::PoolingWorkloads, te::LayoutWorkloads}) {
    std::vector<WorkloadDef> defs = family();
    all.insert(all.end(), defs.begin(), defs.end());
  }
  // The benchmark suite first, each group in family order.
  std::stable_partition(all.begin(), all.end(),
                        [](const WorkloadDef& d) { return !d.benchmark_shapes.empty(); });
  return all;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> SplitCommas(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    parts.push_back(Trim(s.substr(start, comma - start)));
    if (comma == std::string_view::npos) return parts;
    start = comma + 1;
  }
}

// Padding is the one argument that may be zero.
bool MayBeZero(std::string_view param) { return param == "pad"; }

}  // namespace

const std::vector<WorkloadDef>& AllWorkloads() {
  static const std::vector<WorkloadDef> table = BuildTable();
  return table;
}

const WorkloadDef* FindWorkload(std::string_view name) {
  for (const WorkloadDef& def : AllWorkloads()) {
    if (def.name == name) return &def;
  }
  return nullptr;
}

Workload MakeWorkload(std::string_view spec) {
  // Step 1. The name, and the workload it names.
  size_t colon = spec.find(':');
  std::string_view name = Trim(spec.substr(0, colon));
  const WorkloadDef* def = FindWorkload(name);
  if (def == nullptr) {
    std::string known;
    for (const WorkloadDef& d : AllWorkloads()) known += (known.empty() ? "" : ", ") + d.name;
    TT_USER_ERROR("workload '{}': unknown name '{}' (known: {})", spec, name, known);
  }

  // Step 2. The arguments: integers, as many as the workload takes, positive except padding.
  std::vector<std::string_view> params = SplitCommas(def->params);
  std::vector<std::string_view> texts;
  if (colon != std::string_view::npos) texts = SplitCommas(spec.substr(colon + 1));
  if (texts.size() == 1 && texts[0].empty()) texts.clear();
  if (texts.size() < def->min_args || texts.size() > def->max_args) {
    std::string count = def->min_args == def->max_args
                            ? std::to_string(def->min_args)
                            : fmt::format("{} to {}", def->min_args, def->max_args);
    TT_USER_ERROR("workload '{}': {} takes {} arguments ({}), got {}", spec, def->name, count,
                  def->params, texts.size());
  }
  std::vector<int64_t> args;
  for (size_t i = 0; i < texts.size(); ++i) {
    std::string_view text = texts[i];
    int64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
      TT_USER_ERROR("workload '{}': argument {} ({}) is '{}', not an integer", spec, i + 1,
                    params[i], text);
    }
    if (value < 0 || (value == 0 && !MayBeZero(params[i]))) {
      TT_USER_ERROR("workload '{}': argument {} ({}) must be {}, got {}", spec, i + 1, params[i],
                    MayBeZero(params[i]) ? "non-negative" : "positive", value);
    }
    if (value > kMaxArg) {
      TT_USER_ERROR("workload '{}': argument {} ({}) = {} is too large", spec, i + 1, params[i],
                    value);
    }
    args.push_back(value);
  }

  // Step 3. Build; the builders reject invalid combinations of valid arguments.
  Workload w;
  w.spec = fmt::format("{}:{}", def->name, fmt::join(args, ","));
  try {
    w.func = def->build(args);
  } catch (const UserError& e) {
    throw UserError(fmt::format("workload '{}': {}", spec, e.what()));
  }
  // A weight is a model's constant: a schedule may choose the layout it is stored in.
  std::vector<int> weights;
  for (size_t i = 0; i < w.func->params.size(); ++i) {
    const std::string& name = w.func->params[i]->name;
    if (name == "weight" || name == "kernel") weights.push_back(static_cast<int>(i));
  }
  w.func = WithLayoutFreeParams(w.func, weights);
  w.flops = def->flops(args);
  return w;
}

}  // namespace tirtune
