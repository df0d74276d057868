// Parsing of functions and statements, token helpers, scopes, and the ParsePrimFunc entry points.
// Every factory call is preceded by the checks that make it succeed, so that bad input yields a
// located ParseError; an InternalError that still escapes a factory is converted, as a backstop.
#include "tirtune/ir/parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "text_parser.h"

namespace tirtune {
namespace {

// Words that cannot name a variable or buffer: they would read back as literals, operators or
// statement keywords.
constexpr std::array<std::string_view, 13> kReservedWords = {
    "True", "False", "inf", "nan", "and", "or", "not", "for", "in", "if", "else", "with", "def",
};

}  // namespace

TextParser::TextParser(const SourceText& source, std::vector<Token> tokens)
    : source_(source), tokens_(std::move(tokens)) {}

// ---- Tokens and errors ----

const Token& TextParser::Peek(size_t ahead) const {
  return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
}

const Token& TextParser::Next() {
  const Token& t = tokens_[pos_];
  if (pos_ + 1 < tokens_.size()) ++pos_;
  return t;
}

bool TextParser::AcceptPunct(std::string_view punct) {
  if (!Peek().IsPunct(punct)) return false;
  Next();
  return true;
}

const Token& TextParser::ExpectPunct(std::string_view punct) {
  if (!Peek().IsPunct(punct)) FailExpected(fmt::format("'{}'", punct));
  return Next();
}

const Token& TextParser::ExpectKeyword(std::string_view word) {
  if (!Peek().IsName(word)) FailExpected(fmt::format("'{}'", word));
  return Next();
}

const Token& TextParser::ExpectName(std::string_view what) {
  if (Peek().kind != TokenKind::kName) FailExpected(what);
  return Next();
}

const Token& TextParser::ExpectString(std::string_view what) {
  if (Peek().kind != TokenKind::kString) FailExpected(what);
  return Next();
}

void TextParser::ExpectNewline() {
  if (Peek().kind != TokenKind::kNewline) FailExpected("end of line");
  Next();
}

void TextParser::ExpectIndent() {
  if (Peek().kind != TokenKind::kIndent) FailExpected("an indented block");
  Next();
}

void TextParser::Fail(const Token& at, const std::string& detail) const {
  source_.Fail(at.line, at.column, detail);
}

void TextParser::FailExpected(std::string_view what) const {
  Fail(Peek(), fmt::format("expected {}, found {}", what, Peek().Describe()));
}

TextParser::NestingGuard::NestingGuard(TextParser* parser, const Token& at) : parser_(parser) {
  if (++parser_->depth_ > kMaxNesting) {
    --parser_->depth_;  // the destructor of a guard whose constructor throws does not run
    parser_->Fail(at, fmt::format("nesting too deep (more than {} levels)", kMaxNesting));
  }
}

// ---- Scopes ----

void TextParser::Define(const Token& name, Symbol symbol) {
  if (std::find(kReservedWords.begin(), kReservedWords.end(), name.text) != kReservedWords.end()) {
    Fail(name, fmt::format("'{}' is a reserved word and cannot be defined", name.text));
  }
  if (!scopes_.back().emplace(name.text, std::move(symbol)).second) {
    Fail(name, fmt::format("redefinition of '{}' in the same scope", name.text));
  }
}

const Symbol& TextParser::Resolve(const Token& name) const {
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    auto it = scope->find(name.text);
    if (it != scope->end()) return it->second;
  }
  Fail(name, fmt::format("undefined name '{}'", name.text));
}

Buffer TextParser::ResolveBuffer(const Token& name) const {
  const Symbol& symbol = Resolve(name);
  if (!symbol.buffer.defined()) Fail(name, fmt::format("'{}' is not a buffer", name.text));
  return symbol.buffer;
}

// ---- Functions ----

std::vector<PrimFunc> TextParser::ParseFunctions() {
  std::vector<PrimFunc> funcs;
  while (Peek().kind != TokenKind::kEnd) funcs.push_back(ParseFunction());
  return funcs;
}

PrimFunc TextParser::ParseSingleFunction() {
  PrimFunc func = ParseFunction();
  if (Peek().kind != TokenKind::kEnd) FailExpected("end of input after the function");
  return func;
}

PrimFunc TextParser::ParseFunction() {
  try {
    return ParseFunctionUnguarded();
  } catch (const InternalError& e) {
    // Statements convert their own; this catches the signature and the function itself.
    Fail(Peek(), fmt::format("invalid function: {}", e.what()));
  }
}

