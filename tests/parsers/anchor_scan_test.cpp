// The kernel-log scan's vector paths find every anchor pair and mention triple the byte-by-byte
// scan finds, at every offset and alignment; their early stops (Teddy's nibble buckets admit a
// few extra byte pairs) are only ever before a true start, never past one.
#include "sources/kmsg/anchor_scan.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace gw::kmsg {
namespace {

// The true starts in [from, to) that a scan reports, skipping its false stops.
std::vector<size_t> starts(AnchorScan path, std::string_view text, size_t from, size_t to,
                           bool mentions, size_t* false_stops) {
  std::vector<size_t> out;
  size_t pos = from;
  while (pos < to) {
    const size_t h = next_anchor_using(path, text, pos, to, mentions);
    EXPECT_GE(h, pos);
    if (h >= to) break;
    if (next_anchor_scalar(text, h, h + 1, mentions) == h)
      out.push_back(h);
    else
      ++*false_stops;
    pos = h + 1;
  }
  return out;
}

// Text of kernel-log bytes with the anchors, the mentions, their near misses and every byte
// value (high bytes too: pshufb reads an index with its top bit set as zero) mixed in.
std::string sample(std::mt19937& rng, size_t size) {
  static const std::vector<std::string> pieces = {"NVRM: Xid",
                                                  "SXid (",
                                                  "AER: ",
                                                  "INFO: task ",
                                                  "Gb/s available",
                                                  "PCIe Bus Error: ",
                                                  "[Hardware Error]:",
                                                  "nvidia",
                                                  "NVIDIA",
                                                  "Nvidia",
                                                  "nViDiA",
                                                  "GPU",
                                                  "CUDA",
                                                  "NCCL",
                                                  "DCGM",
                                                  "_nv011745rm",
                                                  "_nx",
                                                  "GPv",
                                                  "CPU",
                                                  "FBHUB",
                                                  "Hi",
                                                  "He",
                                                  "GB",
                                                  "For",
                                                  "r=",
                                                  "CSD",
                                                  "VB",
                                                  "Xe",
                                                  "Ii",
                                                  "GPX",
                                                  "CUX",
                                                  "\n",
                                                  " ",
                                                  "[  12.345678] ",
                                                  "\xff\xfe",
                                                  "\x80",
                                                  "\xd0\x92"};
  std::string s;
  while (s.size() < size) {
    const auto r = static_cast<unsigned>(rng() % 4);
    if (r == 0)
      s += pieces[rng() % pieces.size()];
    else if (r == 1)
      s += static_cast<char>(rng() % 256);
    else
      s += static_cast<char>('a' + rng() % 26);
  }
  s.resize(size);
  return s;
}

TEST(AnchorScan, VectorPathsFindEveryStartTheByteScanFinds) {
  std::mt19937 rng(11);
  for (int round = 0; round < 40; ++round) {
    const std::string text = sample(rng, 50 + rng() % 3000);
    for (bool mentions : {false, true})
      for (size_t from : {size_t{0}, size_t{1}, size_t{7}, size_t{15}, size_t{31}, size_t{33}}) {
        for (size_t to : {text.size(), text.size() - 1, text.size() / 2 + 3}) {
          if (from >= to) continue;
          size_t none = 0;
          const auto want = starts(AnchorScan::kScalar, text, from, to, mentions, &none);
          EXPECT_EQ(none, 0U);
          for (AnchorScan path : {AnchorScan::kSse2, AnchorScan::kSsse3, AnchorScan::kAvx2}) {
            size_t false_stops = 0;
            EXPECT_EQ(starts(path, text, from, to, mentions, &false_stops), want)
                << "path " << static_cast<int>(path) << " mentions " << mentions << " from " << from
                << " to " << to;
            if (path == AnchorScan::kSse2) {
              EXPECT_EQ(false_stops, 0U);  // exact
            }
          }
        }
      }
  }
}

TEST(AnchorScan, EveryAnchorAndMentionIsFoundAtEveryAlignment) {
  const std::vector<std::pair<std::string, bool>> words = {{"NVRM", false},
                                                           {"SXid (", false},
                                                           {"AER: ", false},
                                                           {"INFO: task", false},
                                                           {"Gb/s", false},
                                                           {"PCIe", false},
                                                           {"[Hardware Error]:", false},
                                                           {"nvidia", true},
                                                           {"NVIDIA", true},
                                                           {"GPU", true},
                                                           {"CUDA", true},
                                                           {"NCCL", true},
                                                           {"DCGM", true},
                                                           {"_nv011745rm", true}};
  for (const auto& [word, mention] : words)
    for (size_t at = 0; at < 80; ++at) {
      std::string text(160, '.');
      text.replace(at, word.size(), word);
      for (AnchorScan path :
           {AnchorScan::kScalar, AnchorScan::kSse2, AnchorScan::kSsse3, AnchorScan::kAvx2}) {
        const size_t want = next_anchor_scalar(text, 0, text.size(), mention);
        ASSERT_LT(want, text.size()) << word;
        EXPECT_EQ(next_anchor_using(path, text, 0, text.size(), mention), want)
            << word << " at " << at << " path " << static_cast<int>(path);
        // Without mentions a mention alone is no start.
        if (mention) {
          size_t none = 0;
          EXPECT_TRUE(starts(path, text, 0, text.size(), false, &none).empty()) << word;
        }
      }
    }
}

}  // namespace
}  // namespace gw::kmsg
