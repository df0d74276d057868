// The operator registry: every operator a graph may call, with its inputs, attribute schema,
// declared fusion pattern, and how it becomes a tensor expression (which gives both its output
// type and, through CreatePrimFunc, the PrimFunc LegalizeOps calls).
//
// Layouts follow the te operator library: activations are channel-last (NHWC), convolution
// weights are [KH, KW, CI / groups, CO], dense weights [N, K].
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tirtune/graph/graph.h"
#include "tirtune/te/tensor.h"

namespace tirtune::graph {

/// The type an attribute must have.
enum class AttrType : uint8_t { kInt, kFloat, kInts, kString };
const char* AttrTypeName(AttrType type);

/// One attribute an operator takes. An optional attribute has a default.
struct AttrSpec {
  std::string name;
  AttrType type = AttrType::kInt;
  bool required = false;
  AttrValue default_value = int64_t{0};
};

/// One operator.
struct OpDef {
  std::string name;
  /// Names of the inputs, in order; with `variadic`, the one name describes every input (at least
  /// one).
  std::vector<std::string> inputs;
  bool variadic = false;
  std::vector<AttrSpec> attrs;
  /// The fusion pattern of the operator on its example; AnnotateOpPattern computes the same from
  /// the legalized function (a test checks that they agree).
  OpPattern pattern = OpPattern::kOpaque;
  /// The result as a tensor expression over `inputs` (placeholders of the argument types), with
  /// every attribute present (defaults filled in). Throws UserError for inputs or attributes it
  /// cannot accept (a shape mismatch, a bad axis).
  std::function<te::Tensor(const std::vector<te::Tensor>& inputs, const Attrs& attrs)> compute;
  /// A small valid instance, used by tests and documentation.
  std::vector<TensorType> example_inputs;
  Attrs example_attrs;
};

/// Every operator, sorted by name.
const std::vector<OpDef>& AllOps();
/// The operator named `name`, or nullptr.
const OpDef* FindOp(std::string_view name);

/// `attrs` checked against `op`'s schema, with defaults filled in. Throws UserError naming the
/// attribute (missing, of the wrong type, or unknown to the operator).
Attrs CheckAttrs(const OpDef& op, const Attrs& attrs);

/// The output type of `op` applied to arguments of `arg_types`. Throws UserError for a wrong
/// number of arguments, bad attributes or inputs the operator rejects.
TensorType InferType(const OpDef& op, const std::vector<TensorType>& arg_types, const Attrs& attrs);

/// The PrimFunc computing `op` on arguments of `arg_types`: parameters are the arguments, then
/// the output; the function is named `func_name`.
PrimFunc LegalizeOp(const OpDef& op, const std::vector<TensorType>& arg_types, const Attrs& attrs,
                    const std::string& func_name);

/// Adds a call of the operator `op` to `graph`, inferring its output type. Throws UserError naming
/// the node (`%name = op(...)`) when the operator is unknown or rejects the arguments.
ValueId AddOpCall(Graph* graph, const std::string& name, const std::string& op,
                  std::vector<ValueId> args, Attrs attrs = {});

}  // namespace tirtune::graph