PrimFunc TextParser::ParseFunctionUnguarded() {
  if (!Peek().IsPunct("@")) FailExpected("'@prim_func'");
  Next();
  ExpectKeyword("prim_func");
  ExpectNewline();
  ExpectKeyword("def");
  const Token& name = ExpectName("function name");
  ExpectPunct("(");
  ScopeGuard scope(this);
  std::vector<Buffer> params;
  while (!Peek().IsPunct(")")) {
    const Token& param = ExpectName("parameter name or ')'");
    ExpectPunct(":");
    ExpectKeyword("Buffer");
    ExpectPunct("(");
    Buffer buffer = ParseBufferSpec(param, /*allow_strides=*/true);
    ExpectPunct(")");
    Define(param, Symbol{Var(), buffer});
    params.push_back(buffer);
    if (!AcceptPunct(",")) break;
  }
  ExpectPunct(")");
  ExpectPunct(":");
  ExpectNewline();
  ExpectIndent();
  std::map<std::string, Expr> attrs;
  if (Peek().IsName("func_attr") && Peek(1).IsPunct("(")) {
    Next();
    Next();
    attrs = ParseDict();
    ExpectPunct(")");
    ExpectNewline();
  }
  const Token& body_start = Peek();
  std::vector<Stmt> body = ParseStatementsUntilDedent();
  if (body.empty()) Fail(body_start, "expected a statement in the function body");
  return PrimFunc(name.text, std::move(params), MakeSeq(std::move(body)), std::move(attrs));
}

// ---- Statements ----

std::vector<Stmt> TextParser::ParseStatementsUntilDedent() {
  std::vector<Stmt> stmts;
  while (Peek().kind != TokenKind::kDedent && Peek().kind != TokenKind::kEnd) {
    stmts.push_back(ParseStmt());
  }
  if (Peek().kind != TokenKind::kDedent) FailExpected("end of indented block");
  Next();
  return stmts;
}

Stmt TextParser::ParseSuite() {
  ExpectPunct(":");
  ExpectNewline();
  ExpectIndent();
  ScopeGuard scope(this);
  return MakeSeq(ParseStatementsUntilDedent());
}

Stmt TextParser::ParseStmt() {
  const Token& first = Peek();
  NestingGuard guard(this, first);
  try {
    if (first.kind == TokenKind::kName) {
      const Token& second = Peek(1);
      if (first.text == "for") return ParseFor();
      if (first.text == "if") return ParseIf();
      if (first.text == "with") return ParseWith();
      if (first.text == "else") Fail(first, "'else' without a matching 'if'");
      if (second.IsPunct("[")) return ParseStore();
      if (second.IsPunct("(")) {
        if (first.text == "evaluate") return ParseEvaluate();
        if (first.text == "sync_threads") return ParseBarrier();
        if (first.text == "where" || first.text == "reads" || first.text == "writes" ||
            first.text == "block_attr") {
          Fail(first, fmt::format("'{}(...)' belongs in a block header, before the block body",
                                  first.text));
        }
        if (first.text == "func_attr") {
          Fail(first, "'func_attr(...)' must be the first line of the function body");
        }
      }
      if (second.IsPunct("=")) {
        Fail(first, fmt::format("'{} = ...' declares a block iterator or an alloc_buffer and "
                                "belongs in a block header, before the block body",
                                first.text));
      }
    }
    FailExpected("a statement");
  } catch (const InternalError& e) {
    // A factory check that the parser failed to anticipate: still the input's fault.
    Fail(first, fmt::format("invalid statement: {}", e.what()));
  }
}

