// Trace: JSON form, replay with changed decisions, simplification, text, and bad documents.
#include "gemm_text.h"
#include "schedule_check.h"

namespace tirtune {
namespace {

using namespace tirtune::testing;
using json = nlohmann::json;

// Tiles the i loop with a sampled 2-way tile and parallelizes the outer part.
Schedule TiledGemm(const PrimFunc& f, uint64_t seed) {
  Schedule sch(f, seed);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  auto tiles = sch.SamplePerfectTile(loops[0], 2, 0);
  auto parts = sch.Split(loops[0], {tiles[0], tiles[1]});
  sch.Parallel(parts[0]);
  return sch;
}

TEST(Trace, JsonNamesRandomVariablesInOrderOfDefinition) {
  Schedule sch = TiledGemm(ParseFunc(kGemm), 1);
  json j = sch.trace().ToJson();
  EXPECT_EQ(j["format"], "tirtune-trace");
  EXPECT_EQ(j["version"], 1);
  ASSERT_EQ(j["insts"].size(), 5u);
  EXPECT_EQ(j["insts"][0]["kind"], "GetBlock");
  EXPECT_EQ(j["insts"][0]["outputs"], json({"b0"}));
  EXPECT_EQ(j["insts"][1]["inputs"], json({"b0"}));
  EXPECT_EQ(j["insts"][1]["outputs"], json({"l1", "l2", "l3"}));
  EXPECT_EQ(j["insts"][2]["outputs"], json({"e4", "e5"}));
  EXPECT_EQ(j["insts"][3]["inputs"], json({"l1", "e4", "e5"}));
  EXPECT_TRUE(j["insts"][2].contains("decision"));
}

TEST(Trace, ReplayWithChangedDecisionMutatesTheTiling) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch = TiledGemm(f, 1);
  Trace mutated = sch.trace().WithDecision(2, json({4, 4}));
  Schedule replay(f);
  mutated.ApplyTo(replay);
  auto loops = replay.GetLoops(replay.GetBlock("C"));
  EXPECT_TRUE(IsConstInt(replay.Get(loops[0])->extent, 4));
  EXPECT_TRUE(IsConstInt(replay.Get(loops[1])->extent, 4));
  EXPECT_EQ(replay.Get(loops[0])->for_kind, ForKind::kParallel);
  ExpectSameNumbers(f, replay.func());
}

TEST(Trace, SimplifiedDropsUnusedPureInstructions) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  BlockRV block = sch.GetBlock("C");
  auto loops = sch.GetLoops(block);
  sch.SampleCategorical({1, 2}, {0.5, 0.5});  // unused
  sch.GetLoops(block);                         // unused
  sch.Unroll(loops[2]);
  Trace simple = sch.trace().Simplified(/*remove_postproc=*/false);
  ASSERT_EQ(simple.insts().size(), 3u);
  EXPECT_EQ(simple.insts()[2].kind->name, "Unroll");
  Schedule replay(f);
  simple.ApplyTo(replay);
  EXPECT_TRUE(StructuralEqual(replay.func(), sch.func()));
}

TEST(Trace, RemovePostprocStopsAtTheMarker) {
  PrimFunc f = ParseFunc(kGemm);
  Schedule sch(f);
  auto loops = sch.GetLoops(sch.GetBlock("C"));
  sch.EnterPostproc();
  sch.Parallel(loops[0]);
  Schedule replay(f);
  sch.trace().ApplyTo(replay, {}, /*remove_postproc=*/true);
  EXPECT_TRUE(StructuralEqual(replay.func(), f));
}

TEST(Trace, TextShowsCallsAndDecisions) {
  Schedule sch = TiledGemm(ParseFunc(kGemm), 1);
  std::string text = sch.trace().ToText();
  EXPECT_NE(text.find("b0 = GetBlock(name=\"C\")"), std::string::npos) << text;
  EXPECT_NE(text.find("l1, l2, l3 = GetLoops(b0)"), std::string::npos) << text;
  EXPECT_NE(text.find("# decision: ["), std::string::npos) << text;
  EXPECT_NE(text.find("Parallel(l6)"), std::string::npos) << text;
}

void ExpectFormatError(const json& doc, const std::string& text) {
  try {
    Trace::FromJson(doc);
    ADD_FAILURE() << "expected TraceFormatError for " << doc.dump();
  } catch (const TraceFormatError& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(Trace, RejectsMalformedDocuments) {
  ExpectFormatError(json::array(), "not a trace");
  ExpectFormatError({{"format", "tirtune-trace"}, {"version", 99}, {"insts", json::array()}},
                    "version 99 is not supported");
  json base = {{"format", "tirtune-trace"}, {"version", 1}};
  base["insts"] = {{{"kind", "Teleport"}, {"v", 1}}};
  ExpectFormatError(base, "unknown instruction kind");
  base["insts"] = {{{"kind", "GetLoops"}, {"v", 1}, {"inputs", {"b7"}}, {"outputs", {"l0"}}}};
  ExpectFormatError(base, "refers to 'b7'");
  base["insts"] = {{{"kind", "GetBlock"}, {"v", 5}, {"attrs", {{"name", "C"}}}}};
  ExpectFormatError(base, "version 5 is not supported");
  base["insts"] = {{{"kind", "GetBlock"}, {"v", 1}, {"outputs", {"x0"}}}};
  ExpectFormatError(base, "not a name like b0");
  base["insts"] = {{{"kind", "Split"}, {"v", 1}, {"inputs", {1.5}}}};
  ExpectFormatError(base, "inputs are names, integers or null");
}

TEST(Trace, ReplayOfMalformedAttrsIsAFormatError) {
  json doc = {{"format", "tirtune-trace"}, {"version", 1}};
  doc["insts"] = {{{"kind", "GetBlock"}, {"v", 1}, {"attrs", {{"name", 3}}}, {"outputs", {"b0"}}}};
  Trace trace = Trace::FromJson(doc);
  Schedule sch(ParseFunc(kGemm));
  EXPECT_THROW(trace.ApplyTo(sch), TraceFormatError);
}

}  // namespace
}  // namespace tirtune
