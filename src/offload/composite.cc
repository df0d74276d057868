// Composites standing alone and their JSON form (library.h).
//
//   {"composite": "dnnl.conv2d", "codegen": "dnnl", "name": "relu",
//    "args": [{"name": "x", "dtype": "float32", "shape": [1, 8, 8, 6], "constant": false},
//             {"name": "c", "dtype": "float32", "shape": [], "constant": true, "value": [1.5]},
//             ...],
//    "ops": [{"name": "conv", "op": "conv2d", "attrs": {"pad": 1}, "args": [0, 1]},
//            {"name": "relu", "op": "relu", "attrs": {}, "args": [3]}]}
//
// An op argument i < len(args) is the composite's argument i, else the result of op
// i - len(args).
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "tirtune/graph/op_registry.h"
#include "tirtune/graph/validate.h"
#include "tirtune/offload/library.h"
#include "tirtune/schedule/json_text.h"

namespace tirtune::offload {
namespace {

// Constants of at most this many elements have their values in the description.
constexpr int64_t kStatedValueLimit = 16;

using graph::Call;
using graph::CallKind;
using graph::Graph;
using graph::ValueId;

nlohmann::json AttrToJson(const graph::AttrValue& value) {
  return std::visit([](const auto& v) { return nlohmann::json(v); }, value);
}

graph::AttrValue AttrFromJson(const nlohmann::json& j, const std::string& what) {
  if (j.is_number_integer()) return JsonInteger(j, what);
  if (j.is_number_float()) return j.get<double>();
  if (j.is_string()) return j.get<std::string>();
  if (j.is_array()) {
    std::vector<int64_t> ints;
    for (const nlohmann::json& e : j) ints.push_back(JsonInteger(e, what));
    return ints;
  }
  TT_USER_ERROR("{} is neither a number, a string nor a list of integers", what);
}

// Adds the operators of `body` (operator calls, or PrimFunc calls that still name their operator
// and attributes) to `out`, reading body input i as `args[i]`; returns the last result.
ValueId AddOperators(const Graph& body, const std::vector<ValueId>& args, Graph* out) {
  std::map<ValueId, ValueId> to_out;
  std::vector<ValueId> inputs = body.Inputs();
  for (size_t i = 0; i < inputs.size(); ++i) to_out[inputs[i]] = args[i];
  ValueId last = -1;
  for (const Call& c : body.calls()) {
    if (c.kind == CallKind::kGraph) TT_USER_ERROR("a composite holds a group ({})", c.op);
    std::vector<ValueId> call_args;
    for (ValueId a : c.args) call_args.push_back(to_out.at(a));
    last = to_out[c.output] =
        graph::AddOpCall(out, body.value(c.output).name, c.op, call_args, c.attrs);
  }
  return last;
}

}  // namespace

const LibraryBackend* FindBackend(const std::string& name) {
  if (name == "dnnl") return DnnlBackend();
  if (name == "cublas") return CublasBackend();
  if (name == "cudnn") return CudnnBackend();
  return nullptr;
}

Graph StandaloneComposite(const Graph& graph, const Call& call) {
  if (!call.attrs.Has(graph::kCompositeAttr) || !call.body) {
    TT_USER_ERROR("call '{}' is not a composite", call.op);
  }
  Graph out;
  std::vector<ValueId> args;
  for (ValueId a : call.args) {
    const graph::Value& v = graph.value(a);
    args.push_back(v.kind == graph::ValueKind::kConstant ? out.AddConstant(v.name, v.data)
                                                         : out.AddInput(v.name, v.type));
  }
  // The operators, as a group of their own.
  auto body = std::make_shared<Graph>();
  std::vector<ValueId> body_args;
  for (ValueId a : args) body_args.push_back(body->AddInput(out.value(a).name, out.value(a).type));
  body->AddOutput(AddOperators(*call.body, body_args, body.get()));
  Call composite;
  composite.kind = CallKind::kGraph;
  composite.op = call.op;
  composite.args = args;
  composite.body = body;
  composite.pattern = graph::OpPattern::kOpaque;
  composite.attrs.Set(graph::kCompositeAttr, call.attrs.GetString(graph::kCompositeAttr));
  composite.attrs.Set(graph::kCodegenAttr, call.attrs.GetString(graph::kCodegenAttr));
  if (call.attrs.Has(graph::kAlgorithmAttr)) {
    composite.attrs.Set(graph::kAlgorithmAttr, call.attrs.GetString(graph::kAlgorithmAttr));
  }
  const graph::Value& result = graph.value(call.output);
  out.AddOutput(out.AddCall(result.name, composite, result.type));
  graph::ValidateGraph(out);
  return out;
}

std::string CompositeToJson(const Graph& standalone, bool state_values) {
  const Call& call = standalone.call(0);
  nlohmann::json args = nlohmann::json::array();
  for (ValueId a : call.args) {
    const graph::Value& v = standalone.value(a);
    nlohmann::json arg = {{"name", v.name},
                          {"dtype", v.type.dtype.str()},
                          {"shape", v.type.shape},
                          {"constant", v.kind == graph::ValueKind::kConstant}};
    // A small constant's value: the library's kernel may depend on it (a GELU written out
    // divides by sqrt(2)), so it is measured with it (MakeMeasureTask).
    if (state_values && v.kind == graph::ValueKind::kConstant &&
        v.data.size() <= kStatedValueLimit) {
      std::vector<double> values;
      for (int64_t i = 0; i < v.data.size(); ++i) values.push_back(v.data.GetDouble(i));
      // JSON has no NaN or infinity: such a constant stays random when measured.
      if (std::all_of(values.begin(), values.end(), [](double x) { return std::isfinite(x); })) {
        arg["value"] = values;
      }
    }
    args.push_back(std::move(arg));
  }
  const Graph& body = *call.body;
  std::map<ValueId, int> index;
  std::vector<ValueId> inputs = body.Inputs();
  for (size_t i = 0; i < inputs.size(); ++i) index[inputs[i]] = static_cast<int>(i);
  nlohmann::json ops = nlohmann::json::array();
  for (const Call& c : body.calls()) {
    nlohmann::json attrs = nlohmann::json::object();
    for (const auto& [name, value] : c.attrs.values()) attrs[name] = AttrToJson(value);
    std::vector<int> refs;
    for (ValueId a : c.args) refs.push_back(index.at(a));
    index[c.output] = static_cast<int>(inputs.size() + ops.size());
    ops.push_back({{"name", body.value(c.output).name}, {"op", c.op}, {"attrs", attrs},
                   {"args", refs}});
  }
  nlohmann::json doc = {{"composite", call.attrs.GetString(graph::kCompositeAttr)},
                        {"codegen", call.attrs.GetString(graph::kCodegenAttr)},
                        {"op", call.op},
                        {"name", standalone.value(call.output).name},
                        {"args", args},
                        {"ops", ops}};
  if (call.attrs.Has(graph::kAlgorithmAttr)) {
    doc["algorithm"] = call.attrs.GetString(graph::kAlgorithmAttr);
  }
  return doc.dump();
}

std::string CompositeWithAlgorithm(const std::string& json, const std::string& algorithm) {
  nlohmann::json doc = ParseJsonText(json, "a composite's description");
  if (algorithm.empty()) {
    doc.erase("algorithm");
  } else {
    doc["algorithm"] = algorithm;
  }
  return doc.dump();
}

std::vector<std::string> LibraryAlgorithms(const std::string& json) {
  nlohmann::json doc = ParseJsonText(json, "a composite's description");
  std::map<int, NDArray> zeros;
  try {
    const nlohmann::json& args = doc.at("args");
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].at("constant").get<bool>()) continue;
      std::optional<DataType> dtype = DataType::Parse(args[i].at("dtype").get<std::string>());
      if (!dtype) return {};  // CompositeFromJson says what is wrong where it matters
      NDArray a = NDArray::Empty(args[i].at("shape").get<std::vector<int64_t>>(), *dtype);
      a.Fill(0);
      zeros[static_cast<int>(i)] = std::move(a);
    }
  } catch (const nlohmann::json::exception& e) {
    TT_USER_ERROR("a composite's description: {}", JsonErrorText(e));
  }
  const LibraryBackend* backend = FindBackend(doc.value("codegen", std::string()));
  if (backend == nullptr) return {};
  Graph standalone = CompositeFromJson(json, zeros);
  return backend->Algorithms(standalone, standalone.call(0));
}

