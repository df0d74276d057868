// The operator registry (every family's definitions, sorted by name), attribute checking, type
// inference and legalization of one operator through the te operator library.
#include "tirtune/graph/op_registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "ops/op_families.h"
#include "tirtune/graph/validate.h"
#include "tirtune/support/error.h"
#include "tirtune/te/create_prim_func.h"

namespace tirtune::graph {

const char* AttrTypeName(AttrType type) {
  switch (type) {
    case AttrType::kInt:
      return "an integer";
    case AttrType::kFloat:
      return "a float";
    case AttrType::kInts:
      return "a list of integers";
    case AttrType::kString:
      return "a string";
  }
  return "?";
}

int NormalizeAxis(int64_t axis, int ndim, const char* op) {
  if (axis < -ndim || axis >= ndim) {
    TT_USER_ERROR("{}: axis {} is out of range for rank {}", op, axis, ndim);
  }
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

const std::vector<OpDef>& AllOps() {
  static const std::vector<OpDef> ops = [] {
    std::vector<OpDef> all;
    for (auto family : {ElementwiseOps, NnOps, LayoutOps, ReduceOps}) {
      for (OpDef& def : family()) all.push_back(std::move(def));
    }
    std::sort(all.begin(), all.end(),
              [](const OpDef& a, const OpDef& b) { return a.name < b.name; });
    return all;
  }();
  return ops;
}

const OpDef* FindOp(std::string_view name) {
  for (const OpDef& def : AllOps()) {
    if (def.name == name) return &def;
  }
  return nullptr;
}

namespace {

bool HasType(const AttrValue& value, AttrType type) {
  switch (type) {
    case AttrType::kInt:
      return std::holds_alternative<int64_t>(value);
    case AttrType::kFloat:  // an integer is accepted where a float is expected
      return std::holds_alternative<double>(value) || std::holds_alternative<int64_t>(value);
    case AttrType::kInts:
      return std::holds_alternative<std::vector<int64_t>>(value);
    case AttrType::kString:
      return std::holds_alternative<std::string>(value);
  }
  return false;
}

// Placeholders of the argument types, named after the operator's inputs.
std::vector<te::Tensor> MakePlaceholders(const OpDef& op, const std::vector<TensorType>& types) {
  size_t expected = op.inputs.size();
  if (op.variadic ? types.empty() : types.size() != expected) {
    TT_USER_ERROR("{} takes {}{} argument{}, got {}", op.name, op.variadic ? "at least " : "",
                  op.variadic ? 1 : expected, expected == 1 ? "" : "s", types.size());
  }
  // Inputs that share an element type in the operator's example must share one here: the
  // compute combines them, and float32 with int64 (a model's int64 batch-norm mean) would end as
  // an internal error deep inside it.
  if (!op.example_inputs.empty()) {
    auto example_dtype = [&](size_t i) {
      return op.example_inputs[std::min(i, op.example_inputs.size() - 1)].dtype;
    };
    auto input_name = [&](size_t i) {
      return op.variadic ? fmt::format("{}{}", op.inputs[0], i) : op.inputs[i];
    };
    for (size_t i = 1; i < types.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (example_dtype(i) == example_dtype(j) && types[i].dtype != types[j].dtype) {
          TT_USER_ERROR("{}: input {} ({}) is {} and input {} ({}) is {}; they must have one "
                        "element type",
                        op.name, j, input_name(j), types[j].dtype.str(), i, input_name(i),
                        types[i].dtype.str());
        }
      }
    }
  }
  std::vector<te::Tensor> placeholders;
  for (size_t i = 0; i < types.size(); ++i) {
    std::string name = op.variadic ? fmt::format("{}{}", op.inputs[0], i) : op.inputs[i];
    placeholders.push_back(te::Placeholder(
        std::vector<Expr>(types[i].shape.begin(), types[i].shape.end()), types[i].dtype, name));
  }
  return placeholders;
}

}  // namespace

Attrs CheckAttrs(const OpDef& op, const Attrs& attrs) {
  for (const auto& [name, value] : attrs.values()) {
    auto spec = std::find_if(op.attrs.begin(), op.attrs.end(),
                             [&key = name](const AttrSpec& s) { return s.name == key; });
    if (spec == op.attrs.end()) {
      std::vector<std::string> known;
      for (const AttrSpec& s : op.attrs) known.push_back(s.name);
      TT_USER_ERROR("{} has no attribute '{}' (it takes: {})", op.name, name,
                    known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", ")));
    }
    if (!HasType(value, spec->type)) {
      TT_USER_ERROR("{}: attribute '{}' is {}, expected {}", op.name, name,
                    AttrValueToString(value), AttrTypeName(spec->type));
    }
  }
  Attrs full = attrs;
  for (const AttrSpec& spec : op.attrs) {
    if (full.Has(spec.name)) continue;
    if (spec.required) {
      TT_USER_ERROR("{}: missing required attribute '{}' ({})", op.name, spec.name,
                    AttrTypeName(spec.type));
    }
    full.Set(spec.name, spec.default_value);
  }
  return full;
}

TensorType InferType(const OpDef& op, const std::vector<TensorType>& arg_types,
                     const Attrs& attrs) {
  Attrs full = CheckAttrs(op, attrs);
  te::Tensor out = op.compute(MakePlaceholders(op, arg_types), full);
  TensorType type;
  type.dtype = out.dtype();
  for (int d = 0; d < out.ndim(); ++d) type.shape.push_back(out.dim(d));
  return type;
}

PrimFunc LegalizeOp(const OpDef& op, const std::vector<TensorType>& arg_types, const Attrs& attrs,
                    const std::string& func_name) {
  Attrs full = CheckAttrs(op, attrs);
  std::vector<te::Tensor> args = MakePlaceholders(op, arg_types);
  args.push_back(op.compute(args, full));
  return te::CreatePrimFunc(args, func_name);
}

ValueId AddOpCall(Graph* graph, const std::string& name, const std::string& op,
                  std::vector<ValueId> args, Attrs attrs) {
  std::vector<std::string> arg_names;
  std::vector<TensorType> arg_types;
  for (ValueId a : args) {
    if (a < 0 || a >= static_cast<ValueId>(graph->values().size())) {
      throw GraphError(
          fmt::format("%{} = {}(...): argument {} is not a value of the graph", name, op, a));
    }
    arg_names.push_back("%" + graph->value(a).name);
    arg_types.push_back(graph->value(a).type);
  }
  std::string node = fmt::format("%{} = {}({})", name, op, fmt::join(arg_names, ", "));
  const OpDef* def = FindOp(op);
  if (!def) throw GraphError(fmt::format("{}: unknown operator '{}'", node, op));
  TensorType type;
  try {
    type = InferType(*def, arg_types, attrs);
  } catch (const GraphError&) {
    throw;
  } catch (const UserError& e) {
    throw GraphError(fmt::format("{}: {}", node, e.what()));
  }
  ValueId id = graph->AddOp(name, op, std::move(args), std::move(attrs), std::move(type));
  graph->mutable_call(graph->value(id).producer).pattern = def->pattern;
  return id;
}

}  // namespace tirtune::graph
