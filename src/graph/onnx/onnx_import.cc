// ImportOnnx: the driver. A model goes through these steps, each failing with a UserError that
// says what is wrong:
//   1. parse the ModelProto, read initializers stored in external data files, and find the ai.onnx
//      opset;
//   2. check the structure ourselves (supported operators, every input defined, no cycle), so
//      the common mistakes get precise messages;
//   3. run onnx::checker (on a model of a newer opset than the ONNX library knows, on a copy as of
//      the newest it knows: the newer forms the converters read stripped, operators newer than
//      the library checked as an Identity in their place);
//   4. define the initializers (host tensors) and the graph inputs (static shapes only);
//   5. convert the nodes in topological order (convert_*.cc), each converter checking the
//      ranks, shapes and attributes it needs;
//   6. run onnx::shape_inference (opsets the library knows) and check every converted result's
//      shape against the shape ONNX infers or the model declares. Only now: ONNX 1.12's inference
//      functions trust their inputs (ConvTranspose with a weight of rank 2 reads through a null
//      pointer), and by now the converters have refused every model whose nodes they cannot take;
//   7. make the model's outputs (in ONNX's layout) and drop what they do not use.
//
// For example, x[1, 3, 8, 8] → Conv(w, pads 1) → Relu → GlobalAveragePool → Flatten → Gemm(fc_w,
// transB) becomes
//   %x_channels_last = transpose(%x) {perm=[0, 2, 3, 1]} : float32[1, 8, 8, 3]
//   %c = conv2d(%x_channels_last, %w_weights) {dilation=1, groups=1, pad=1, stride=1}
//   %r = relu(%c) : float32[1, 8, 8, 4]
//   %g = global_avg_pool2d(%r) : float32[1, 1, 1, 4]
//   %g_channels_first = transpose(%g) {perm=[0, 3, 1, 2]} : float32[1, 4, 1, 1]
//   %f = reshape(%g_channels_first) {shape=[1, 4]} : float32[1, 4]
//   %y = dense(%f, %fc_w_weights) : float32[1, 10]
// with %w_weights (HWIO) and %fc_w_weights transposed at import.
#include "tirtune/graph/onnx_import.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "import_context.h"
#include "tirtune/graph/passes.h"

