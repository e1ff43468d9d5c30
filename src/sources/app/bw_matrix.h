// The matrices of p2pBandwidthLatencyTest (CUDA samples) and nvbandwidth:
//   "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)"
//   "   D\D     0      1"
//   "     0 911.08  20.10"
// and "P2P Connectivity Matrix", "P2P=Disabled Latency Matrix (us)" (its "GPU"/"CPU" header rows),
// nvbandwidth's "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)" with a header of column
// numbers; and bandwidthTest's host/device copy figures. Pure over lines: a title, a header,
// then rows of the header's width.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/bench.h"
#include "sources/record_fold.h"

namespace gw {

class BandwidthMatrixScanner {
 public:
  // True when the line belongs to a matrix (its title, header, rows) or to the tool's own
  // routine lines ("Device: 0, ...", "Device=0 CAN Access Peer Device=1", the notes).
  bool take(std::string_view line, std::string_view origin, size_t line_no);
  // The matrices read; "Device=N CAN/CANNOT Access Peer Device=M" lines come back as one
  // connectivity matrix (1 / 0, nullopt where no line said).
  std::vector<BandwidthMatrix> finish();
  // Matrices left out by the cap on those kept (kMaxMatricesPerInput) in the input the last
  // finish() closed.
  size_t dropped() const { return dropped_; }
  // p2pBandwidthLatencyTest's own lines were seen (its banner, devices, peer access).
  bool saw_p2p_test() const { return p2p_test_; }

 private:
  void close();
  // The CUDA sample bandwidthTest: "[CUDA Bandwidth Test] - Starting...", then per direction
  // "Host to Device Bandwidth, 1 Device(s)", "PINNED Memory Transfers", a "Transfer Size
  // (Bytes)  Bandwidth(MB/s)" header and "33554432  12150.7" rows. Each row is kept as a 1 x 1
  // bandwidth matrix in GB/s titled by what it measured (direction, memory, size, device), so
  // that runs of the same measurement carry the same title.
  bool take_bandwidth_test(std::string_view s, std::string_view origin, size_t line_no);
  struct BandwidthTest {
    bool active = false;
    std::string device, direction, memory;
    double to_gbs = 0;  // the header's unit in GB/s; 0 until a header is read
  } bwt_;
  std::vector<BandwidthMatrix> done_;
  GroupFold<BandwidthMatrix> fold_{0, kMaxMatricesPerInput};  // runs printing the same matrix
  size_t dropped_ = 0;
  BandwidthMatrix cur_;
  bool in_matrix_ = false;
  size_t width_ = 0;  // header columns; 0 until the header is read
  bool p2p_test_ = false;
  // Peer access by (from, to), the last line's word for each pair (a log of many runs repeats
  // them).
  std::map<std::pair<size_t, size_t>, bool> access_;
  std::string access_origin_;
};

}  // namespace gw
