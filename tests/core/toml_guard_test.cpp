// The guard in front of toml++ (core/toml_guard.h): it refuses each non-ASCII character that
// toml++ would ask "is this whitespace?" of, and never a file TOML allows, in any of the forms
// a config file arrives in (CRLF, indented, several joined).
#include "core/toml_guard.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../parsers/fixture_util.h"
#include "core/toml_text.h"

namespace gw {
namespace {

// Valid TOML with non-ASCII text in every place TOML allows it.
const std::vector<std::string>& allowed() {
  static const std::vector<std::string> texts = {
      "name = \"température\"\n",
      "name = 'température'\n",
      "# température des GPU\nlimit = 80 # °C\n",
      "\"température\" = 80\n",
      "'température' = 80\n",
      "[\"zône\".'sous-zône']\nx = 1\n",
      "a = \"\"\"\nligne é\n\"\"\"\n",
      "a = '''\nligne é\n'''\n",
      "a = \"\"\"é\"\"\"\"\"\nb = \"é\"\n",  // two quotes before the delimiter belong to the string
      "a = '''é'''''\nb = 'é'\n",
      "a = \"say \\\"é\\\"\" # é\n",
      "a = \"\\\\\"\nb = \"é\"\n",
      "a = \"\"\"one \\\n    two é\"\"\"\n",  // the first character after the trim is ASCII
      "\xEF\xBB\xBF"
      "a = \"é\"\n",
      "list = [\"é\", 'ü', \"\"\"ß\"\"\"] # ✓\n",
      "t = { k = \"日本\" }\n",
  };
  return texts;
}

using test::crlf;
using test::indented;

TEST(TomlGuard, EveryPlaceTomlAllowsNonAsciiIsLetThroughAndParses) {
  for (const std::string& t : allowed()) {
    const bool bom = t.rfind("\xEF\xBB\xBF", 0) == 0;  // only ever the file's first bytes
    std::vector<std::string> forms = {t, crlf(t)};
    if (!bom) forms.push_back(indented(t));
    for (const std::string& form : forms) {
      EXPECT_FALSE(toml_refusal(form).has_value()) << form;
      EXPECT_TRUE(parse_toml_text(form, "t.toml").ok()) << form;
    }
  }
  // Joined, each under a table of its own (the keys repeat across samples).
  std::string joined;
  int n = 0;
  for (const std::string& t : allowed())
    if (t.rfind("\xEF\xBB\xBF", 0) != 0 && t[0] != '[')
      joined += "[s" + std::to_string(n++) + "]\n" + t;
  EXPECT_FALSE(toml_refusal(joined).has_value());
  EXPECT_TRUE(parse_toml_text(joined, "t.toml").ok());
}

struct Refused {
  std::string text;
  size_t line, column;
};

TEST(TomlGuard, NonAsciiOutsideStringsAndCommentsIsRefusedWithItsPlace) {
  const std::vector<Refused> cases = {
      {"température = 80\n", 1, 5},
      {"[zône]\n", 1, 3},
      {"a = 1\nb = é\n", 2, 5},
      {"a = 1é\n", 1, 6},
      {"a = \"x\"é\n", 1, 8},
      {"a = \"\\\\\"é\n", 1, 9},      // "\\" closes the string
      {"a = \"open\né = 1\n", 2, 1},  // a basic string ends at its line
      {"a = 'open\né = 1\n", 2, 1},
      {"a = \"\"\"x\"\"\"\"\"é\n", 1, 14},  // the delimiter's extra quotes end it too
      {"a = '''x'''''é\n", 1, 14},
      {"# é\n\t\u00a0= 1\n", 2, 2},  // U+00A0 too: TOML whitespace is tab and space
      {"a = [1,\u3000 2]\n", 1, 8},
      {"a = \"\"\"x \\\n  é\"\"\"\n", 2, 3},  // line-ending backslash, then é
      {"a = \"\"\"x \\\r\n\r\n\té\"\"\"\n", 3, 2},
  };
  for (const Refused& c : cases) {
    const auto r = toml_refusal(c.text);
    ASSERT_TRUE(r.has_value()) << c.text;
    EXPECT_EQ(r->line, c.line) << c.text;
    EXPECT_EQ(r->column, c.column) << c.text;
    EXPECT_FALSE(r->description.empty());
    // Through the one way in: a syntax error named by its place, toml++ never called.
    const auto parsed = parse_toml_text(c.text, "gw.toml");
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_EQ(parsed.error().code, "config.syntax");
    EXPECT_EQ(parsed.error().where,
              "gw.toml:" + std::to_string(c.line) + ":" + std::to_string(c.column));
  }
}

TEST(TomlGuard, ARefusedCharacterStaysRefusedInEveryForm) {
  const std::string bad = "[gpu]\ntempérature = 80\n";
  for (const std::string& form : {bad, crlf(bad), indented(bad), "a = 'é'\n" + bad}) {
    const auto r = toml_refusal(form);
    ASSERT_TRUE(r.has_value()) << form;
    EXPECT_NE(r->description.find("outside a string or comment"), std::string::npos);
  }
}

TEST(TomlGuard, MalformedAsciiIsLeftForTomlToName) {
  // Unclosed strings and bad escapes are toml++'s to report: the guard lets them through and
  // the error still names a place.
  for (const std::string t :
       {"a = \"open\n", "a = '''open\n", "a = \"\"\"open \\\n", "a = \"\\q\"\n"}) {
    EXPECT_FALSE(toml_refusal(t).has_value()) << t;
    const auto parsed = parse_toml_text(t, "x.toml");
    ASSERT_FALSE(parsed.ok()) << t;
    EXPECT_EQ(parsed.error().where.rfind("x.toml:", 0), 0u) << parsed.error().where;
  }
}

}  // namespace
}  // namespace gw