Stmt TextParser::ParseFor() {
  ExpectKeyword("for");
  const Token& var_name = ExpectName("loop variable");
  ExpectKeyword("in");
  const Token& kind_name = ExpectName("loop kind");
  ForKind kind = ForKind::kSerial;
  if (kind_name.text == "range") {
    kind = ForKind::kSerial;
  } else if (kind_name.text == "serial" || !ForKindFromName(kind_name.text, &kind)) {
    Fail(kind_name, fmt::format("unknown loop kind '{}' (expected range, parallel, vectorized, "
                                "unroll or thread_binding)",
                                kind_name.text));
  }
  ExpectPunct("(");
  ParsedExpr extent = ParseExpr();
  ParsedExpr min;
  std::string thread;
  Annotations annotations;
  bool binds_thread = kind == ForKind::kThreadBinding;
  std::vector<std::string_view> keywords = {"min", "annotations"};
  if (binds_thread) keywords.insert(keywords.begin(), "thread");
  ParseKeywordArgs(keywords, [&](const Token& key) {
    if (key.text == "thread") {
      const Token& tag = ExpectString("thread name string");
      if (tag.text.empty()) Fail(tag, "the thread name must not be empty");
      thread = tag.text;
    } else if (key.text == "min") {
      min = ParseExpr();
    } else {
      annotations = ParseDict();
    }
  });
  const Token& close = ExpectPunct(")");
  if (binds_thread && thread.empty()) Fail(close, "thread_binding needs thread=\"...\"");
  std::vector<ParsedExpr*> typed_together = {&extent};
  if (min.expr.defined() && IsIndexLike(min)) typed_together.push_back(&min);
  Unify(typed_together);
  CheckIndexType(extent, "loop extent");
  DataType type = extent.expr.dtype();
  Expr min_expr = min.expr.defined() ? Coerce(min, type, "loop min") : IntImm(type, 0);
  Var loop_var(var_name.text, type);
  ScopeGuard scope(this);
  Define(var_name, Symbol{loop_var, Buffer()});
  Stmt body = ParseSuite();
  return MakeFor(loop_var, min_expr, extent.expr, kind, body, thread, annotations);
}

Stmt TextParser::ParseIf() {
  ExpectKeyword("if");
  ParsedExpr cond = ParseExpr();
  CheckBool(cond, "if condition");
  Stmt then_case = ParseSuite();
  Stmt else_case;
  if (Peek().IsName("else")) {
    Next();
    else_case = ParseSuite();
  }
  return MakeIfThenElse(cond.expr, then_case, else_case);
}

Stmt TextParser::ParseWith() {
  ExpectKeyword("with");
  const Token& what = Peek();
  if (what.IsName("block")) return ParseBlock();
  if (what.IsName("let")) return ParseLetStmt();
  if (what.IsName("allocate")) return ParseAllocate();
  if (what.IsName("init")) Fail(what, "'with init()' belongs in a block header");
  FailExpected("'block', 'let' or 'allocate'");
}

Stmt TextParser::ParseLetStmt() {
  ExpectKeyword("let");
  ExpectPunct("(");
  const Token& name = ExpectName("variable name");
  ExpectPunct(",");
  ParsedExpr value = ParseExpr();
  ExpectPunct(")");
  Var var(name.text, value.expr.dtype());
  ScopeGuard scope(this);
  Define(name, Symbol{var, Buffer()});
  Stmt body = ParseSuite();
  return MakeLetStmt(var, value.expr, body);
}

Stmt TextParser::ParseAllocate() {
  ExpectKeyword("allocate");
  ExpectPunct("(");
  const Token& name = ExpectName("buffer name");
  ExpectPunct(",");
  Buffer buffer = ParseBufferSpec(name, /*allow_strides=*/false);
  ExpectPunct(")");
  ScopeGuard scope(this);
  Define(name, Symbol{Var(), buffer});
  Stmt body = ParseSuite();
  return MakeAllocate(buffer, body);
}

Stmt TextParser::ParseStore() {
  const Token& name = ExpectName("buffer name");
  const Symbol& symbol = Resolve(name);
  if (!symbol.buffer.defined()) {
    Fail(name, fmt::format("cannot assign to '{}': it is not a buffer", name.text));
  }
  Buffer buffer = symbol.buffer;
  std::vector<Expr> indices;
  for (ParsedExpr& index : ParseIndices(name, buffer)) indices.push_back(index.expr);
  const Token& assign = Peek();
  if (!assign.IsPunct("=")) FailExpected("'='");
  Next();
  ParsedExpr value = ParseExpr();
  ExpectNewline();
  Expr stored;
  if (value.literal != ParsedExpr::Literal::kNone) stored = LiteralAs(value, buffer->dtype);
  if (!stored.defined()) stored = value.expr;
  if (stored.dtype().element_of() != buffer->dtype) {
    Fail(assign, fmt::format("cannot store a {} value into '{}' of type {}", stored.dtype().str(),
                             name.text, buffer->dtype.str()));
  }
  return MakeBufferStore(buffer, stored, std::move(indices));
}

Stmt TextParser::ParseBarrier() {
  ExpectKeyword("sync_threads");
  ExpectPunct("(");
  ExpectPunct(")");
  ExpectNewline();
  return MakeBarrier();
}