Graph CompositeFromJson(const std::string& text, const std::map<int, NDArray>& constants) {
  nlohmann::json doc = ParseJsonText(text, "a composite's description");
  try {
    Graph out;
    std::vector<ValueId> args;
    auto body = std::make_shared<Graph>();
    std::vector<ValueId> refs;  // body values by reference number
    const nlohmann::json& arg_list = doc.at("args");
    for (size_t i = 0; i < arg_list.size(); ++i) {
      const nlohmann::json& a = arg_list[i];
      std::string what = fmt::format("argument {} of the composite", i);
      std::optional<DataType> dtype = DataType::Parse(a.at("dtype").get<std::string>());
      if (!dtype) TT_USER_ERROR("{}: unknown dtype", what);
      graph::TensorType type;
      type.dtype = *dtype;
      for (const nlohmann::json& d : a.at("shape")) type.shape.push_back(JsonInteger(d, what, 0));
      std::string name = a.at("name").get<std::string>();
      if (a.at("constant").get<bool>()) {
        auto it = constants.find(static_cast<int>(i));
        if (it == constants.end() || it->second.size() != type.NumElements() ||
            it->second.dtype() != type.dtype) {
          TT_USER_ERROR("{} is a constant {} but its data is missing or of another type", what,
                        type.str());
        }
        // Data of another shape with as many elements is this constant reshaped (a workload's
        // depthwise weight [k, k, C] is a grouped convolution's [k, k, 1, C]).
        args.push_back(out.AddConstant(name, it->second.Reshaped(type.shape)));
      } else {
        args.push_back(out.AddInput(name, type));
      }
      refs.push_back(body->AddInput(name, type));
    }
    for (const nlohmann::json& op : doc.at("ops")) {
      graph::Attrs attrs;
      for (const auto& [name, value] : op.at("attrs").items()) {
        attrs.Set(name, AttrFromJson(value, fmt::format("attribute '{}'", name)));
      }
      std::vector<ValueId> op_args;
      for (const nlohmann::json& r : op.at("args")) {
        op_args.push_back(refs.at(JsonInteger(r, "an operator's argument", 0,
                                               static_cast<int64_t>(refs.size()) - 1)));
      }
      refs.push_back(graph::AddOpCall(body.get(), op.at("name").get<std::string>(),
                                      op.at("op").get<std::string>(), op_args, attrs));
    }
    if (refs.size() == args.size()) TT_USER_ERROR("a composite without operators");
    body->AddOutput(refs.back());
    Call composite;
    composite.kind = CallKind::kGraph;
    composite.op = doc.at("op").get<std::string>();
    composite.args = args;
    composite.body = body;
    composite.pattern = graph::OpPattern::kOpaque;
    composite.attrs.Set(graph::kCompositeAttr, doc.at("composite").get<std::string>());
    composite.attrs.Set(graph::kCodegenAttr, doc.at("codegen").get<std::string>());
    if (doc.contains("algorithm")) {
      composite.attrs.Set(graph::kAlgorithmAttr, doc.at("algorithm").get<std::string>());
    }
    out.AddOutput(out.AddCall(doc.at("name").get<std::string>(), composite,
                              body->value(refs.back()).type));
    graph::ValidateGraph(out);
    return out;
  } catch (const nlohmann::json::exception& e) {
    TT_USER_ERROR("a composite's description: {}", JsonErrorText(e));
  } catch (const graph::GraphError& e) {
    TT_USER_ERROR("a composite's description: {}", e.what());
  }
}

}  // namespace tirtune::offload
