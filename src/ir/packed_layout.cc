// Packed layouts of constant parameters: checking a layout, the packed indices of an access, and
// packing and unpacking a tensor (one copy per element, in source order).
#include "tirtune/ir/packed_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tirtune/ir/op.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

// The digits of axis `axis`, outermost (largest divisor) first, as indices into `dims`.
std::vector<size_t> DigitsOf(const PackedLayout& layout, int axis) {
  std::vector<size_t> digits;
  for (size_t d = 0; d < layout.dims.size(); ++d) {
    if (layout.dims[d].axis == axis) digits.push_back(d);
  }
  std::sort(digits.begin(), digits.end(),
            [&](size_t a, size_t b) { return layout.dims[a].divisor > layout.dims[b].divisor; });
  return digits;
}

// For each dim: whether it is its axis's outermost digit.
std::vector<bool> OutermostDigits(const PackedLayout& layout) {
  std::vector<bool> outermost(layout.dims.size(), false);
  for (size_t a = 0; a < layout.source_shape.size(); ++a) {
    std::vector<size_t> digits = DigitsOf(layout, static_cast<int>(a));
    if (!digits.empty()) outermost[digits.front()] = true;
  }
  return outermost;
}

// Row-major strides of `shape`.
std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

// Calls f(source_offset, packed_offset) for every source element.
template <typename F>
void ForEachElement(const PackedLayout& layout, F f) {
  const std::vector<int64_t>& shape = layout.source_shape;
  std::vector<int64_t> packed_strides = Strides(layout.PackedShape());
  std::vector<bool> outermost = OutermostDigits(layout);
  int64_t total = 1;
  for (int64_t e : shape) total *= e;
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t offset = 0; offset < total; ++offset) {
    int64_t packed = 0;
    for (size_t d = 0; d < layout.dims.size(); ++d) {
      const PackedLayout::Dim& dim = layout.dims[d];
      int64_t digit = index[dim.axis] / dim.divisor;
      if (!outermost[d]) digit %= dim.extent;
      packed += digit * packed_strides[d];
    }
    f(offset, packed);
    for (size_t a = shape.size(); a-- > 0;) {
      if (++index[a] < shape[a]) break;
      index[a] = 0;
    }
  }
}

}  // namespace

std::vector<int64_t> PackedLayout::PackedShape() const {
  std::vector<int64_t> shape;
  for (const Dim& d : dims) shape.push_back(d.extent);
  return shape;
}

void PackedLayout::Check() const {
  for (size_t a = 0; a < source_shape.size(); ++a) {
    if (source_shape[a] <= 0) TT_USER_ERROR("axis {} has extent {}", a, source_shape[a]);
  }
  for (const Dim& d : dims) {
    if (d.axis < 0 || d.axis >= static_cast<int>(source_shape.size())) {
      TT_USER_ERROR("a packed dimension names axis {} of a {}-axis tensor", d.axis,
                    source_shape.size());
    }
    if (d.divisor < 1 || d.extent < 1) {
      TT_USER_ERROR("a packed dimension of axis {} has divisor {} and extent {}", d.axis, d.divisor,
                    d.extent);
    }
  }
  for (size_t a = 0; a < source_shape.size(); ++a) {
    std::vector<size_t> digits = DigitsOf(*this, static_cast<int>(a));
    const int64_t n = source_shape[a];
    if (digits.empty()) {
      if (n != 1) TT_USER_ERROR("axis {} (extent {}) has no packed dimension", a, n);
      continue;
    }
    if (dims[digits.back()].divisor != 1) {
      TT_USER_ERROR("the innermost packed dimension of axis {} divides by {}, not 1", a,
                    dims[digits.back()].divisor);
    }
    for (size_t i = 0; i + 1 < digits.size(); ++i) {
      const Dim& outer = dims[digits[i]];
      const Dim& inner = dims[digits[i + 1]];
      if (outer.divisor != inner.divisor * inner.extent) {
        TT_USER_ERROR("the packed dimensions of axis {} do not nest: divisor {} after {} x {}", a,
                      outer.divisor, inner.divisor, inner.extent);
      }
    }
    const Dim& top = dims[digits.front()];
    if (top.divisor * top.extent < n || (top.extent - 1) * top.divisor >= n) {
      TT_USER_ERROR(
          "the outermost packed dimension of axis {} ({} x {}) does not cover its "
          "extent {} tightly",
          a, top.extent, top.divisor, n);
    }
  }
}

bool PackedLayout::IsIdentity() const {
  for (size_t d = 0; d + 1 < dims.size(); ++d) {
    const Dim& a = dims[d];
    const Dim& b = dims[d + 1];
    if (a.axis > b.axis || (a.axis == b.axis && a.divisor < b.divisor)) return false;
  }
  for (size_t a = 0; a < source_shape.size(); ++a) {
    std::vector<size_t> digits = DigitsOf(*this, static_cast<int>(a));
    if (digits.empty()) continue;
    const Dim& top = dims[digits.front()];
    if (top.divisor * top.extent != source_shape[a]) return false;
  }
  return true;
}

