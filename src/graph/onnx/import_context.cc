// The import state: ONNX values by name, layout conversions made on demand, attribute access and
// graph building with immediate folding of calls on constants.
#include "import_context.h"

#include <cctype>

#include "tirtune/graph/executor.h"
#include "tirtune/graph/op_registry.h"
#include "tirtune/graph/validate.h"

namespace tirtune::graph::onnx_import {

std::vector<int64_t> ToChannelsLastPerm(int rank) {
  std::vector<int64_t> perm = {0};
  for (int d = 2; d < rank; ++d) perm.push_back(d);
  perm.push_back(1);
  return perm;
}

std::vector<int64_t> FromChannelsLastPerm(int rank) {
  std::vector<int64_t> perm = {0, rank - 1};
  for (int d = 1; d < rank - 1; ++d) perm.push_back(d);
  return perm;
}

std::string ImportContext::NodeLabel() const {
  if (!node_) return "model";
  return fmt::format("node {} \"{}\" ({})", node_index_, node_->name(), node_->op_type());
}

const onnx::AttributeProto* ImportContext::Attr(const std::string& name) const {
  for (const onnx::AttributeProto& a : node_->attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

bool ImportContext::HasAttr(const std::string& name) const { return Attr(name) != nullptr; }

int64_t ImportContext::AttrInt(const std::string& name, int64_t fallback) const {
  const onnx::AttributeProto* a = Attr(name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::INT) Fail("attribute '{}' is not an integer", name);
  return a->i();
}

float ImportContext::AttrFloat(const std::string& name, float fallback) const {
  const onnx::AttributeProto* a = Attr(name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::FLOAT) Fail("attribute '{}' is not a float", name);
  return a->f();
}

std::vector<int64_t> ImportContext::AttrInts(const std::string& name,
                                             std::vector<int64_t> fallback) const {
  const onnx::AttributeProto* a = Attr(name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::INTS)
    Fail("attribute '{}' is not a list of integers", name);
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::string ImportContext::AttrString(const std::string& name, std::string fallback) const {
  const onnx::AttributeProto* a = Attr(name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::STRING) Fail("attribute '{}' is not a string", name);
  return a->s();
}

void ImportContext::RequireAttr(const std::string& name, int64_t expected) const {
  if (HasAttr(name) && AttrInt(name, expected) != expected) {
    Fail("unsupported attribute {}={} (only {} is supported)", name, AttrInt(name, expected),
         expected);
  }
}

int ImportContext::NumInputs() const { return node_->input_size(); }

bool ImportContext::HasInput(int i) const {
  return i < node_->input_size() && !node_->input(i).empty();
}

const ImportedValue& ImportContext::Input(int i) const {
  if (!HasInput(i)) Fail("input {} is missing", i);
  auto it = values_.find(node_->input(i));
  TT_ICHECK(it != values_.end(), "input '{}' checked by the driver", node_->input(i));
  return it->second;
}

const NDArray& ImportContext::HostInput(int i, const char* what) const {
  const ImportedValue& v = Input(i);
  if (!v.is_host()) {
    Fail("input {} '{}' ({}) must be known at import time (a constant or a shape computation)", i,
         node_->input(i), what);
  }
  return v.host;
}

void ImportContext::RequireFloat(int i) const {
  const ImportedValue& v = Input(i);
  if (v.dtype != DataType::Float(32)) {
    Fail("input {} '{}' is {}; only float32 is supported here", i, node_->input(i), v.dtype.str());
  }
}

void ImportContext::RequireNumber(int i) const {
  if (Input(i).dtype.is_bool()) {
    Fail("input {} '{}' is bool; a number type is needed here", i, node_->input(i));
  }
}

DataType ImportContext::UnifyTypes(const std::vector<int>& inputs) {
  std::optional<DataType> type;
  int first = -1;
  for (int i : inputs) {
    const ImportedValue& v = Input(i);
    if (v.is_host()) continue;
    if (type && *type != v.dtype) {
      Fail("input {} '{}' is {} but input {} '{}' is {}", first, node_->input(first), type->str(),
           i, node_->input(i), v.dtype.str());
    }
    type = v.dtype;
    first = i;
  }
  if (!type) return Input(inputs[0]).dtype;
  for (int i : inputs) {
    ImportedValue& v = Lookup(node_->input(i));
    if (v.is_host()) v.SetConstantType(*type);
  }
  return *type;
}

std::vector<int> ImportContext::InputIndices() const {
  std::vector<int> all(NumInputs());
  for (int i = 0; i < NumInputs(); ++i) all[i] = i;
  return all;
}

int ImportContext::NormalizeAxis(int64_t axis, int rank) const {
  if (axis < -rank || axis >= rank) Fail("axis {} is out of range for rank {}", axis, rank);
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

double ImportContext::HostScalar(int i, const char* what) const {
  const NDArray& v = HostInput(i, what);
  if (v.size() != 1) Fail("input {} ({}) must hold one element, it has {}", i, what, v.size());
  return v.GetDouble(0);
}

void ImportContext::CheckHostShape(const std::vector<int64_t>& shape) const {
  int64_t total = 1;
  for (int64_t e : shape) {
    if (e < 0) Fail("negative extent in shape {}", ShapeString(shape));
    if (e > 0 && total > kMaxHostElements / e) {
      Fail("a tensor of shape {} is too large to compute at import time", ShapeString(shape));
    }
    total *= e;
  }
}

ValueId ImportContext::Plain(int i) {
  Input(i);
  return PlainOf(node_->input(i));
}

ValueId ImportContext::ChannelsLast(int i) {
  Input(i);
  return ChannelsLastOf(node_->input(i));
}

ImportedValue& ImportContext::Lookup(const std::string& name) {
  auto it = values_.find(name);
  TT_ICHECK(it != values_.end(), "value '{}' not defined", name);
  return it->second;
}

void ImportContext::Define(const std::string& name, ImportedValue value) {
  values_[name] = std::move(value);
}

ValueId ImportContext::PlainOf(const std::string& name) {
  ImportedValue& v = Lookup(name);
  if (v.plain >= 0) return v.plain;
  if (v.is_host()) {
    v.plain = Constant(ConstantData(v), SanitizeName(name));
  } else {
    TT_ICHECK(v.channels_last >= 0, "value '{}' has no graph form", name);
    int rank = static_cast<int>(v.shape.size());
    v.plain = Emit("transpose", {v.channels_last}, {{"perm", FromChannelsLastPerm(rank)}},
                   SanitizeName(name) + "_channels_first");
  }
  return v.plain;
}

ValueId ImportContext::ChannelsLastOf(const std::string& name) {
  ImportedValue& v = Lookup(name);
  if (v.channels_last >= 0) return v.channels_last;
  int rank = static_cast<int>(v.shape.size());
  TT_ICHECK(rank >= 3, "channel-last form of rank-{} value '{}'", rank, name);
  std::string cl_name = SanitizeName(name) + "_channels_last";
  if (v.is_host()) {
    v.channels_last = Constant(HostTranspose(ConstantData(v), ToChannelsLastPerm(rank)), cl_name);
  } else {
    v.channels_last = Emit("transpose", {v.plain}, {{"perm", ToChannelsLastPerm(rank)}}, cl_name);
  }
  return v.channels_last;
}

std::string SanitizeName(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v" + out;
  return out;
}

std::string ImportContext::BaseName() const {
  if (node_ && node_->output_size() > 0) return SanitizeName(node_->output(0));
  return "c";
}

ValueId ImportContext::Emit(const std::string& op, std::vector<ValueId> args, Attrs attrs,
                            const std::string& name) {
  try {
    ValueId id = AddOpCall(graph_, graph_->FreshName(name.empty() ? BaseName() : name), op, args,
                           std::move(attrs));
    bool all_constant = true;
    for (ValueId a : args) {
      all_constant = all_constant && graph_->value(a).kind == ValueKind::kConstant;
    }
    if (!all_constant) return id;
    const Call& call = graph_->call(graph_->value(id).producer);
    std::vector<NDArray> arrays;
    for (ValueId a : args) arrays.push_back(graph_->value(a).data);
    return Constant(RunCall(*graph_, call, arrays));
  } catch (const UserError& e) {
    Fail("{}", e.what());
  }
}

ValueId ImportContext::Constant(const NDArray& data, const std::string& name) {
  if (data.size() == 0) Fail("empty tensors are not supported in the graph");
  std::string base = !name.empty() ? name : node_ ? BaseName() + "_const" : "const";
  return graph_->AddConstant(graph_->FreshName(base), data);
}

ValueId ImportContext::Reshaped(ValueId v, const Ints& shape) {
  if (graph_->value(v).type.shape == shape) return v;
  return Emit("reshape", {v}, {{"shape", shape}});
}

void ImportContext::SetHost(int i, NDArray value) {
  host_bytes_ += value.nbytes();
  if (host_bytes_ > max_host_bytes_) {
    Fail("the tensors computed at import time would hold more than {} MiB in all (this one: {}, "
         "{} MiB)",
         max_host_bytes_ >> 20, ShapeString(value.shape()).substr(0, 200), value.nbytes() >> 20);
  }
  ImportedValue v;
  v.shape = value.shape();
  v.dtype = value.dtype();
  v.host = std::move(value);
  Define(OutputName(i), std::move(v));
}

void ImportContext::SetPlain(int i, ValueId value) {
  const Value& gv = graph_->value(value);
  ImportedValue v;
  v.shape = gv.type.shape;
  v.dtype = gv.type.dtype;
  if (gv.kind == ValueKind::kConstant) v.host = gv.data;  // folded: known now
  v.plain = value;
  Define(OutputName(i), std::move(v));
}

const std::string& ImportContext::OutputName(int i) const {
  if (i >= node_->output_size()) {
    Fail("output {} is missing (the node has {})", i, node_->output_size());
  }
  return node_->output(i);
}

void ImportContext::Alias(int i, int from) { Define(OutputName(i), Input(from)); }

void ImportContext::SetChannelsLast(int i, ValueId value) {
  const Value& gv = graph_->value(value);
  ImportedValue v;
  int rank = gv.type.ndim();
  for (int64_t d : FromChannelsLastPerm(rank)) v.shape.push_back(gv.type.shape[d]);
  v.dtype = gv.type.dtype;
  if (gv.kind == ValueKind::kConstant) {
    v.host = HostTranspose(gv.data, FromChannelsLastPerm(static_cast<int>(v.shape.size())));
  }
  v.channels_last = value;
  Define(OutputName(i), std::move(v));
}

bool ImportContext::IsUsedOutput(int i) const {
  if (i >= node_->output_size() || node_->output(i).empty()) return false;
  auto it = uses_.find(node_->output(i));
  return it != uses_.end() && it->second > 0;
}

void ImportContext::RequireUnusedOutput(int i) const {
  if (IsUsedOutput(i)) {
    Fail("output {} '{}' is used, but only the first output of {} is supported", i,
         node_->output(i), node_->op_type());
  }
}

}  // namespace tirtune::graph::onnx_import
