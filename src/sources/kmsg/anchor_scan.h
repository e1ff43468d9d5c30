// The kernel-log parser's one pass over the text: where the next line worth reading may start.
// Every anchor (NVRM, SXid, AER, hung task, PCIe bandwidth, [Hardware Error]) starts a rare byte
// pair, and every mention of the GPU stack (nvidia, GPU, CUDA, NCCL, DCGM) a byte triple, so the
// scan looks for those pairs and triples only, 16 or 32 bytes at a time.
#pragma once

#include <cstddef>
#include <string_view>

namespace gw::kmsg {

// 'V' 'R' of "NVRM", 'X' 'i' of "SXid (", 'R' ':' of "AER: ", 'F' 'O' of "INFO: task ", 'G' 'b'
// of "Gb/s available PCIe bandwidth", 'I' 'e' of "PCIe Bus Error: " (older kernels print AER
// reports without "AER: "), 'r' ']' of "[Hardware Error]:" (firmware-first error records).
bool anchor_pair(char a, char b);
// "vid"/"Vid"/"VID" of nvidia/Nvidia/NVIDIA, "GPU", "CUD" of CUDA, "CCL" of NCCL, "CGM" of DCGM,
// "_nv" of the driver's obfuscated functions ("_nv011745rm": an old fault report's IP line).
bool mention_triple(char a, char b, char c);

// The first position in [from, to) that starts an anchor pair (or, with `mentions`, a mention
// triple), else `to`. It may stop early at a position that starts neither (the caller checks
// the words there and goes on from the next byte), never late. Reads at most up to text[to + 1]
// within the text.
size_t next_anchor(std::string_view text, size_t from, size_t to, bool mentions);
// The same one byte at a time, exact: what the vector paths are tested against.
size_t next_anchor_scalar(std::string_view text, size_t from, size_t to, bool mentions);

// The vector paths by name (next_anchor takes the best this CPU has); a path the build or the
// CPU lacks falls back to the next one down. For tests and benchmarks.
enum class AnchorScan { kScalar, kSse2, kSsse3, kAvx2 };
size_t next_anchor_using(AnchorScan path, std::string_view text, size_t from, size_t to,
                         bool mentions);

}  // namespace gw::kmsg
