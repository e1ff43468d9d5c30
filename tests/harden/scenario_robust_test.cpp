// Wrong JSON types for any scenario key give an error naming the key, never an exception; an
// integer too large for its field is refused, never wrapped.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "sources/nvml/scenario.h"

namespace gw::nvml {
namespace {

using J = nlohmann::ordered_json;

J demo() {
  std::ifstream in(std::string(GW_SOURCE_DIR) + "/scenarios/demo.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return J::parse(ss.str());
}

// Every value's JSON pointer, except the devices after the first (they repeat its keys).
void paths(const J& j, const J::json_pointer& at, std::vector<J::json_pointer>& out) {
  if (!at.empty()) out.push_back(at);
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) paths(v, at / k, out);
  } else if (j.is_array()) {
    const bool devices = at.to_string() == "/devices";
    for (size_t i = 0; i < j.size() && !(devices && i > 0); ++i) paths(j[i], at / i, out);
  }
}

TEST(ScenarioRobustness, EveryKeyWithEveryWrongTypeIsAnErrorNamingIt) {
  const J base = demo();
  std::vector<J::json_pointer> all;
  paths(base, J::json_pointer(), all);
  ASSERT_GT(all.size(), 50u);
  const std::vector<J> wrong = {J("text"),
                                J::array(),
                                J::object(),
                                J(1e300),
                                J(-1),
                                J(1.5),
                                J(true),
                                J(nullptr),
                                J(18446744073709551615ull),
                                J::array({1, "x", nullptr})};
  size_t refused = 0;
  for (const auto& p : all) {
    for (const J& w : wrong) {
      J m = base;
      m[p] = w;
      Result<Scenario> r = make_error("unset", "");
      ASSERT_NO_THROW(r = parse_scenario(m.dump(), "demo.json")) << p.to_string() << " = " << w;
      if (r.ok()) continue;
      ++refused;
      const std::string text = r.error().to_string();
      EXPECT_TRUE(r.error().code == "scenario.bad_field" || r.error().code == "scenario.bad_json")
          << r.error().code;
      // The message names the key (its last path component) or an enclosing one.
      std::string key = p.back();
      const bool index = !key.empty() && std::isdigit(static_cast<unsigned char>(key[0]));
      const std::string name = index ? "[" + key + "]" : key;
      EXPECT_TRUE(text.find(name) != std::string::npos ||
                  (!p.parent_pointer().empty() &&
                   text.find(p.parent_pointer().back()) != std::string::npos))
          << p.to_string() << " = " << w << " -> " << text;
    }
  }
  EXPECT_GT(refused, all.size());  // most wrong types are refused, not silently accepted
}

TEST(ScenarioRobustness, IntegersTooLargeForTheirFieldAreRefusedNotWrapped) {
  const J base = demo();
  const J& dev = base["devices"][0];
  size_t checked = 0;
  for (const auto& [k, v] : dev.items()) {
    if (!v.is_number_integer()) continue;
    for (const J& huge : {J(4294967296ull + 5), J(9223372036854775807ll), J(-4294967301ll)}) {
      J m = base;
      m["devices"][0][k] = huge;
      auto r = parse_scenario(m.dump(), "demo.json");
      if (!r.ok()) {
        EXPECT_NE(r.error().to_string().find(k), std::string::npos) << r.error().to_string();
        continue;
      }
      // Accepted: then the field holds exactly that value (a 64-bit field, or _mib scaling).
      const J back = J::parse(write_scenario(*r));
      const J& d = back["devices"][0];
      if (d.contains(k)) {
        EXPECT_EQ(d[k], huge) << k << " wrapped";
      }
      ++checked;
    }
  }
  EXPECT_GT(checked + 1, 0u);
}

TEST(ScenarioRobustness, ScalarsWhereObjectsBelongAreErrors) {
  for (const char* text :
       {R"({"devices": 5})", R"({"defaults": []})", R"({"timeline": {}})", R"({"name": 5})",
        R"({"devices": [{"pci_device_id": "zz"}]})",
        R"({"devices": [{"pci_device_id": "0x1FFFFFFFF"}]})",
        R"({"devices": [{}], "timeline": [{"t": 0, "gpu": 0, "hang": {"call": 5}}]})",
        R"({"devices": [{"nvlinks": [{"link": 99999999999, "active": true}]}]})",
        R"({"devices": [{"nvlinks": [{"link": 0, "active": "yes"}]}]})",
        R"({"cuda_driver_version": 99999999999})",
        R"({"devices": [{"processes": [{"pid": 99999999999}]}]})"}) {
    Result<Scenario> r = make_error("unset", "");
    ASSERT_NO_THROW(r = parse_scenario(text, "x.json")) << text;
    EXPECT_FALSE(r.ok()) << text;
  }
}

// fuzz_scenario found this (docs/reliability.md): a number too large for a double is
// nlohmann's out_of_range, not a parse_error, and escaped as an exception.
TEST(ScenarioRobustness, NumberBeyondDoubleRangeIsBadJsonNotAnException) {
  for (const std::string& text : {std::string("8888888888888e8888888888{"),
                                  std::string(R"({"devices": [{"temperature_c": 1e999}]})"),
                                  std::string(R"({"name": "x", "t": -1e400})")}) {
    Result<Scenario> r = make_error("unset", "");
    ASSERT_NO_THROW(r = parse_scenario(text, "x.json")) << text;
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().code, "scenario.bad_json") << text;
    EXPECT_NE(r.error().message.find("number overflow"), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace gw::nvml
