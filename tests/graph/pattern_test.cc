// The pattern language (MatchPattern), FuseOpsByPattern and MergeCompositeFunctions: matches,
// near misses, alternatives with backtracking, priority between overlapping patterns, checks
// that refuse, and merged regions that never make a cycle. Every rewritten graph runs the
// pipeline's later passes and agrees with the original on the interpreter.
#include "tirtune/graph/pattern.h"

#include <gtest/gtest.h>

#include "graph_testing.h"
#include "tirtune/graph/passes.h"
#include "tirtune/graph/validate.h"
#include "tirtune/support/error.h"

namespace tirtune::graph {
namespace {

using testing::ConvBiasRelu;
using testing::RandomArray;
using testing::SameResults;

// conv2d(*, const) -> bias_add(., const) -> relu?, the weight captured as "weight".
Pattern ConvBiasOptionalRelu() {
  Pattern conv = IsOp("conv2d", {Wildcard(), IsConstant().Named("weight")});
  return Optional("relu", IsOp("bias_add", {conv, IsConstant()}));
}

// The names of the values of calls `calls`, space-separated.
std::string CallNames(const Graph& g, const std::vector<int>& calls) {
  std::string s;
  for (int c : calls) s += (s.empty() ? "" : " ") + g.value(g.call(c).output).name;
  return s;
}

// Every call of the top level: "op" for operators, "@op{Composite}" for composites, in order.
std::string TopLevel(const Graph& g) {
  std::string s;
  for (const Call& c : g.calls()) {
    if (!s.empty()) s += " ";
    if (c.kind == CallKind::kGraph) {
      s += "@" + c.op;
      if (c.attrs.Has(kCompositeAttr)) s += "{" + c.attrs.GetString(kCompositeAttr) + "}";
    } else {
      s += c.op;
    }
  }
  return s;
}

// The pipeline after FuseOpsByPattern, as compile runs it.
Graph Lower(const Graph& g) {
  return EliminateDeadCode(FuseTIR(FuseOps(FoldConstants(AnnotateOpPattern(LegalizeOps(g))))));
}

TEST(MatchPattern, MatchesAChainAndCapturesNamedValues) {
  Graph g = ConvBiasRelu();
  std::optional<PatternMatch> m = MatchPattern(g, ConvBiasOptionalRelu(), g.Find("relu"));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(CallNames(g, m->calls), "conv bias relu");
  EXPECT_EQ(m->named.at("weight"), g.Find("w"));
  ASSERT_EQ(m->leaves.size(), 3u);  // x, w, b in the order the pattern meets them
  EXPECT_EQ(m->leaves[0], g.Find("x"));
  EXPECT_EQ(m->leaves[1], g.Find("w"));
  EXPECT_EQ(m->leaves[2], g.Find("b"));
  // The optional relu: rooted at the bias_add, the same pattern matches without it.
  m = MatchPattern(g, ConvBiasOptionalRelu(), g.Find("bias"));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(CallNames(g, m->calls), "conv bias");
}

TEST(MatchPattern, NearMissesDoNotMatch) {
  Graph g = ConvBiasRelu();
  ValueId relu = g.Find("relu");
  // Another operator, an input where a constant is wanted, a wrong attribute, dtype, rank or
  // shape, a check that says no, another number of arguments.
  EXPECT_FALSE(MatchPattern(g, IsOp("sigmoid", {Wildcard()}), relu));
  EXPECT_FALSE(MatchPattern(g, IsOp("conv2d", {IsConstant(), IsConstant()}), g.Find("conv")));
  Pattern conv = IsOp("conv2d", {IsInput(), IsConstant()});
  EXPECT_TRUE(MatchPattern(g, conv.HasAttr("pad", int64_t{1}), g.Find("conv")));
  EXPECT_FALSE(MatchPattern(g, conv.HasAttr("pad", int64_t{0}), g.Find("conv")));
  EXPECT_FALSE(MatchPattern(g, conv.HasAttr("groups", int64_t{1}), g.Find("conv")))
      << "an attribute the call does not have";
  EXPECT_FALSE(MatchPattern(g, conv.HasDtype(DataType::Float(16)), g.Find("conv")));
  EXPECT_TRUE(MatchPattern(g, conv.HasRank(4).HasShape({1, 6, 6, 4}), g.Find("conv")));
  EXPECT_FALSE(MatchPattern(g, conv.HasShape({1, 6, 6, 5}), g.Find("conv")));
  EXPECT_FALSE(MatchPattern(g, conv.Where([](const Graph&, ValueId) { return false; }),
                            g.Find("conv")));
  EXPECT_FALSE(MatchPattern(g, IsOp("conv2d", {Wildcard()}), g.Find("conv")));
  EXPECT_FALSE(MatchPattern(g, IsOp("*", {IsConstant()}), g.Find("x"))) << "an input is no call";
  EXPECT_TRUE(MatchPattern(g, IsOp("*", {Wildcard()}), relu)) << "any operator";
}

TEST(MatchPattern, AlternativesBacktrackUntilTheWholePatternMatches) {
  // a = exp(x); c = sigmoid(a); b = add(a, c)
  Graph g;
  ValueId x = g.AddInput("x", F32({4}));
  ValueId a = AddOpCall(&g, "a", "exp", {x});
  ValueId c = AddOpCall(&g, "c", "sigmoid", {a});
  ValueId b = AddOpCall(&g, "b", "add", {a, c});
  g.AddOutput(b);
  // The first alternative matches exp(x) with v = x, but then sigmoid's argument (a) is not v:
  // the matcher must come back and take the second, v = a.
  Pattern first = IsOp("exp", {Wildcard().Named("v")}) | Wildcard().Named("v");
  Pattern p = IsOp("add", {first, IsOp("sigmoid", {Wildcard().Named("v")})});
  std::optional<PatternMatch> m = MatchPattern(g, p, b);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(CallNames(g, m->calls), "c b") << "the exp of the abandoned alternative is dropped";
  EXPECT_EQ(m->named.at("v"), a);
  EXPECT_EQ(m->leaves, std::vector<ValueId>{a});
  // When both alternatives would match, the first wins.
  m = MatchPattern(g, IsOp("sigmoid", {IsOp("exp", {Wildcard()}) | Wildcard()}), c);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(CallNames(g, m->calls), "a c");
  // No alternative fits: no match, and a name bound twice must be one value.
  EXPECT_FALSE(MatchPattern(g, IsOp("sigmoid", {IsInput() | IsConstant()}), c));
  EXPECT_FALSE(MatchPattern(g, IsOp("add", {Wildcard().Named("v"), Wildcard().Named("v")}), b));
  EXPECT_EQ(p.str(), "add((exp(* as v) | * as v), sigmoid(* as v))");
}

TEST(FuseOpsByPattern, MatchedSubgraphsBecomeAnnotatedCompositesAndStillCompute) {
  Graph g = ConvBiasRelu();
  PatternFusionResult r = FuseOpsByPattern(g, {{"dnnl.conv2d_bias_relu", ConvBiasOptionalRelu()}});
  EXPECT_EQ(r.matches.at("dnnl.conv2d_bias_relu"), 1);
  EXPECT_EQ(TopLevel(r.graph), "@composite_dnnl_conv2d_bias_add_relu{dnnl.conv2d_bias_relu}");
  const Call& c = r.graph.call(0);
  EXPECT_EQ(c.attrs.GetString(kCodegenAttr), "dnnl");
  EXPECT_EQ(c.pattern, OpPattern::kOpaque);
  EXPECT_EQ(c.body->calls().size(), 3u);
  EXPECT_TRUE(SameResults(g, r.graph));
  std::string printed = PrintGraph(r.graph);
  EXPECT_NE(printed.find("{Codegen=\"dnnl\", Composite=\"dnnl.conv2d_bias_relu\"}"),
            std::string::npos)
      << printed;
  // The rest of the pipeline: one PrimFunc call that keeps the annotation, same numbers.
  Graph lowered = Lower(r.graph);
  ASSERT_EQ(lowered.calls().size(), 1u);
  EXPECT_EQ(lowered.call(0).kind, CallKind::kPrimFunc);
  EXPECT_EQ(lowered.call(0).attrs.GetString(kCompositeAttr), "dnnl.conv2d_bias_relu");
  EXPECT_TRUE(SameResults(g, lowered));
}

// x -> conv -> bias -> relu -> conv2 -> bias2 -> sigmoid: two patterns overlap on conv/bias.
Graph TwoConvs() {
  Graph g = ConvBiasRelu();
  ValueId w2 = g.AddConstant("w2", RandomArray({3, 3, 4, 2}, 3));
  ValueId b2 = g.AddConstant("b2", RandomArray({2}, 4));
  ValueId conv2 = AddOpCall(&g, "conv2", "conv2d", {g.Find("relu"), w2}, {{"pad", 1}});
  ValueId bias2 = AddOpCall(&g, "bias2", "bias_add", {conv2, b2});
  g.SetOutputs({AddOpCall(&g, "sig", "sigmoid", {bias2})});
  return g;
}

TEST(FuseOpsByPattern, EarlierPatternsHavePriorityAndCallsJoinOneCompositeOnly) {
  Graph g = TwoConvs();
  FusionPattern conv_only{"dnnl.conv2d", IsOp("conv2d", {Wildcard(), IsConstant()})};
  FusionPattern conv_bias{"dnnl.conv2d_bias", IsOp("bias_add", {conv_only.pattern, IsConstant()})};
  FusionPattern unused{"dnnl.softmax", IsOp("softmax", {Wildcard()})};
  PatternFusionResult first = FuseOpsByPattern(g, {conv_bias, conv_only, unused});
  EXPECT_EQ(TopLevel(first.graph),
            "@composite_dnnl_conv2d_bias_add{dnnl.conv2d_bias} relu "
            "@composite_dnnl_conv2d_bias_add{dnnl.conv2d_bias} sigmoid");
  EXPECT_EQ(first.matches.at("dnnl.conv2d_bias"), 2);
  EXPECT_EQ(first.matches.at("dnnl.conv2d"), 0) << "its convolutions were taken";
  EXPECT_EQ(first.matches.at("dnnl.softmax"), 0) << "a pattern that matches nothing is no error";
  PatternFusionResult second = FuseOpsByPattern(g, {conv_only, conv_bias});
  EXPECT_EQ(TopLevel(second.graph),
            "@composite_dnnl_conv2d{dnnl.conv2d} bias_add relu @composite_dnnl_conv2d{dnnl.conv2d} "
            "bias_add sigmoid");
  for (const PatternFusionResult* r : {&first, &second}) {
    EXPECT_TRUE(SameResults(g, r->graph));
    EXPECT_TRUE(SameResults(g, Lower(r->graph)));
  }
}

TEST(FuseOpsByPattern, ChecksAndOutsideUsesRefuseAMatch) {
  Graph g = TwoConvs();
  FusionPattern conv_bias{"dnnl.conv2d_bias",
                          IsOp("bias_add", {IsOp("conv2d", {Wildcard(), IsConstant()}), Wildcard()})};
  // A check that takes only 2 output channels: the second convolution.
  conv_bias.check = [](const Graph& graph, const PatternMatch& m) {
    return graph.value(m.root).type.shape.back() == 2;
  };
  EXPECT_EQ(TopLevel(FuseOpsByPattern(g, {conv_bias}).graph),
            "conv2d bias_add relu @composite_dnnl_conv2d_bias_add{dnnl.conv2d_bias} sigmoid");
  // An intermediate used outside the match, or a graph output, cannot be inside a composite.
  Graph outside = ConvBiasRelu();
  outside.SetOutputs({outside.Find("relu"), outside.Find("conv")});
  conv_bias.check = nullptr;
  PatternFusionResult r = FuseOpsByPattern(outside, {conv_bias});
  EXPECT_EQ(r.matches.at("dnnl.conv2d_bias"), 0);
  EXPECT_EQ(TopLevel(r.graph), "conv2d bias_add relu");
  // Names must say the backend.
  for (const char* bad : {"conv2d", ".conv2d", ""}) {
    EXPECT_THROW(FuseOpsByPattern(g, {{bad, conv_bias.pattern}}), UserError) << bad;
  }
  EXPECT_THROW(FuseOpsByPattern(g, {conv_bias, conv_bias}), UserError);
}

TEST(MergeCompositeFunctions, NeighboursOfOneBackendMergeIntoARegion) {
  Graph g = TwoConvs();
  FusionPattern conv_bias{"dnnl.conv2d_bias_relu", ConvBiasOptionalRelu()};
  Graph composites = FuseOpsByPattern(g, {conv_bias}).graph;
  EXPECT_EQ(TopLevel(composites),
            "@composite_dnnl_conv2d_bias_add_relu{dnnl.conv2d_bias_relu} "
            "@composite_dnnl_conv2d_bias_add{dnnl.conv2d_bias_relu} sigmoid");
  Graph merged = MergeCompositeFunctions(composites);
  EXPECT_EQ(TopLevel(merged), "@region_dnnl_0 sigmoid");
  EXPECT_EQ(merged.call(0).attrs.GetString(kCodegenAttr), "dnnl");
  EXPECT_EQ(merged.call(0).body->calls().size(), 2u);
  EXPECT_TRUE(SameResults(g, merged));
  Graph lowered = Lower(merged);
  EXPECT_EQ(lowered.calls().size(), 2u);
  EXPECT_TRUE(SameResults(g, lowered));
}

// a = A(x); c = C(a) (not a composite); b = B(a, c): merging A and B would put C both after A
// and before B, outside the region: a cycle. They stay apart, and so do other backends.
TEST(MergeCompositeFunctions, NeverMakesACycleNorMixesBackends) {
  Graph g;
  ValueId x = g.AddInput("x", F32({8}));
  ValueId a = AddOpCall(&g, "a", "exp", {x});
  ValueId c = AddOpCall(&g, "c", "sigmoid", {a});
  ValueId b = AddOpCall(&g, "b", "add", {a, c});
  ValueId d = AddOpCall(&g, "d", "tanh", {b});
  g.AddOutput(d);
  std::vector<FusionPattern> patterns = {{"lib.exp", IsOp("exp", {Wildcard()})},
                                         {"lib.add", IsOp("add", {Wildcard(), Wildcard()})},
                                         {"other.tanh", IsOp("tanh", {Wildcard()})}};
  Graph composites = FuseOpsByPattern(g, patterns).graph;
  EXPECT_EQ(TopLevel(composites),
            "@composite_lib_exp{lib.exp} sigmoid @composite_lib_add{lib.add} "
            "@composite_other_tanh{other.tanh}");
  Graph merged = MergeCompositeFunctions(composites);
  EXPECT_EQ(TopLevel(merged), TopLevel(composites));
  EXPECT_NO_THROW(ValidateGraph(merged));
  EXPECT_TRUE(SameResults(g, merged));
  EXPECT_TRUE(SameResults(g, Lower(merged)));
}

}  // namespace
}  // namespace tirtune::graph
