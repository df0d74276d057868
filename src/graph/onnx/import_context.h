// The state of one ONNX import: what each ONNX value has become (a host tensor known now, or a
// graph value in ONNX's layout and/or channel-last), the node being converted (for messages),
// and the helpers the operator converters share. Private to src/graph/onnx/.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "host_tensor.h"
#include "tirtune/graph/graph.h"
#include "tirtune/support/error.h"

namespace tirtune::graph::onnx_import {

/// One ONNX value. `shape` is always ONNX's (logical) shape. A value is either known at import
/// time (`host`) or computed by the graph, where it exists in ONNX's layout (`plain`), with axis 1
/// moved last (`channels_last`, for convolutions and pools), or both; the other form is made on
/// demand by a transpose and remembered.
struct ImportedValue {
  std::vector<int64_t> shape;
  DataType dtype = DataType::Float(32);
  NDArray host;
  ValueId plain = -1;
  ValueId channels_last = -1;
  /// For a host value: the element type its graph constant takes, when a graph-computed operand
  /// has shown the ONNX type it shares with this value (UnifyTypes); the host type otherwise.
  std::optional<DataType> constant_dtype;

  bool is_host() const { return host.defined(); }
  /// For a host value: its graph constant takes element type `t` (a constant made in another
  /// type is forgotten).
  void SetConstantType(DataType t) {
    if (constant_dtype.value_or(dtype) == t) return;
    constant_dtype = t;
    plain = -1;
    channels_last = -1;
  }
};

/// The data of host value `v` as its graph constant holds it (in v.constant_dtype when set).
inline NDArray ConstantData(const ImportedValue& v) {
  return v.constant_dtype ? HostCast(v.host, *v.constant_dtype) : v.host;
}

/// The permutation taking ONNX's layout [N, C, D1, ..., Dk] to [N, D1, ..., Dk, C] (rank >= 3),
/// and its inverse.
std::vector<int64_t> ToChannelsLastPerm(int rank);
std::vector<int64_t> FromChannelsLastPerm(int rank);

class ImportContext {
 public:
  /// `max_host_bytes`: OnnxImportOptions::max_import_time_bytes.
  ImportContext(Graph* graph, int opset, int64_t max_host_bytes = int64_t{4} << 30)
      : graph_(graph), opset_(opset), max_host_bytes_(max_host_bytes) {}

  Graph& graph() { return *graph_; }
  int opset() const { return opset_; }

  // ---- The node being converted.
  void BeginNode(const onnx::NodeProto* node, int index) {
    node_ = node;
    node_index_ = index;
  }
  const onnx::NodeProto& node() const { return *node_; }
  /// `node 12 "conv1" (Conv)`.
  std::string NodeLabel() const;
  /// Throws UserError "<node label>: <message>".
  template <typename... Args>
  [[noreturn]] void Fail(fmt::format_string<Args...> f, Args&&... args) const {
    throw UserError(NodeLabel() + ": " + fmt::format(f, std::forward<Args>(args)...));
  }

  // ---- Attributes of the current node.
  bool HasAttr(const std::string& name) const;
  int64_t AttrInt(const std::string& name, int64_t fallback) const;
  float AttrFloat(const std::string& name, float fallback) const;
  std::vector<int64_t> AttrInts(const std::string& name, std::vector<int64_t> fallback) const;
  std::string AttrString(const std::string& name, std::string fallback) const;
  /// The attribute itself (nullptr when absent).
  const onnx::AttributeProto* Attr(const std::string& name) const;
  /// Fails unless `name` is absent or equal to `expected`, saying the value is unsupported.
  void RequireAttr(const std::string& name, int64_t expected) const;

  // ---- Inputs and outputs of the current node.
  int NumInputs() const;
  /// Whether input i is given (an omitted optional input is "").
  bool HasInput(int i) const;
  const ImportedValue& Input(int i) const;
  /// Input i as a host tensor; fails naming `what` when it is computed by the graph.
  const NDArray& HostInput(int i, const char* what) const;
  /// Input i in the graph, in ONNX's layout / channel-last (made on demand).
  ValueId Plain(int i);
  ValueId ChannelsLast(int i);
  /// Fails unless input i is float32.
  void RequireFloat(int i) const;
  /// Fails when input i is bool (arithmetic needs numbers).
  void RequireNumber(int i) const;
  /// The element type T that ONNX gives inputs `inputs` together: that of the graph-computed
  /// ones (they must agree), or input inputs[0]'s when all are known at import time. Host inputs
  /// among them then enter the graph as constants of T (a host tensor holds every integer type
  /// as int64 and every float as float32).
  DataType UnifyTypes(const std::vector<int>& inputs);
  /// 0, 1, ..., NumInputs() - 1.
  std::vector<int> InputIndices() const;
  /// `axis` (negative counts from the end) as a position in [0, rank); fails when out of range.
  int NormalizeAxis(int64_t axis, int rank) const;
  /// The one element of input i (known at import time) as a double.
  double HostScalar(int i, const char* what) const;
  /// Fails when a tensor of `shape` computed at import time would be empty-shaped wrongly
  /// (negative extents) or too large to hold (more than 2^28 elements).
  void CheckHostShape(const std::vector<int64_t>& shape) const;