namespace tirtune::graph {

using onnx_import::ImportContext;
using onnx_import::ImportedValue;
using onnx_import::ShapeString;

namespace {

std::string NodeLabel(const onnx::NodeProto& node, int index) {
  return fmt::format("node {} \"{}\" ({})", index, node.name(), node.op_type());
}

// Step 1.
onnx::ModelProto ParseModel(const std::string& bytes) {
  onnx::ModelProto model;
  if (bytes.empty()) TT_USER_ERROR("not an ONNX model: the input is empty");
  if (!model.ParseFromString(bytes)) {
    TT_USER_ERROR("not an ONNX model: the bytes are not a valid ModelProto (truncated or corrupt)");
  }
  if (!model.has_graph() || model.ir_version() <= 0) {
    TT_USER_ERROR("not an ONNX model: {}", model.has_graph() ? "no ir_version" : "no graph");
  }
  return model;
}

int DefaultOpset(const onnx::ModelProto& model) {
  for (const onnx::OperatorSetIdProto& op_set : model.opset_import()) {
    if (op_set.domain().empty() || op_set.domain() == "ai.onnx") {
      return static_cast<int>(op_set.version());
    }
  }
  TT_USER_ERROR("the model imports no opset of the default domain (ai.onnx)");
}

// Step 2. Returns the node indices in a topological order.
// A graph output or value_info naming a graph input or an initializer must declare its type:
// ONNX's shape inference takes the later declaration, and libonnx 1.12 crashes on some of the
// shapes that then meet (a rank-2 "input" of ConvTranspose).
void CheckRedeclaredTypes(const onnx::GraphProto& graph) {
  std::map<std::string, std::pair<int, std::vector<int64_t>>> declared;  // elem type, dims
  for (const onnx::TensorProto& t : graph.initializer()) {
    declared[t.name()] = {t.data_type(), {t.dims().begin(), t.dims().end()}};
  }
  std::map<std::string, const onnx::ValueInfoProto*> inputs;
  for (const onnx::ValueInfoProto& v : graph.input()) inputs[v.name()] = &v;
  auto same = [](const onnx::ValueInfoProto& a, const onnx::ValueInfoProto& b) {
    const onnx::TypeProto_Tensor& x = a.type().tensor_type();
    const onnx::TypeProto_Tensor& y = b.type().tensor_type();
    if (a.type().value_case() != b.type().value_case() || x.elem_type() != y.elem_type()) {
      return false;
    }
    if (!x.has_shape() || !y.has_shape()) return true;
    if (x.shape().dim_size() != y.shape().dim_size()) return false;
    for (int d = 0; d < x.shape().dim_size(); ++d) {
      const auto& p = x.shape().dim(d);
      const auto& q = y.shape().dim(d);
      if (p.has_dim_value() && q.has_dim_value() && p.dim_value() != q.dim_value()) return false;
    }
    return true;
  };
  auto check = [&](const onnx::ValueInfoProto& v, const char* what) {
    auto in = inputs.find(v.name());
    if (in != inputs.end() && !same(v, *in->second)) {
      TT_USER_ERROR("{} '{}' declares another type than the graph input of that name", what,
                    v.name());
    }
    auto init = declared.find(v.name());
    if (in == inputs.end() && init != declared.end() && v.type().has_tensor_type()) {
      const onnx::TypeProto_Tensor& t = v.type().tensor_type();
      bool dims_differ = t.has_shape() && t.shape().dim_size() !=
                                              static_cast<int>(init->second.second.size());
      if (t.elem_type() != init->second.first || dims_differ) {
        TT_USER_ERROR("{} '{}' declares another type than the initializer of that name", what,
                      v.name());
      }
    }
  };
  for (const onnx::ValueInfoProto& v : graph.output()) check(v, "model output");
  for (const onnx::ValueInfoProto& v : graph.value_info()) check(v, "value_info");
}

std::vector<int> CheckStructure(const onnx::GraphProto& graph) {
  std::set<std::string> defined;
  for (const onnx::TensorProto& t : graph.initializer()) defined.insert(t.name());
  for (const onnx::ValueInfoProto& v : graph.input()) defined.insert(v.name());
  std::map<std::string, int> producer;
  int num_nodes = graph.node_size();
  for (int i = 0; i < num_nodes; ++i) {
    const onnx::NodeProto& node = graph.node(i);
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      TT_USER_ERROR("{}: operator domain '{}' is not supported (only ai.onnx)", NodeLabel(node, i),
                    node.domain());
    }
    if (!onnx_import::FindConverter(node.op_type())) {
      TT_USER_ERROR("{}: unsupported operator '{}'", NodeLabel(node, i), node.op_type());
    }
    for (const std::string& out : node.output()) {
      if (out.empty()) continue;
      if (defined.count(out) || !producer.emplace(out, i).second) {
        TT_USER_ERROR("{}: output '{}' is defined twice", NodeLabel(node, i), out);
      }
    }
  }
  // Kahn's algorithm in the stored order.
  std::vector<int> pending(num_nodes, 0);
  std::vector<std::vector<int>> consumers(num_nodes);
  for (int i = 0; i < num_nodes; ++i) {
    const onnx::NodeProto& node = graph.node(i);
    for (const std::string& in : node.input()) {
      if (in.empty() || defined.count(in)) continue;
      auto it = producer.find(in);
      if (it == producer.end()) {
        TT_USER_ERROR("{}: input '{}' is not defined (no node, initializer or graph input has it)",
                      NodeLabel(node, i), in);
      }
      ++pending[i];
      consumers[it->second].push_back(i);
    }
  }
  std::vector<int> order;
  std::set<int> ready;
  for (int i = 0; i < num_nodes; ++i) {
    if (pending[i] == 0) ready.insert(i);
  }
  while (!ready.empty()) {
    int i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (int c : consumers[i]) {
      if (--pending[c] == 0) ready.insert(c);
    }
  }
  if (static_cast<int>(order.size()) != num_nodes) {
    std::vector<std::string> stuck;
    for (int i = 0; i < num_nodes; ++i) {
      if (pending[i] > 0) stuck.push_back(NodeLabel(graph.node(i), i));
    }
    TT_USER_ERROR("the graph has a cycle through {}", fmt::join(stuck, ", "));
  }
  for (const onnx::ValueInfoProto& out : graph.output()) {
    if (!defined.count(out.name()) && !producer.count(out.name())) {
      TT_USER_ERROR("model output '{}' is not defined by any node", out.name());
    }
  }
  CheckRedeclaredTypes(graph);
  return order;
}

// The newest opset of the default domain the ONNX library has schemas for (17 for Debian's 1.12).
int NewestKnownOpset() {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = ranges.find("");
  return it == ranges.end() ? 0 : it->second.second;
}

// What opsets 18-21 changed in operators the library knows at an older version, and the
// converters read (each checks these itself): attributes added, and the inputs the older form
// takes at most (the axes that became an input).
struct NewerForm {
  std::set<std::string> attributes;
  int max_inputs;
};
const std::map<std::string, NewerForm>& NewerForms() {
  static const std::map<std::string, NewerForm> forms = [] {
    std::map<std::string, NewerForm> f = {
        {"Pad", {{}, 3}},
        {"Resize", {{"antialias", "axes", "keep_aspect_ratio_policy"}, 4}},
        {"Split", {{"num_outputs"}, 2}},
        {"Cast", {{"saturate"}, 1}},
        {"AveragePool", {{"dilations"}, 1}},
    };
    for (const char* reduce : {"ReduceMax", "ReduceMin", "ReduceMean", "ReduceProd", "ReduceL1",
                               "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}) {
      f[reduce] = {{"noop_with_empty_axes"}, 1};
    }
    return f;
  }();
  return forms;
}

// Operators newer than the library (GroupNormalization: 18, Gelu: 20) that the importer converts;
// each one's output has its first input's type and shape.
const std::set<std::string>& OperatorsShapedLikeTheirInput() {
  static const std::set<std::string> ops = {"Gelu", "GroupNormalization"};
  return ops;
}

// Step 3. A model of a newer opset than the library knows is checked as of the newest one it
// knows: its newer forms (NewerForms) stripped to the older, and a node of an operator newer than
// the library (OperatorsShapedLikeTheirInput) checked as an Identity of its first input.
void Check(const onnx::ModelProto& model, int opset) {
  int newest = NewestKnownOpset();
  const onnx::ModelProto* checked = &model;
  onnx::ModelProto older;
  if (opset > newest) {
    older = model;
    checked = &older;
    for (onnx::OperatorSetIdProto& op_set : *older.mutable_opset_import()) {
      if (op_set.domain().empty() || op_set.domain() == "ai.onnx") op_set.set_version(newest);
    }
    for (onnx::NodeProto& node : *older.mutable_graph()->mutable_node()) {
      if (!node.domain().empty() && node.domain() != "ai.onnx") continue;
      if (OperatorsShapedLikeTheirInput().count(node.op_type()) &&
          onnx::OpSchemaRegistry::Schema(node.op_type(), newest, "") == nullptr) {
        node.set_op_type("Identity");
        node.clear_attribute();
        while (node.input_size() > 1) node.mutable_input()->RemoveLast();
        continue;
      }
      auto form = NewerForms().find(node.op_type());
      if (form == NewerForms().end()) continue;
      auto* attributes = node.mutable_attribute();
      for (int a = attributes->size() - 1; a >= 0; --a) {
        if (form->second.attributes.count(attributes->Get(a).name()))
          attributes->DeleteSubrange(a, 1);
      }
      while (node.input_size() > form->second.max_inputs) node.mutable_input()->RemoveLast();
    }
  }
  try {
    onnx::checker::check_model(*checked);
  } catch (const std::exception& e) {
    TT_USER_ERROR("the ONNX checker rejects the model: {}", e.what());
  }
}

// Step 6.
void InferShapes(onnx::ModelProto* model) {
  try {
    onnx::shape_inference::InferShapes(*model);
  } catch (const std::exception& e) {
    TT_USER_ERROR("ONNX shape inference failed: {}", e.what());
  }
}

// The static shape of a ValueInfo, or false when a dimension is symbolic or missing.
bool StaticShape(const onnx::ValueInfoProto& info, std::vector<int64_t>* shape) {
  if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) return false;
  shape->clear();
  for (const auto& dim : info.type().tensor_type().shape().dim()) {
    if (!dim.has_dim_value()) return false;
    shape->push_back(dim.dim_value());
  }
  return true;
}

// Step 4: one graph input.
void DefineInput(const onnx::ValueInfoProto& info, const OnnxImportOptions& options,
                 ImportContext& ctx) {
  const std::string& name = info.name();
  if (auto it = options.constant_inputs.find(name); it != options.constant_inputs.end()) {
    ImportedValue v;
    v.host = it->second;
    v.shape = v.host.shape();
    DataType given = v.host.dtype();
    v.host = onnx_import::HostCast(v.host, onnx_import::HostForm(given));
    v.dtype = v.host.dtype();
    if (given.is_float()) v.SetConstantType(given);
    ctx.Define(name, std::move(v));
    return;
  }
  if (!info.type().has_tensor_type()) {
    TT_USER_ERROR(
        "graph input '{}' is not a tensor (sequences, maps and optionals are not "
        "supported)",
        name);
  }
  int elem_type = info.type().tensor_type().elem_type();
  DataType dtype;
  if (!onnx_import::GraphDataType(elem_type, &dtype)) {
    TT_USER_ERROR(
        "graph input '{}' is {}; inputs must be floats (FLOAT, DOUBLE, FLOAT16, BFLOAT16), "
        "integers or BOOL",
        name, onnx_import::ElemTypeName(elem_type));
  }
  if (!info.type().tensor_type().has_shape()) {
    TT_USER_ERROR("graph input '{}' has no shape; give one in OnnxImportOptions::input_shapes",
                  name);
  }
  std::vector<int64_t> shape;
  auto given = options.input_shapes.find(name);
  const auto& dims = info.type().tensor_type().shape().dim();
  if (given != options.input_shapes.end() &&
      given->second.size() != static_cast<size_t>(dims.size())) {
    TT_USER_ERROR("graph input '{}' has rank {}, the shape given has rank {}", name, dims.size(),
                  given->second.size());
  }
  for (int d = 0; d < dims.size(); ++d) {
    int64_t extent = dims[d].has_dim_value() ? dims[d].dim_value() : -1;
    if (given != options.input_shapes.end()) {
      if (extent >= 0 && extent != given->second[d]) {
        TT_USER_ERROR("graph input '{}': dimension {} is {}, the shape given says {}", name, d,
                      extent, given->second[d]);
      }
      extent = given->second[d];
    }
    if (extent < 0) {
      TT_USER_ERROR(
          "graph input '{}': dimension {} is dynamic ('{}'); only static shapes are supported "
          "(give one in OnnxImportOptions::input_shapes)",
          name, d, dims[d].has_dim_param() ? dims[d].dim_param() : "?");
    }
    if (extent == 0) TT_USER_ERROR("graph input '{}': dimension {} is 0", name, d);
    shape.push_back(extent);
  }
  ImportedValue v;
  v.shape = shape;
  v.dtype = dtype;
  v.plain = ctx.graph().AddInput(ctx.graph().FreshName(onnx_import::SanitizeName(name)),
                                 TensorType{shape, dtype});
  ctx.Define(name, std::move(v));
}

// Step 1b. Initializers stored in external data files (models over protobuf's 2 GiB, as PyTorch
// writes them): each one's bytes read into its raw_data, from a file named relative to `dir`
// (the model's directory) that must stay inside it, at the given offset and length.
void LoadExternalData(onnx::ModelProto* model, const std::string& dir) {
  namespace fs = std::filesystem;
  for (onnx::TensorProto& t : *model->mutable_graph()->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    std::string what = fmt::format("initializer '{}'", t.name());
    if (dir.empty()) {
      TT_USER_ERROR(
          "{}: stored in an external data file, which a model given as bytes cannot "
          "name (import it from its file)",
          what);
    }
    std::string location;
    int64_t offset = 0, length = -1;
    for (const onnx::StringStringEntryProto& e : t.external_data()) {
      auto number = [&](const char* key) {
        try {
          size_t used = 0;
          int64_t v = std::stoll(e.value(), &used);
          if (used != e.value().size() || v < 0) throw std::invalid_argument(key);
          return v;
        } catch (const std::exception&) {
          TT_USER_ERROR("{}: external data {} '{}' is not a byte count", what, key, e.value());
        }
      };
      if (e.key() == "location") location = e.value();
      if (e.key() == "offset") offset = number("offset");
      if (e.key() == "length") length = number("length");
    }
    fs::path relative(location);
    bool escapes = location.empty() || relative.is_absolute();
    for (const fs::path& part : relative) escapes = escapes || part == "..";
    if (escapes) {
      TT_USER_ERROR(
          "{}: external data location '{}' must be a file name inside the model's "
          "directory",
          what, location);
    }
    fs::path file = fs::path(dir) / relative;
    std::error_code ec;
    auto size = static_cast<int64_t>(fs::file_size(file, ec));
    if (ec) TT_USER_ERROR("{}: cannot read external data file '{}'", what, file.string());
    if (length < 0) length = size - offset;
    if (offset > size || length > size - offset) {
      TT_USER_ERROR("{}: external data [{}, {}) lies past the end of '{}' ({} bytes)", what, offset,
                    offset + length, file.string(), size);
    }
    std::string bytes(static_cast<size_t>(length), '\0');
    std::ifstream in(file, std::ios::binary);
    in.seekg(offset);
    if (!in.read(bytes.data(), length)) {
      TT_USER_ERROR("{}: cannot read external data file '{}'", what, file.string());
    }
    t.set_raw_data(std::move(bytes));
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
  }
}

}  // namespace

