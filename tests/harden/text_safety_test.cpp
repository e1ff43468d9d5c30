#include "core/text_safety.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/finding.h"
#include "core/observation.h"

namespace gw {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(Utf8, ValidTextIsUnchanged) {
  for (const std::string s : {"", "plain",
                              "H100 \xC2\xB0"
                              "C",
                              "\xE2\x82\xAC", "\xF0\x9F\x98\x80"}) {
    EXPECT_TRUE(valid_utf8(s)) << s;
    EXPECT_EQ(repair_utf8(s), s);
  }
}

TEST(Utf8, EachInvalidSequenceBecomesOneReplacement) {
  EXPECT_EQ(repair_utf8("a\xFF"
                        "b"),
            "a" + kFffd + "b");
  EXPECT_EQ(repair_utf8("\xC3"), kFffd);                          // cut short at the end
  EXPECT_EQ(repair_utf8("\xC0\xAF"), kFffd + kFffd);              // overlong '/'
  EXPECT_EQ(repair_utf8("\xED\xA0\x80"), kFffd + kFffd + kFffd);  // a surrogate
  EXPECT_EQ(repair_utf8("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);  // > U+10FFFF
  EXPECT_EQ(repair_utf8("\xE2\x82"), kFffd);  // maximal subpart: one replacement
  EXPECT_FALSE(valid_utf8("\xE2\x82"));
}

TEST(Terminal, EscapeSequencesAndControlsAreRemoved) {
  EXPECT_EQ(terminal_safe("red\x1b[31mtext\x1b[0m"), "redtext");
  EXPECT_EQ(terminal_safe("a\x1b]0;title\x07"
                          "b"),
            "ab");                                                   // OSC to BEL
  EXPECT_EQ(terminal_safe("a\x1b]8;;http://x\x1b\\link"), "alink");  // OSC to ST
  EXPECT_EQ(terminal_safe("a\x1bPdata\x1b\\b"), "ab");               // DCS
  EXPECT_EQ(terminal_safe("a\x1b"
                          "cb"),
            "ab");  // reset (two bytes)
  EXPECT_EQ(terminal_safe(std::string("a\rb\bc\x7f"
                                      "d\x00"
                                      "e",
                                      9)),
            "abcde");
  EXPECT_EQ(terminal_safe("keep\ttab\nnewline"), "keep\ttab\nnewline");
  EXPECT_EQ(terminal_safe("c1 \xC2\x9B"
                          "31m"),
            "c1 31m");                                   // U+009B, the 8-bit CSI
  EXPECT_EQ(terminal_safe("raw \x9B"), "raw " + kFffd);  // invalid UTF-8 byte
  EXPECT_EQ(terminal_safe("cut\x1b["), "cut");
  EXPECT_EQ(terminal_safe("caf\xC3\xA9"), "caf\xC3\xA9");
}

TEST(Terminal, ModelStringsFromInputsAreCleaned) {
  Observation o;
  Snapshot s;
  GpuState g;
  g.info.name = "NVIDIA\x1b[2J H100";
  g.sample.processes = std::vector<ProcessInfo>{{1, 10, std::string("py\x1b]0;x\x07thon"), false}};
  s.gpus.push_back(g);
  o.samples.push_back(s);
  Event e;
  e.message = "Xid 79\x1b[1A";
  e.process_name = "bad\xFF";
  o.events.push_back(e);
  o.input_errors.push_back(make_error("x", "line \x1b[31mred", "f\rile"));
  make_terminal_safe(o);
  EXPECT_EQ(o.samples[0].gpus[0].info.name, "NVIDIA H100");
  EXPECT_EQ(*(*o.samples[0].gpus[0].sample.processes)[0].name, "python");
  EXPECT_EQ(o.events[0].message, "Xid 79");
  EXPECT_EQ(*o.events[0].process_name, "bad" + kFffd);
  EXPECT_EQ(o.input_errors[0].to_string(), "file: line red");
  Finding f;
  f.evidence = {"name \x1b[8mhidden"};
  make_terminal_safe(f);
  EXPECT_EQ(f.evidence[0], "name hidden");
}

TEST(Json, DumpReplacesInvalidUtf8InsteadOfThrowing) {
  nlohmann::json j = {{"name", "GPU \xFF\xFE"}, {"ok", "fine"}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);  // why dump_json exists
  const std::string out = dump_json(j);
  EXPECT_NE(out.find("GPU " + kFffd + kFffd), std::string::npos) << out;
  EXPECT_TRUE(nlohmann::json::accept(out));
  nlohmann::ordered_json o = {{"k", "\xC3"}};
  EXPECT_NE(dump_json(o, -1).find(kFffd), std::string::npos);
}

}  // namespace
}  // namespace gw
