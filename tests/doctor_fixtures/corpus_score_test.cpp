// The issue-19 corpus through `doctor --from` (findings and verdict): training cases must meet
// every check; held-out and pending cases are scored and printed:
//   scripts/score-corpus   (or: ctest -R doctor_corpus_score -V | grep 'corpus score')
#include "corpus_score.h"

#include "cli/doctor_report.h"
#include "cli/doctor_run.h"

namespace gw {
namespace {

TEST(CorpusScore, TrainingCasesMeetEveryCheck) {
  corpus::report(
      corpus::by_split([](const std::vector<std::string>& files) {
        const cli::DoctorRun run = cli::run_from_files(files);
        return corpus::Outcome{run.findings, cli::doctor_exit_code(run) == cli::kDoctorHealthy};
      }),
      "corpus score");
}

TEST(CorpusScore, EveryCaseHasChecksAndFiles) {
  for (const corpus::Case& c : corpus::manifest()) {
    EXPECT_FALSE(corpus::checks(c.name).empty()) << c.name << ": no ## Checks block";
    EXPECT_TRUE(c.split == "train" || c.split == "held-out" || c.split == "pending")
        << c.name << ": " << c.split;
  }
}

}  // namespace
}  // namespace gw