Graph ImportOnnxFromBytes(const std::string& bytes, const OnnxImportOptions& options) {
  // Step 1.
  onnx::ModelProto model = ParseModel(bytes);
  LoadExternalData(&model, options.external_data_dir);
  int opset = DefaultOpset(model);
  // Step 2.
  std::vector<int> order = CheckStructure(model.graph());
  // Step 3.
  if (options.run_checker) Check(model, opset);
  const onnx::GraphProto& onnx_graph = model.graph();

  Graph graph;
  ImportContext ctx(&graph, opset, options.max_import_time_bytes);
  std::map<std::string, int> uses;
  for (const onnx::NodeProto& node : onnx_graph.node()) {
    for (const std::string& in : node.input()) ++uses[in];
  }
  for (const onnx::ValueInfoProto& out : onnx_graph.output()) ++uses[out.name()];
  ctx.SetUsed(uses);

  // Step 4.
  for (const onnx::TensorProto& t : onnx_graph.initializer()) {
    ImportedValue v;
    v.host = onnx_import::TensorFromProto(t, fmt::format("initializer '{}'", t.name()));
    v.shape = v.host.shape();
    v.dtype = v.host.dtype();
    // A float initializer of another width enters the graph in its own type.
    DataType exact;
    if (onnx_import::GraphDataType(t.data_type(), &exact) && exact.is_float()) {
      v.SetConstantType(exact);
    }
    ctx.Define(t.name(), std::move(v));
  }
  for (const onnx::ValueInfoProto& info : onnx_graph.input()) {
    if (ctx.IsDefined(info.name())) continue;  // IR < 4 lists initializers as inputs too
    DefineInput(info, options, ctx);
  }

  // Step 5.
  for (int index : order) {
    const onnx::NodeProto& node = onnx_graph.node(index);
    ctx.BeginNode(&node, index);
    try {
      onnx_import::FindConverter(node.op_type())(ctx);
    } catch (const UserError& e) {
      // The import-time helpers (host_tensor.h) do not know the node: name it.
      std::string what = e.what(), label = ctx.NodeLabel();
      if (what.rfind(label, 0) == 0) throw;
      TT_USER_ERROR("{}: {}", label, what);
    }
    for (const std::string& out : node.output()) {
      if (out.empty() || !uses.count(out)) continue;
      if (!ctx.IsDefined(out)) ctx.Fail("output '{}' is not produced by the importer", out);
    }
  }

  // Step 6 (ONNX's shape inference knows the library's opsets only: a newer model is compared
  // with the shapes it declares).
  if (opset <= NewestKnownOpset()) InferShapes(&model);
  std::map<std::string, const onnx::ValueInfoProto*> inferred;
  for (const onnx::ValueInfoProto& v : onnx_graph.value_info()) inferred[v.name()] = &v;
  for (const onnx::ValueInfoProto& v : onnx_graph.output()) inferred[v.name()] = &v;
  for (int index : order) {
    const onnx::NodeProto& node = onnx_graph.node(index);
    ctx.BeginNode(&node, index);
    for (const std::string& out : node.output()) {
      if (out.empty() || !uses.count(out)) continue;
      auto it = inferred.find(out);
      std::vector<int64_t> expected;
      if (it != inferred.end() && StaticShape(*it->second, &expected) &&
          expected != ctx.Lookup(out).shape) {
        ctx.Fail("output '{}' has shape {} after import, ONNX infers {}", out,
                 ShapeString(ctx.Lookup(out).shape), ShapeString(expected));
      }
    }
  }

  // Step 7.
  ctx.BeginNode(nullptr, -1);
  for (const onnx::ValueInfoProto& out : onnx_graph.output()) {
    // An output known at import time takes the element type the model declares for it.
    ImportedValue& value = ctx.Lookup(out.name());
    DataType declared;
    if (value.is_host() && out.type().has_tensor_type() &&
        onnx_import::GraphDataType(out.type().tensor_type().elem_type(), &declared)) {
      value.SetConstantType(declared);
    }
    ValueId v = ctx.PlainOf(out.name());
    graph.AddOutput(v);
    // An operator imported as several calls names the first after its ONNX output (Gemm: the
    // product `y`, the bias add `y_1`); the output keeps the model's name.
    std::string name = onnx_import::SanitizeName(out.name());
    if (graph.value(v).kind != ValueKind::kCall || graph.value(v).name == name) continue;
    if (ValueId other = graph.Find(name); other >= 0) {
      if (graph.value(other).kind != ValueKind::kCall) continue;
      graph.RenameValue(other, graph.FreshName(name + "_part"));
    }
    graph.RenameValue(v, name);
  }
  if (graph.outputs().empty()) TT_USER_ERROR("the model has no outputs");
  return EliminateDeadCode(graph);
}

Graph ImportOnnx(const std::string& path, const OnnxImportOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) TT_USER_ERROR("cannot open ONNX model '{}'", path);
  std::stringstream bytes;
  bytes << in.rdbuf();
  OnnxImportOptions with_dir = options;
  if (with_dir.external_data_dir.empty()) {
    with_dir.external_data_dir = std::filesystem::absolute(path).parent_path().string();
  }
  try {
    return ImportOnnxFromBytes(bytes.str(), with_dir);
  } catch (const UserError& e) {
    TT_USER_ERROR("{}: {}", path, e.what());
  }
}

std::vector<std::string> SupportedOnnxOperators() { return onnx_import::ConvertedOperators(); }

}  // namespace tirtune::graph