  /// Sets output i of the node; fails when the import-time tensors would pass the budget
  /// (OnnxImportOptions::max_import_time_bytes).
  void SetHost(int i, NDArray value);
  void SetPlain(int i, ValueId value);
  /// `value` is channel-last; the ONNX shape is its shape with the last axis moved to 1.
  void SetChannelsLast(int i, ValueId value);
  /// Output i is input `from` itself (Identity, Dropout, a no-op reshape).
  void Alias(int i, int from);
  /// Fails when output i (i >= 1) is used by a later node or the model (multi-output operators
  /// convert only their first output).
  void RequireUnusedOutput(int i) const;
  /// Whether output i exists and a later node or the model reads it.
  bool IsUsedOutput(int i) const;

  // ---- Graph building.
  /// A call of `op` named after the node's first output. When every argument is a constant the
  /// call is evaluated now (and left dead for EliminateDeadCode), and a constant is returned.
  /// `name` overrides the value's name.
  ValueId Emit(const std::string& op, std::vector<ValueId> args, Attrs attrs = {},
               const std::string& name = "");
  /// A graph constant holding `data`, named `name` (default: after the node's output).
  ValueId Constant(const NDArray& data, const std::string& name = "");
  /// `v` reshaped to `shape`; `v` itself when it already has that shape.
  ValueId Reshaped(ValueId v, const Ints& shape);
  /// A float32 constant of shape [1] (FloatScalar).
  ValueId ScalarConstant(double value) { return Constant(FloatScalar(value)); }

  // ---- Values by ONNX name (for the driver).
  void Define(const std::string& name, ImportedValue value);
  bool IsDefined(const std::string& name) const { return values_.count(name) != 0; }
  ImportedValue& Lookup(const std::string& name);
  ValueId PlainOf(const std::string& name);
  ValueId ChannelsLastOf(const std::string& name);
  /// Names of values that some node or the model output reads (set by the driver).
  void SetUsed(std::map<std::string, int> uses) { uses_ = std::move(uses); }

 private:
  /// The name of the current node's output i; Fail when the node has no such output.
  const std::string& OutputName(int i) const;

  std::string BaseName() const;

  Graph* graph_;
  int opset_;
  int64_t max_host_bytes_;
  int64_t host_bytes_ = 0;  // held by the tensors SetHost has defined so far
  const onnx::NodeProto* node_ = nullptr;
  int node_index_ = -1;
  std::map<std::string, ImportedValue> values_;
  std::map<std::string, int> uses_;
};

/// An ONNX name as a graph value name: letters, digits and '_' ("onnx::Conv_3" gives
/// "onnx__Conv_3").
std::string SanitizeName(const std::string& name);

/// Converts the current node of `ctx` (one function per ONNX operator, in convert_*.cc).
using Converter = void (*)(ImportContext& ctx);

/// The converter of ONNX operator `op_type` (domain ai.onnx), or nullptr.
Converter FindConverter(const std::string& op_type);
/// Every operator with a converter, sorted.
std::vector<std::string> ConvertedOperators();

/// The NDArray of a TensorProto in its host form (float32 for every float type, int64 for every
/// integer type, bool). `what` names the tensor in messages.
NDArray TensorFromProto(const onnx::TensorProto& proto, const std::string& what);
/// The element type a host tensor gets for ONNX elem_type `elem_type`, or false when unsupported.
bool HostDataType(int elem_type, DataType* dtype);
/// The element type a graph tensor of ONNX elem_type `elem_type` has, or false when unsupported.
bool GraphDataType(int elem_type, DataType* dtype);
/// "FLOAT", "INT64", ... for messages.
std::string ElemTypeName(int elem_type);

}  // namespace tirtune::graph::onnx_import
