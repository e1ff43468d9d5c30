// Every capture in fixtures/captures/ is one sample of its class: the same content cut at the
// top (1, 5, 20 lines), with leading whitespace stripped, with CRLF line ends, after a shell
// prompt, and two captures concatenated must still give what its remaining content supports,
// and never "nothing recognised" while a line of it would be read on its own.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sources/captures.h"

namespace gw {
namespace {

namespace fs = std::filesystem;

struct Input {
  std::string name, text;
};

// Cases whose family has no reader yet (MANIFEST-19.tsv split "pending"): nothing in them is
// recognised on purpose (their lines are reported as unread), so the rules below, which compare
// what the readers took, do not apply to them.
std::set<std::string> pending_cases() {
  std::set<std::string> out;
  std::ifstream in(GW_SOURCE_DIR "/fixtures/captures/MANIFEST-19.tsv");
  std::string line;
  while (std::getline(in, line))
    if (line.size() > 8 && line.compare(line.size() - 8, 8, "\tpending") == 0)
      out.insert(line.substr(0, line.find('\t')));
  return out;
}

std::vector<Input> corpus() {
  std::vector<Input> out;
  const auto pending = pending_cases();
  for (const auto& dir : fs::directory_iterator(GW_SOURCE_DIR "/fixtures/captures")) {
    if (!dir.is_directory() || pending.count(dir.path().filename().string())) continue;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      if (f.path().filename() == "expected.md") continue;
      std::ifstream in(f.path(), std::ios::binary);
      std::ostringstream ss;
      ss << in.rdbuf();
      out.push_back(
          {dir.path().filename().string() + "/" + f.path().filename().string(), ss.str()});
    }
  }
  std::sort(out.begin(), out.end(), [](const Input& a, const Input& b) { return a.name < b.name; });
  return out;
}

// What a reading gave, in the terms the robustness rules compare.
struct Facts {
  bool rejected = false;  // "nothing recognised" (doctor's exit 3 when it is the only input)
  size_t gpus = 0;        // GPU states in the biggest snapshot
  size_t events = 0;      // kernel-log events counted
  size_t app = 0;         // application messages; a summary of one input (step timing, NCCL
                          // transports) counts the lines it sums, so that two inputs add up
  bool topology = false;
  std::set<std::string> formats;
  size_t not_understood = 0;
};

Facts read(const std::string& text, const std::string& origin = "in") {
  Observation obs;
  const auto t0 = std::chrono::steady_clock::now();
  add_capture(text, origin, obs);
  // A hang guard, not a speed figure (those are in bench/parse): a few KB must never take long.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20)) << origin;
  Facts f;
  for (const auto& e : obs.input_errors)
    f.rejected = f.rejected || e.code == "capture.unknown_format";
  for (const auto& s : obs.samples) f.gpus = std::max(f.gpus, s.gpus.size());
  for (const auto& c : obs.event_counts) f.events += c.count;
  for (const auto& m : obs.app_messages)
    f.app += m.kind == AppMessageKind::kStepTiming || m.kind == AppMessageKind::kNcclTransport ||
                     m.kind == AppMessageKind::kNcclSetting
                 ? m.steps
                 : 1;
  f.topology = obs.topology.has_value();
  for (const auto& c : obs.coverage) {
    f.formats.insert(c.formats.begin(), c.formats.end());
    f.not_understood += c.lines_not_understood;
  }
  return f;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::string join(const std::vector<std::string>& ls, size_t from, const char* eol = "\n") {
  std::string out;
  for (size_t i = from; i < ls.size(); ++i) out += ls[i] + eol;
  return out;
}

// True when some line of `text`, alone, is read: then the whole text must be read too.
bool some_line_is_read(const std::vector<std::string>& ls, size_t from) {
  for (size_t i = from, n = 0; i < ls.size() && n < 300; ++i) {
    if (ls[i].find_first_not_of(" \t\r") == std::string::npos) continue;
    ++n;
    if (!read(ls[i] + "\n").rejected) return true;
  }
  return false;
}

void same_content(const Facts& want, const Facts& got, const std::string& what) {
  EXPECT_EQ(got.rejected, want.rejected) << what;
  EXPECT_EQ(got.gpus, want.gpus) << what;
  EXPECT_EQ(got.events, want.events) << what;
  EXPECT_EQ(got.app, want.app) << what;
  EXPECT_EQ(got.topology, want.topology) << what;
}

class Robustness : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { all_ = new std::vector<Input>(corpus()); }
  static void TearDownTestSuite() {
    delete all_;
    all_ = nullptr;
  }
  static std::vector<Input>* all_;
};
std::vector<Input>* Robustness::all_ = nullptr;

TEST_F(Robustness, CorpusIsThere) {
  EXPECT_GE(all_->size(), 60u);
  for (const Input& in : *all_) EXPECT_FALSE(read(in.text).rejected) << in.name;
}

TEST_F(Robustness, CutAtTheTopStillReadsWhatRemains) {
  for (const Input& in : *all_) {
    const auto ls = lines_of(in.text);
    for (size_t cut : {1u, 5u, 20u}) {
      if (cut >= ls.size()) continue;
      const Facts f = read(join(ls, cut));
      if (some_line_is_read(ls, cut)) {
        EXPECT_FALSE(f.rejected) << in.name << " without its first " << cut << " lines";
      }
    }
  }
}

TEST_F(Robustness, CrlfPromptAndStrippedIndentReadTheSame) {
  for (const Input& in : *all_) {
    const Facts base = read(in.text);
    const auto ls = lines_of(in.text);
    const Facts crlf = read(join(ls, 0, "\r\n"));
    same_content(base, crlf, in.name + " with CRLF");
    EXPECT_EQ(crlf.not_understood, base.not_understood) << in.name << " with CRLF";
    const Facts prompt = read("user@gpu-node:~$ cat " + in.name + "\n" + in.text);
    same_content(base, prompt, in.name + " after a prompt");
    EXPECT_EQ(prompt.not_understood, base.not_understood) << in.name << " after a prompt";
    EXPECT_EQ(prompt.formats, base.formats) << in.name << " after a prompt";
    std::vector<std::string> stripped;
    for (const auto& l : ls) {
      const size_t b = l.find_first_not_of(" \t");
      stripped.push_back(b == std::string::npos ? "" : l.substr(b));
    }
    const Facts flat = read(join(stripped, 0));
    same_content(base, flat, in.name + " with leading whitespace stripped");
  }
}

TEST_F(Robustness, TwoCapturesConcatenatedGiveBoth) {
  const auto& all = *all_;
  for (size_t i = 0; i < all.size(); ++i) {
    const Input& a = all[i];
    const Input& b = all[(i + 1) % all.size()];
    const Facts fa = read(a.text), fb = read(b.text);
    std::string joined = a.text;
    if (!joined.empty() && joined.back() != '\n') joined += '\n';
    const Facts f = read(joined + b.text);
    const std::string what = a.name + " + " + b.name;
    EXPECT_FALSE(f.rejected) << what;
    EXPECT_EQ(f.events, fa.events + fb.events) << what;
    EXPECT_EQ(f.app, fa.app + fb.app) << what;
    EXPECT_EQ(f.topology, fa.topology || fb.topology) << what;
    EXPECT_GE(f.gpus, std::max(fa.gpus, fb.gpus)) << what;
    for (const auto& fmt : fa.formats) EXPECT_TRUE(f.formats.count(fmt)) << what << ": " << fmt;
    for (const auto& fmt : fb.formats) EXPECT_TRUE(f.formats.count(fmt)) << what << ": " << fmt;
    EXPECT_EQ(f.not_understood, fa.not_understood + fb.not_understood) << what;
  }
}

}  // namespace
}  // namespace gw
