// The graph IR: a dataflow graph of operator calls on statically shaped tensors. A model enters
// as calls of named operators (conv2d, add, ...); LegalizeOps turns each into a call of a
// PrimFunc, FuseOps groups calls into nested graphs, and FuseTIR merges each group back into one
// PrimFunc, so that after the pipeline every call is a call of a PrimFunc (a task to tune).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "tirtune/ir/function.h"
#include "tirtune/support/dtype.h"
#include "tirtune/support/ndarray.h"

namespace tirtune::graph {

/// The static type of a tensor value: its shape and element type.
struct TensorType {
  std::vector<int64_t> shape;
  DataType dtype = DataType::Float(32);

  int ndim() const { return static_cast<int>(shape.size()); }
  int64_t NumElements() const;
  /// "float32[1, 8, 8, 3]".
  std::string str() const;
  friend bool operator==(const TensorType& a, const TensorType& b) {
    return a.shape == b.shape && a.dtype == b.dtype;
  }
  friend bool operator!=(const TensorType& a, const TensorType& b) { return !(a == b); }
};

/// Whether `t` can be a tensor's element type in the graph: bool, 8- to 64-bit integers
/// (signed or not), float16, bfloat16, float32 and float64 (scalar, not a vector or a handle).
bool IsTensorElementType(DataType t);

/// A float32 tensor type (the common case in tests and models).
inline TensorType F32(std::vector<int64_t> shape) {
  return TensorType{std::move(shape), DataType::Float(32)};
}

/// A list of integers, spelled short for attribute literals: {"perm", Ints{0, 3, 1, 2}}.
using Ints = std::vector<int64_t>;

/// The value of one attribute of a call: an integer, a float, a list of integers or a string.
using AttrValue = std::variant<int64_t, double, std::vector<int64_t>, std::string>;

/// The attributes of a call, sorted by name. Getters throw UserError naming the attribute when
/// it is missing or has another type (the validator checks calls against their op's schema
/// first, so inside passes they do not fail).
class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<const std::string, AttrValue>> values) : values_(values) {}

  bool Has(const std::string& name) const { return values_.count(name) != 0; }
  void Set(const std::string& name, AttrValue value) { values_[name] = std::move(value); }
  const std::map<std::string, AttrValue>& values() const { return values_; }

  int64_t GetInt(const std::string& name) const;
  double GetFloat(const std::string& name) const;  // an integer value is converted
  const std::vector<int64_t>& GetInts(const std::string& name) const;
  const std::string& GetString(const std::string& name) const;

  friend bool operator==(const Attrs& a, const Attrs& b) { return a.values_ == b.values_; }

 private:
  std::map<std::string, AttrValue> values_;
};

/// "1", "0.5", "[1, 2]", "\"NHWC\"".
std::string AttrValueToString(const AttrValue& value);

/// How freely an operator fuses with its neighbours (TVM's OpPatternKind); a larger kind is
/// harder to fuse, and merging two kinds gives the larger one.
enum class OpPattern : uint8_t {
  kElemWise = 0,         // out[i] = f(in[i]) for every input of the output's shape
  kBroadcast = 1,        // inputs indexed by an ordered subset of the output's axes
  kInjective = 2,        // each output element reads single input elements (reshape, transpose)
  kCommReduce = 3,       // a commutative reduction (sum, max, mean, pooling, softmax)
  kOutEWiseFusable = 4,  // a multiply-accumulate (conv2d, dense) that takes an elementwise epilogue
  kOpaque = 8,           // never fused
};
/// "elemwise", "broadcast", "injective", "comm_reduce", "out_ewise_fusable", "opaque".
const char* OpPatternName(OpPattern pattern);

/// Index of a value in its graph.
using ValueId = int;

/// Where a value comes from.
enum class ValueKind : uint8_t { kInput, kConstant, kCall };

/// A tensor in the graph: a graph input, a constant (weights), or the result of a call.
struct Value {
  std::string name;  // unique in the graph; printed as %name
  ValueKind kind = ValueKind::kInput;
  TensorType type;
  NDArray data;       // kConstant only
  int producer = -1;  // kCall only: index of the call in Graph::calls()
};

class Graph;

/// What a call invokes.
enum class CallKind : uint8_t {
  kOp,        // a registered operator by name, with attributes
  kPrimFunc,  // a PrimFunc: parameters are the arguments, then the output (call_tir)
  kGraph,     // a fused group: a nested graph whose inputs are the arguments, in order
};

/// One call: its arguments are values, its single result is the value `output`.
struct Call {
  CallKind kind = CallKind::kOp;
  /// kOp: the operator's name. Later kinds keep a readable hint: the operator a PrimFunc was
  /// legalized from, or "fused_conv2d_bias_add_relu" for a group.
  std::string op;
  Attrs attrs;  // kOp only (kept as a hint after legalization)
  std::vector<ValueId> args;
  ValueId output = -1;
  PrimFunc func;                      // kPrimFunc
  /// kGraph; also a composite's PrimFunc call (attribute Composite, graph/pattern.h): the group
  /// FuseTIR merged, its operators legalized, kept for the library backend.
  std::shared_ptr<const Graph> body;
  /// The fusion pattern: declared by the operator for kOp, computed from the function by
  /// AnnotateOpPattern for kPrimFunc, the group's for kGraph.
  OpPattern pattern = OpPattern::kOpaque;
};

/// A dataflow graph. Calls are stored in the order they were added; the validator checks that
/// it is a topological order (every argument is defined before its use) and that there is no
/// cycle. The graph is a plain mutable value: passes build a new graph and return it.
class Graph {
 public:
  /// A graph input; names must be unique among all values.
  ValueId AddInput(std::string name, TensorType type);
  /// A constant; its type is the array's shape and dtype.
  ValueId AddConstant(std::string name, NDArray data);
  /// A call with a known output type. Nothing is checked here (see ValidateGraph and AddOpCall,
  /// which infers the type); the result value is named `name`.
  ValueId AddCall(std::string name, Call call, TensorType type);
  ValueId AddOp(std::string name, std::string op, std::vector<ValueId> args, Attrs attrs,
                TensorType type);
  void AddOutput(ValueId value) { outputs_.push_back(value); }
  /// Gives value `id` the name `name`; UserError when another value has it.
  void RenameValue(ValueId id, std::string name);
  void SetOutputs(std::vector<ValueId> outputs) { outputs_ = std::move(outputs); }

  const std::vector<Value>& values() const { return values_; }
  const std::vector<Call>& calls() const { return calls_; }
  const std::vector<ValueId>& outputs() const { return outputs_; }
  /// The graph inputs in the order they were added.
  std::vector<ValueId> Inputs() const;

  const Value& value(ValueId id) const;
  const Call& call(int index) const;
  /// For building deliberately broken graphs in tests and for in-place rewrites.
  Call& mutable_call(int index);
  /// The value named `name`, or -1.
  ValueId Find(const std::string& name) const;
  /// The call producing `name`'s value; throws UserError when there is none.
  const Call& CallOf(const std::string& name) const;
  /// A name not used by any value yet: `base`, else base_1, base_2, ...
  std::string FreshName(const std::string& base) const;

 private:
  ValueId AddValue(Value value);
  std::vector<Value> values_;
  std::vector<Call> calls_;
  std::vector<ValueId> outputs_;
  std::map<std::string, ValueId> names_;
};

}  // namespace tirtune::graph
