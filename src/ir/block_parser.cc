// Parsing of `with block("NAME"):`: the header lines (iterators, where, reads, writes,
// alloc_buffer, block_attr, init) in their fixed order, then the body; and buffer regions.
//
// Scoping follows what each line means: iterator bindings and `where` are evaluated outside the
// block, so they see only the enclosing scope; regions, allocations and the body see the
// iterators. The printer defines allocated buffers before the regions, so that a region may
// name them although its line comes first: region lines are skipped and parsed once the
// alloc_buffer lines have been.
#include <fmt/format.h>

#include "text_parser.h"
#include "tirtune/ir/op.h"

namespace tirtune {
namespace {

// The parts of a block header, in the order they must appear.
enum class BlockPart { kIterator, kWhere, kReads, kWrites, kAlloc, kAttr, kInit, kBody };

const char* PartName(BlockPart part) {
  switch (part) {
    case BlockPart::kIterator:
      return "a block iterator";
    case BlockPart::kWhere:
      return "where(...)";
    case BlockPart::kReads:
      return "reads(...)";
    case BlockPart::kWrites:
      return "writes(...)";
    case BlockPart::kAlloc:
      return "alloc_buffer";
    case BlockPart::kAttr:
      return "block_attr(...)";
    case BlockPart::kInit:
      return "with init()";
    case BlockPart::kBody:
      return "the block body";
  }
  return "?";
}

bool IsRepeatable(BlockPart part) {
  return part == BlockPart::kIterator || part == BlockPart::kAlloc || part == BlockPart::kBody;
}

}  // namespace

Stmt TextParser::ParseBlock() {
  ExpectKeyword("block");
  ExpectPunct("(");
  const Token& name = ExpectString("block name string");
  ExpectPunct(")");
  ExpectPunct(":");
  ExpectNewline();
  ExpectIndent();
  ScopeGuard scope(this);

  std::vector<IterVar> iter_vars;
  std::vector<Expr> bindings;
  std::vector<const Token*> iter_names;
  Expr predicate = Bool(true);
  size_t reads_at = 0, writes_at = 0;  // token index of a region line; 0 when absent
  std::vector<BufferRegion> reads, writes;
  std::vector<Buffer> allocs;
  Annotations annotations;
  Stmt init;
  std::vector<Stmt> body;

  BlockPart part = BlockPart::kIterator;
  bool iterators_defined = false, regions_parsed = false;
  auto parse_regions = [&]() {
    regions_parsed = true;
    size_t resume = pos_;
    if (reads_at != 0) {
      pos_ = reads_at;
      reads = ParseRegionLine("reads");
    }
    if (writes_at != 0) {
      pos_ = writes_at;
      writes = ParseRegionLine("writes");
    }
    pos_ = resume;
  };
  // Moves the header on to `next`, defining the iterators and parsing the regions once the
  // lines they wait for are behind.
  auto enter = [&](BlockPart next, const Token& at) {
    if (next == part && !IsRepeatable(next)) {
      Fail(at, fmt::format("duplicate {} in block header", PartName(next)));
    }
    if (next < part) {
      Fail(at, fmt::format("{} must come before {}", PartName(next), PartName(part)));
    }
    if (next >= BlockPart::kReads && !iterators_defined) {
      iterators_defined = true;
      for (size_t i = 0; i < iter_vars.size(); ++i) {
        Define(*iter_names[i], Symbol{iter_vars[i].var, Buffer()});
      }
    }
    if (next > BlockPart::kAlloc && !regions_parsed) parse_regions();
    part = next;
  };
  auto skip_line = [&]() {
    while (Peek().kind != TokenKind::kNewline && Peek().kind != TokenKind::kEnd) Next();
    ExpectNewline();
  };

  while (Peek().kind != TokenKind::kDedent && Peek().kind != TokenKind::kEnd) {
    const Token& first = Peek();
    bool assigns = first.kind == TokenKind::kName && Peek(1).IsPunct("=");
    bool calls = first.kind == TokenKind::kName && Peek(1).IsPunct("(");
    if (assigns && Peek(2).IsName("axis")) {
      enter(BlockPart::kIterator, first);
      ParseIterVar(&iter_vars, &bindings, &iter_names);
    } else if (calls && first.text == "where") {
      enter(BlockPart::kWhere, first);
      Next();
      Next();
      ParsedExpr cond = ParseExpr();
      CheckBool(cond, "block predicate");
      predicate = cond.expr;
      ExpectPunct(")");
      ExpectNewline();
    } else if (calls && (first.text == "reads" || first.text == "writes")) {
      bool is_reads = first.text == "reads";
      enter(is_reads ? BlockPart::kReads : BlockPart::kWrites, first);
      (is_reads ? reads_at : writes_at) = pos_;
      skip_line();
    } else if (assigns && Peek(2).IsName("alloc_buffer") && Peek(3).IsPunct("(")) {
      enter(BlockPart::kAlloc, first);
      const Token& buffer_name = Next();
      Next();
      Next();
      Next();
      Buffer buffer = ParseBufferSpec(buffer_name, /*allow_strides=*/true);
      ExpectPunct(")");
      ExpectNewline();
      Define(buffer_name, Symbol{Var(), buffer});
      allocs.push_back(buffer);
    } else if (calls && first.text == "block_attr") {
      enter(BlockPart::kAttr, first);
      Next();
      Next();
      annotations = ParseDict();
      ExpectPunct(")");
      ExpectNewline();
    } else if (first.IsName("with") && Peek(1).IsName("init")) {
      enter(BlockPart::kInit, first);
      Next();
      Next();
      ExpectPunct("(");
      ExpectPunct(")");
      init = ParseSuite();
    } else {
      enter(BlockPart::kBody, first);
      body.push_back(ParseStmt());
    }
  }
  if (Peek().kind != TokenKind::kDedent) FailExpected("end of indented block");
  // Report a broken region line (say, an unclosed bracket) before the missing body it hides.
  if (!regions_parsed) parse_regions();
  if (body.empty()) Fail(name, fmt::format("block \"{}\" has no body statement", name.text));
  Next();
  Block block =
      MakeBlock(name.text, std::move(iter_vars), std::move(reads), std::move(writes),
                MakeSeq(std::move(body)), init, std::move(allocs), std::move(annotations));
  return MakeBlockRealize(std::move(bindings), predicate, block);
}

void TextParser::ParseIterVar(std::vector<IterVar>* iter_vars, std::vector<Expr>* bindings,
                              std::vector<const Token*>* names) {
  const Token& name = ExpectName("iterator name");
  ExpectPunct("=");
  ExpectKeyword("axis");
  ExpectPunct(".");
  const Token& kind_name = ExpectName("'spatial' or 'reduce'");
  IterKind kind = IterKind::kSpatial;
  if (kind_name.text == "reduce") {
    kind = IterKind::kReduce;
  } else if (kind_name.text != "spatial") {
    Fail(kind_name, fmt::format("unknown iterator kind 'axis.{}' (expected axis.spatial or "
                                "axis.reduce)",
                                kind_name.text));
  }
  ExpectPunct("(");
  ParsedExpr extent = ParseExpr();
  ExpectPunct(",");
  ParsedExpr binding = ParseExpr();
  ParsedExpr min;
  ParseKeywordArgs({"min"}, [&](const Token&) { min = ParseExpr(); });
  ExpectPunct(")");
  ExpectNewline();
  // An untyped extent takes the type of an integer binding or min (`axis.spatial(4, i32)`); a
  // binding of another type is reported as such, not as a bad extent.
  std::vector<ParsedExpr*> typed_together = {&extent};
  if (IsIndexLike(binding)) typed_together.push_back(&binding);
  if (min.expr.defined() && IsIndexLike(min)) typed_together.push_back(&min);
  Unify(typed_together);
  CheckIndexType(extent, "iterator extent");
  DataType type = extent.expr.dtype();
  Expr min_expr = min.expr.defined() ? Coerce(min, type, "iterator min") : IntImm(type, 0);
  Expr value = Coerce(binding, type, "iterator binding");
  iter_vars->push_back(IterVar{Var(name.text, type), Range{min_expr, extent.expr}, kind});
  bindings->push_back(value);
  names->push_back(&name);
}

std::vector<BufferRegion> TextParser::ParseRegionLine(std::string_view keyword) {
  ExpectKeyword(keyword);
  ExpectPunct("(");
  std::vector<BufferRegion> regions;
  while (!Peek().IsPunct(")")) {
    regions.push_back(ParseRegion());
    if (!AcceptPunct(",")) break;
  }
  ExpectPunct(")");
  ExpectNewline();
  return regions;
}

BufferRegion TextParser::ParseRegion() {
  const Token& name = ExpectName("buffer name");
  Buffer buffer = ResolveBuffer(name);
  ExpectPunct("[");
  std::vector<Range> ranges;
  while (!Peek().IsPunct("]")) {
    ranges.push_back(ParseRange());
    if (!AcceptPunct(",")) break;
  }
  ExpectPunct("]");
  if (static_cast<int>(ranges.size()) != buffer->ndim()) {
    Fail(name, fmt::format("buffer '{}' has rank {}, found {} region entries", name.text,
                           buffer->ndim(), ranges.size()));
  }
  return BufferRegion{buffer, std::move(ranges)};
}

// Inverts the three forms the printer writes (docs/TEXT_FORMAT.md, "Regions"): `e` is the
// point [e, e + 1); `m:n` with both constant has extent n - m; `0:e` has extent e; `a:a + e`
// has extent e, taken as parsed (before any literal promotion, so that its type survives);
// any other `a:b` has extent b - a, folded.
Range TextParser::ParseRange() {
  ParsedExpr lower = ParseExpr();
  CheckIndexType(lower, "region bound");
  DataType type = lower.expr.dtype();
  if (!AcceptPunct(":")) return Range{lower.expr, IntImm(type, 1)};
  const int64_t* lower_const = AsConstInt(lower.expr);
  bool lower_is_zero = lower_const != nullptr && *lower_const == 0;
  ParsedExpr extent = lower;
  bool split = false;
  ParsedExpr upper = lower_is_zero ? ParseAdditive() : ParseAdditive(&extent, &split);
  if (split) {
    CheckIndexType(extent, "region extent");
    return Range{lower.expr, extent.expr};
  }
  CheckIndexType(upper, "region bound");
  if (lower_is_zero) return Range{lower.expr, upper.expr};
  const int64_t* upper_const = AsConstInt(upper.expr);
  if (lower_const != nullptr && upper_const != nullptr) {
    // Wrapping subtraction: the difference of two extreme constants must not be UB.
    auto diff = static_cast<uint64_t>(*upper_const) - static_cast<uint64_t>(*lower_const);
    return Range{lower.expr, IntImm(type, static_cast<int64_t>(diff))};
  }
  if (upper.expr.dtype() != type && lower_const == nullptr && upper_const == nullptr) {
    Fail(*upper.token, fmt::format("region bounds have different types: {} and {}", type.str(),
                                   upper.expr.dtype().str()));
  }
  return Range{lower.expr, upper.expr - lower.expr};
}

}  // namespace tirtune
