// The matrices of p2pBandwidthLatencyTest (CUDA samples) and nvbandwidth:
//   "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)"
//   "   D\D     0      1"
//   "     0 911.08  20.10"
// and "P2P Connectivity Matrix", "P2P=Disabled Latency Matrix (us)" (its "GPU"/"CPU" header rows),
// nvbandwidth's "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)" with a header of column
// numbers. Pure over lines: a title, a header, then rows of the header's width.
#pragma once

#include <string_view>
#include <vector>

#include "core/bench.h"

namespace gw {

class BandwidthMatrixScanner {
 public:
  // True when the line belongs to a matrix (its title, header, rows) or to the tool's own
  // routine lines ("Device: 0, ...", "Device=0 CAN Access Peer Device=1", the notes).
  bool take(std::string_view line, std::string_view origin, size_t line_no);
  // The matrices read; "Device=N CAN/CANNOT Access Peer Device=M" lines come back as one
  // connectivity matrix (1 / 0, nullopt where no line said).
  std::vector<BandwidthMatrix> finish();
  // p2pBandwidthLatencyTest's own lines were seen (its banner, devices, peer access).
  bool saw_p2p_test() const { return p2p_test_; }

 private:
  void close();
  std::vector<BandwidthMatrix> done_;
  BandwidthMatrix cur_;
  bool in_matrix_ = false;
  size_t width_ = 0;  // header columns; 0 until the header is read
  bool p2p_test_ = false;
  struct Access {
    size_t from, to;
    bool can;
  };
  std::vector<Access> access_;
  std::string access_origin_;
};

}  // namespace gw
