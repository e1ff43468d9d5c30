// The issue-19 corpus at the rules alone (the captures' findings through load_captures and
// diagnose, without the CLI's verdict: verdict items are left to doctor_corpus_score_test).
// Builds from gw_sources and gw_diagnose only, so the rules can be scored without the CLI.
#include "corpus_score.h"
#include "diagnose/diagnose.h"
#include "sources/captures.h"

namespace gw {
namespace {

TEST(CorpusFindings, TrainingCasesMeetEveryFindingCheck) {
  corpus::report(corpus::by_split([](const std::vector<std::string>& files) {
                   return corpus::Outcome{diagnose(load_captures(files)), std::nullopt};
                 }),
                 "corpus findings");
}

}  // namespace
}  // namespace gw