Stmt TextParser::ParseEvaluate() {
  ExpectKeyword("evaluate");
  ExpectPunct("(");
  ParsedExpr value = ParseExpr();
  ExpectPunct(")");
  ExpectNewline();
  return MakeEvaluate(value.expr);
}

// ---- Keyword arguments, dictionaries, buffer declarations ----

void TextParser::ParseKeywordArgs(const std::vector<std::string_view>& order,
                                  const std::function<void(const Token& key)>& parse_value) {
  int last = -1;
  while (AcceptPunct(",")) {
    const Token& key = ExpectName("keyword argument");
    auto it = std::find(order.begin(), order.end(), key.text);
    if (it == order.end()) {
      std::string allowed;
      for (std::string_view k : order) allowed += (allowed.empty() ? "" : ", ") + std::string(k);
      Fail(key, fmt::format("unexpected keyword argument '{}' (expected {})", key.text, allowed));
    }
    int index = static_cast<int>(it - order.begin());
    if (index == last) Fail(key, fmt::format("duplicate keyword argument '{}'", key.text));
    if (index < last) {
      Fail(key, fmt::format("keyword argument '{}' must come before '{}'", key.text,
                            order[static_cast<size_t>(last)]));
    }
    last = index;
    ExpectPunct("=");
    parse_value(key);
  }
}

std::map<std::string, Expr> TextParser::ParseDict() {
  std::map<std::string, Expr> entries;
  ExpectPunct("{");
  while (!Peek().IsPunct("}")) {
    const Token& key = ExpectString("string key or '}'");
    ExpectPunct(":");
    ParsedExpr value = ParseExpr();
    NodeKind kind = value.expr.kind();
    if (kind != NodeKind::kIntImm && kind != NodeKind::kFloatImm && kind != NodeKind::kStringImm) {
      Fail(*value.token, "an annotation value must be a literal (integer, float or string)");
    }
    if (!entries.emplace(key.text, value.expr).second) {
      Fail(key, fmt::format("duplicate key \"{}\"", key.text));
    }
    if (!AcceptPunct(",")) break;
  }
  ExpectPunct("}");
  return entries;
}

std::vector<Expr> TextParser::ParseIntTuple(std::string_view what) {
  std::vector<Expr> dims;
  ExpectPunct("(");
  while (!Peek().IsPunct(")")) {
    ParsedExpr dim = ParseExpr();
    CheckIndexType(dim, what);
    dims.push_back(dim.expr);
    if (!AcceptPunct(",")) break;
  }
  ExpectPunct(")");
  return dims;
}

Buffer TextParser::ParseBufferSpec(const Token& name, bool allow_strides) {
  auto node = MakeObject<BufferNode>();
  node->name = name.text;
  node->shape = ParseIntTuple("buffer extent");
  ExpectPunct(",");
  node->dtype = ParseDType(/*scalar_only=*/true);
  std::vector<std::string_view> keywords = {"scope", "align"};
  if (allow_strides) keywords.insert(keywords.begin(), "strides");
  ParseKeywordArgs(keywords, [&](const Token& key) {
    if (key.text == "strides") {
      node->strides = ParseIntTuple("buffer stride");
      if (!node->strides.empty() && node->strides.size() != node->shape.size()) {
        Fail(key, fmt::format("{} strides for a buffer of rank {}", node->strides.size(),
                              node->shape.size()));
      }
    } else if (key.text == "scope") {
      const Token& scope = ExpectString("storage scope string");
      if (!StorageScopeFromName(scope.text, &node->scope)) {
        Fail(scope, fmt::format("unknown storage scope \"{}\" (expected global, shared or local)",
                                scope.text));
      }
    } else {
      node->align = ParseIntToken("alignment", 1, int64_t{1} << 30);
    }
  });
  return Buffer(ObjectPtr<const BufferNode>(node));
}

// ---- Entry points ----

namespace {

template <typename Parse>
auto RunParser(std::string_view text, std::string_view source_name, Parse parse) {
  SourceText source(text, source_name);
  TextParser parser(source, Lex(source));
  return parse(parser);
}

}  // namespace

PrimFunc ParsePrimFunc(std::string_view text, std::string_view source_name) {
  return RunParser(text, source_name, [](TextParser& p) { return p.ParseSingleFunction(); });
}

std::vector<PrimFunc> ParsePrimFuncs(std::string_view text, std::string_view source_name) {
  return RunParser(text, source_name, [](TextParser& p) { return p.ParseFunctions(); });
}

}  // namespace tirtune
