// Storage alignment: the requests recorded by the storage_align primitive, and the padded strides
// they ask for. A block's annotation "buffer_dim_align" = "[[write_index, axis, factor, offset],
// ...]" asks that the stride of `axis` of its `write_index`-th write buffer leave remainder
// `offset` modulo `factor`. CollectStorageAlign reads the requests from the block form;
// CompactBufferAllocations applies them to the compacted shape (TVM's rule: strides are built from
// the innermost dimension outwards, each padded up to the next value with that remainder):
//
//   S = alloc_buffer((64, 32), float32)         with allocate(S, (4, 32), float32):
//   with block("S"):                                # strides (40, 1): 40 % 32 == 8
//     block_attr({"buffer_dim_align":
//                 "[[0, 0, 32, 8]]"})
//
// Only buffers allocated by a block are aligned: a parameter's layout belongs to the caller.
#include "storage_align.h"

#include <array>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "tirtune/ir/functor.h"
#include "tirtune/lower/passes.h"
#include "tirtune/support/error.h"

namespace tirtune {
namespace {

// Parses "[[a, b, c, d], ...]" (JSON, integers only); nullopt for any other text.
class AlignEntryParser {
 public:
  explicit AlignEntryParser(std::string_view text) : text_(text) {}

  std::optional<std::vector<std::array<int64_t, 4>>> Parse() {
    std::vector<std::array<int64_t, 4>> entries;
    if (!Eat('[')) return std::nullopt;
    if (Eat(']')) return AtEnd() ? std::optional(entries) : std::nullopt;
    do {
      std::array<int64_t, 4> entry{};
      if (!Eat('[')) return std::nullopt;
      for (int i = 0; i < 4; ++i) {
        if ((i > 0 && !Eat(',')) || !Int(&entry[i])) return std::nullopt;
      }
      if (!Eat(']')) return std::nullopt;
      entries.push_back(entry);
    } while (Eat(','));
    if (!Eat(']') || !AtEnd()) return std::nullopt;
    return entries;
  }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ == text_.size();
  }
  bool Int(int64_t* out) {
    SkipSpace();
    bool negative = pos_ < text_.size() && text_[pos_] == '-';
    if (negative) ++pos_;
    size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])) &&
           pos_ - start < 18) {
      value = value * 10 + (text_[pos_++] - '0');
    }
    *out = negative ? -value : value;
    return pos_ > start;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

StorageAlignRequests CollectStorageAlign(const PrimFunc& func) {
  // Step 1. Every block's requests, per buffer and axis (a later request for the same axis
  // replaces an earlier one).
  std::map<const BufferNode*, std::map<int, StorageAlignRequest>> by_axis;
  std::set<const BufferNode*> allocated;
  PreOrderVisit(func->body, [&](const Object* node) {
    const auto* block = node->as<BlockNode>();
    if (block == nullptr) return true;
    for (const Buffer& b : block->alloc_buffers) allocated.insert(b.get());
    auto it = block->annotations.find(kAnnBufferDimAlign);
    if (it == block->annotations.end()) return true;
    const auto* text = it->second.as<StringImmNode>();
    auto entries = text == nullptr ? std::nullopt : AlignEntryParser(text->value).Parse();
    if (!entries) {
      TT_USER_ERROR(
          "block '{}': annotation '{}' is not a list of [write_index, axis, factor, "
          "offset] entries",
          block->name, kAnnBufferDimAlign);
    }
    for (const auto& [write_index, axis, factor, offset] : *entries) {
      if (write_index < 0 || write_index >= static_cast<int64_t>(block->writes.size())) {
        TT_USER_ERROR("block '{}': '{}' names write {}, but the block has {} write(s)", block->name,
                      kAnnBufferDimAlign, write_index, block->writes.size());
      }
      const Buffer& buffer = block->writes[write_index].buffer;
      int64_t ndim = buffer->ndim();
      int64_t a = axis < 0 ? axis + ndim : axis;
      if (a < 0 || a >= ndim || factor <= 0 || offset < 0 || offset >= factor) {
        TT_USER_ERROR("block '{}': '{}' entry [{}, {}, {}, {}] is out of range for buffer '{}'",
                      block->name, kAnnBufferDimAlign, write_index, axis, factor, offset,
                      buffer->name);
      }
      by_axis[buffer.get()][static_cast<int>(a)] =
          StorageAlignRequest{static_cast<int>(a), factor, offset};
    }
    return true;
  });

  // Step 2. Only the requests for buffers that blocks allocate.
  StorageAlignRequests requests;
  for (const auto& [buffer, axes] : by_axis) {
    if (allocated.count(buffer) == 0) continue;
    for (const auto& [axis, request] : axes) requests[buffer].push_back(request);
  }
  return requests;
}

std::vector<Expr> lower::AlignedStrides(const std::vector<Expr>& shape,
                                        const std::vector<StorageAlignRequest>& requests) {
  std::vector<Expr> strides(shape.size());
  int64_t stride = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    for (const StorageAlignRequest& r : requests) {
      if (r.axis == d) stride += (r.factor + r.offset - stride % r.factor) % r.factor;
    }
    strides[d] = IntImm(DataType::Index(), stride);
    const int64_t* extent = AsConstInt(shape[d]);
    if (extent == nullptr) return {};
    stride *= *extent;
  }
  return strides;
}

}  // namespace tirtune
