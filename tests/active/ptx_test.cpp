// The load kernel's PTX: its module directives and entry, read the way the driver's JIT needs
// them (there is no ptxas in CI; on a real GPU the JIT itself checks it, label gpu). The checker
// is tested on the class of texts, not just the one kernel: comments, CRLF, indentation, and
// each way a module header can be wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "active/ptx_kernel.h"

namespace gw::active {
namespace {

using ::testing::HasSubstr;

TEST(Ptx, ShippedKernelIsWellFormed) {
  auto h = parse_ptx_header(load_kernel_ptx());
  ASSERT_TRUE(h) << h.error().to_string();
  EXPECT_EQ(h->version, "6.0");
  EXPECT_EQ(h->target, "sm_50");
  EXPECT_EQ(h->address_size, 64);
  ASSERT_EQ(h->entries.size(), 1u);
  EXPECT_EQ(h->entries[0], kLoadKernelName);
}

TEST(Ptx, KernelParametersMatchTheLaunch) {
  // load_chunk passes (u64 buffer, u32 elements, u32 iterations) in this order.
  const std::string ptx = load_kernel_ptx();
  const auto buf = ptx.find(".param .u64 gw_load_buf");
  const auto n = ptx.find(".param .u32 gw_load_n");
  const auto it = ptx.find(".param .u32 gw_load_iters");
  ASSERT_NE(buf, std::string::npos);
  ASSERT_NE(n, std::string::npos);
  ASSERT_NE(it, std::string::npos);
  EXPECT_LT(buf, n);
  EXPECT_LT(n, it);
}

std::string crlf(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') out += '\r';
    out += c;
  }
  return out;
}

TEST(Ptx, CrlfAndReindentedTextReadsTheSame) {
  std::string indented;
  std::string text = load_kernel_ptx();
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    indented += "\t  " + text.substr(pos, nl - pos) + "\n";
    pos = nl == std::string::npos ? text.size() : nl + 1;
  }
  for (const std::string& t : {crlf(load_kernel_ptx()), indented}) {
    auto h = parse_ptx_header(t);
    ASSERT_TRUE(h) << h.error().to_string();
    EXPECT_EQ(h->target, "sm_50");
    EXPECT_EQ(h->entries, std::vector<std::string>{"gw_load"});
  }
}

TEST(Ptx, CommentedOutDirectivesDoNotCount) {
  auto h = parse_ptx_header(
      "// .version 9.9\n.version 7.0 // real\n.target sm_80\n// .entry ghost(\n"
      ".visible .entry k()\n{\n ret;\n}\n");
  ASSERT_TRUE(h) << h.error().to_string();
  EXPECT_EQ(h->version, "7.0");
  EXPECT_EQ(h->entries, std::vector<std::string>{"k"});
}

struct Bad {
  const char* text;
  const char* says;
};

TEST(Ptx, MalformedHeadersNameTheLine) {
  const Bad cases[] = {
      {".target sm_50\n.version 6.0\n.entry k()\n{\n}\n", "line 1: a directive before .version"},
      {".version 6.0\n.entry k()\n{\n}\n", "no .target"},
      {"", "no .version"},
      {".version 6.0\n.version 6.1\n", "line 2: a second .version"},
      {".version 6.0\n.target sm_50\n.target sm_60\n", "line 3: a second .target"},
      {".version 6.0\n.target sm_50\n.entry k()\n{\n", "never closed"},
      {".version 6.0\n.target sm_50\n}\n", "line 3: a '}' without its '{'"},
      {".version 6.0\n.target sm_50\n", "no .entry"},
      {".version 6.0\n.target sm_50\n.entry (\n{\n}\n", "line 3: .entry without a name"},
  };
  for (const Bad& b : cases) {
    auto h = parse_ptx_header(b.text);
    ASSERT_FALSE(h) << b.text;
    EXPECT_EQ(h.error().code, "ptx.malformed");
    EXPECT_THAT(h.error().to_string(), HasSubstr(b.says)) << b.text;
  }
}

}  // namespace
}  // namespace gw::active