std::vector<Expr> PackedLayout::PackedIndices(const std::vector<Expr>& source_indices) const {
  TT_ICHECK(source_indices.size() == source_shape.size(), "packed layout: shape mismatch");
  std::vector<bool> outermost = OutermostDigits(*this);
  std::vector<Expr> packed;
  for (size_t d = 0; d < dims.size(); ++d) {
    const Dim& dim = dims[d];
    Expr x = source_indices[dim.axis];
    if (dim.divisor != 1) x = FloorDiv(x, IntImm(x.dtype(), dim.divisor));
    if (!outermost[d]) x = FloorMod(x, IntImm(x.dtype(), dim.extent));
    packed.push_back(x);
  }
  return packed;
}

NDArray PackedLayout::Pack(const NDArray& source) const {
  TT_ICHECK(source.shape() == source_shape, "packed layout: shape mismatch");
  NDArray packed = NDArray::Empty(PackedShape(), source.dtype());
  std::memset(packed.raw(), 0, static_cast<size_t>(packed.nbytes()));
  const int64_t bytes = source.dtype().bytes();
  const char* from = static_cast<const char*>(source.raw());
  char* to = static_cast<char*>(packed.raw());
  ForEachElement(*this, [&](int64_t s, int64_t p) {
    std::memcpy(to + p * bytes, from + s * bytes, static_cast<size_t>(bytes));
  });
  return packed;
}

NDArray PackedLayout::Unpack(const NDArray& packed) const {
  TT_ICHECK(packed.shape() == PackedShape(), "packed layout: shape mismatch");
  NDArray source = NDArray::Empty(source_shape, packed.dtype());
  const int64_t bytes = packed.dtype().bytes();
  const char* from = static_cast<const char*>(packed.raw());
  char* to = static_cast<char*>(source.raw());
  ForEachElement(*this, [&](int64_t s, int64_t p) {
    std::memcpy(to + s * bytes, from + p * bytes, static_cast<size_t>(bytes));
  });
  return source;
}

std::string PackedLayout::ToJson() const {
  nlohmann::json dims_json = nlohmann::json::array();
  for (const Dim& d : dims) dims_json.push_back({d.axis, d.divisor, d.extent});
  return nlohmann::json{{"source_shape", source_shape}, {"dims", dims_json}}.dump();
}

PackedLayout PackedLayout::FromJson(const std::string& text, const std::string& what) {
  PackedLayout layout;
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    layout.source_shape = j.at("source_shape").get<std::vector<int64_t>>();
    for (const nlohmann::json& d : j.at("dims")) {
      if (!d.is_array() || d.size() != 3)
        throw UserError("a dimension is not [axis, divisor, extent]");
      layout.dims.push_back({d[0].get<int>(), d[1].get<int64_t>(), d[2].get<int64_t>()});
    }
    layout.Check();
  } catch (const std::exception& e) {
    TT_USER_ERROR("{}: not a packed layout: {}", what, e.what());
  }
  return layout;
}

std::map<int, PackedLayout> PackedParams(const PrimFunc& func) {
  std::map<int, PackedLayout> packed;
  auto it = func->attrs.find(kPackedParamsAttr);
  if (it == func->attrs.end()) return packed;
  const auto* text = it->second.as<StringImmNode>();
  const std::string what =
      fmt::format("function '{}', attribute {}", func->name, kPackedParamsAttr);
  if (text == nullptr) TT_USER_ERROR("{} is not a string", what);
  try {
    nlohmann::json j = nlohmann::json::parse(text->value);
    for (const auto& [key, value] : j.items()) {
      int index = std::stoi(key);
      if (index < 0 || index >= static_cast<int>(func->params.size())) {
        TT_USER_ERROR("names parameter {} of {}", index, func->params.size());
      }
      packed.emplace(index, PackedLayout::FromJson(value.dump(), "parameter " + key));
    }
  } catch (const std::exception& e) {
    TT_USER_ERROR("{}: {}", what, e.what());
  }
  return packed;
}

PrimFunc WithPackedParams(const PrimFunc& func, const std::map<int, PackedLayout>& packed) {
  std::map<std::string, Expr> attrs = func->attrs;
  attrs.erase(kPackedParamsAttr);
  if (!packed.empty()) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [index, layout] : packed) {
      j[std::to_string(index)] = nlohmann::json::parse(layout.ToJson());
    }
    attrs[kPackedParamsAttr] = StringImm(j.dump());
  }
  return PrimFunc(func->name, func->params, func->body, std::move(attrs));
}

std::vector<int> LayoutFreeParams(const PrimFunc& func) {
  std::vector<int> params;
  auto it = func->attrs.find(kLayoutFreeAttr);
  if (it == func->attrs.end()) return params;
  const auto* text = it->second.as<StringImmNode>();
  if (text == nullptr) return params;
  std::stringstream in(text->value);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos) continue;
    int index = std::stoi(item);
    if (index < static_cast<int>(func->params.size())) params.push_back(index);
  }
  std::sort(params.begin(), params.end());
  params.erase(std::unique(params.begin(), params.end()), params.end());
  return params;
}

PrimFunc WithLayoutFreeParams(const PrimFunc& func, const std::vector<int>& params) {
  std::map<std::string, Expr> attrs = func->attrs;
  attrs.erase(kLayoutFreeAttr);
  if (!params.empty()) {
    std::string text;
    for (int p : params) text += (text.empty() ? "" : ",") + std::to_string(p);
    attrs[kLayoutFreeAttr] = StringImm(text);
  }
  return PrimFunc(func->name, func->params, func->body, std::move(attrs));
}

}  // namespace tirtune
