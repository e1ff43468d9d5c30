#include "sources/app/bw_matrix.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include "sources/smi/text_util.h"

namespace gw {

namespace {

bool contains(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}

bool is_index(std::string_view t) {
  if (t.empty() || t.size() > 4) return false;
  for (const char c : t)
    if (c < '0' || c > '9') return false;
  return true;
}

// A title line, or nullopt: p2pBandwidthLatencyTest's "... Matrix (GB/s)" / "(us)" / "P2P
// Connectivity Matrix", nvbandwidth's "... bandwidth (GB/s)" / "latency (ns)".
std::optional<BandwidthMatrix> title_of(std::string_view s) {
  using K = BandwidthMatrix::Kind;
  BandwidthMatrix m;
  if (text::starts_with(s, "P2P Connectivity Matrix")) {
    m.kind = K::kConnectivity;
  } else if (contains(s, "Matrix (GB/s)") || contains(s, "bandwidth (GB/s)")) {
    m.kind = K::kBandwidth;
  } else if (contains(s, "Matrix (us)") || contains(s, "latency (ns)")) {
    m.kind = K::kLatency;
  } else {
    return std::nullopt;
  }
  m.title = std::string(s.substr(0, 160));
  m.bidirectional = text::starts_with(s, "Bidirectional") || contains(s, "bidirectional");
  if (contains(s, "P2P=Enabled")) m.p2p = true;
  if (contains(s, "P2P=Disabled")) m.p2p = false;
  return m;
}

// "D\D 0 1 2", "GPU 0 1 2", "CPU 0 1 2" or bare column numbers: the width, 0 when not a header.
size_t header_width(std::string_view s) {
  const auto t = text::words(s);
  size_t first = 0;
  if (!t.empty() && (t[0] == "D\\D" || t[0] == "GPU" || t[0] == "CPU")) first = 1;
  if (t.size() <= first) return 0;
  for (size_t i = first; i < t.size(); ++i)
    if (!is_index(t[i]) || t[i] != std::to_string(i - first)) return 0;
  return t.size() - first;
}

// More GPUs than one process sees: the access lines build an n x n matrix, bounded here.
constexpr size_t kMaxDevices = 1024;

// "Device=0 CANNOT Access Peer Device=2": from, to, can.
std::optional<std::tuple<size_t, size_t, bool>> access_line(std::string_view s) {
  if (!text::starts_with(s, "Device=")) return std::nullopt;
  const auto t = text::words(s);
  if (t.size() != 5 || (t[1] != "CAN" && t[1] != "CANNOT") || t[2] != "Access" || t[3] != "Peer" ||
      !text::starts_with(t[4], "Device="))
    return std::nullopt;
  const std::string_view a = t[0].substr(7), b = t[4].substr(7);
  if (!is_index(a) || !is_index(b)) return std::nullopt;
  const size_t from = std::stoul(std::string(a)), to = std::stoul(std::string(b));
  if (from >= kMaxDevices || to >= kMaxDevices) return std::nullopt;  // the matrix is n x n
  return std::make_tuple(from, to, t[1] == "CAN");
}

// Lines p2pBandwidthLatencyTest writes around its matrices (the peer-access lines are read
// apart: they carry a fact).
// nvbandwidth: "Running device_to_device_memcpy_read_ce." before a matrix, and the matrix's
// sum after it ("SUM device_to_device_memcpy_read_ce 715.53": its cells, added).
bool is_nvbandwidth_line(std::string_view s) {
  if (!text::starts_with(s, "Running ") && !text::starts_with(s, "SUM ")) return false;
  const auto t = text::words(s);
  if (t.size() == 2 && t[0] == "Running")
    return t[1].find('_') != std::string_view::npos && t[1].back() == '.';
  return t.size() == 3 && t[0] == "SUM" && t[1].find('_') != std::string_view::npos &&
         text::parse_double(t[2]).has_value();
}

bool is_tool_line(std::string_view s) {
  return text::starts_with(s, "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]") ||
         (text::starts_with(s, "Device: ") && contains(s, "pciBusID")) ||
         text::starts_with(s, "***NOTE: In case a device doesn't have P2P access") ||
         text::starts_with(s, "So you can see lesser Bandwidth") ||
         text::starts_with(s, "NOTE: The CUDA Samples are not meant for performance");
}

}  // namespace

void BandwidthMatrixScanner::close() {
  if (in_matrix_ && !cur_.cells.empty()) fold_.add(done_, std::move(cur_));
  cur_ = BandwidthMatrix{};
  in_matrix_ = false;
  width_ = 0;
}

bool BandwidthMatrixScanner::take_bandwidth_test(std::string_view s, std::string_view origin,
                                                 size_t line_no) {
  // The banner, also when the paste cut its first bracket.
  if (contains(s, "CUDA Bandwidth Test] - Starting")) {
    close();
    bwt_ = BandwidthTest{};
    bwt_.active = true;
    return true;
  }
  if (!bwt_.active) return false;
  if (s == "Running on..." || s == "Quick Mode" || s == "Range Mode" || s == "Shmoo Mode" ||
      s == "Result = PASS")
    return true;
  if (text::starts_with(s, "Device ") && contains(s, ": ")) {
    bwt_.device = std::string(s.substr(0, 120));
    return true;
  }
  for (std::string_view dir : {"Host to Device", "Device to Host", "Device to Device"})
    if (text::starts_with(s, dir) && contains(s, " Bandwidth, ")) {
      bwt_.direction = std::string(dir);
      bwt_.to_gbs = 0;
      return true;
    }
  for (std::string_view mem : {"PINNED", "PAGEABLE"})
    if (text::starts_with(s, mem) && contains(s, "Memory Transfers")) {
      bwt_.memory = std::string(mem);
      return true;
    }
  if (text::starts_with(s, "Transfer Size (Bytes)")) {
    bwt_.to_gbs = contains(s, "(GB/s)") ? 1.0 : contains(s, "(MB/s)") ? 1e-3 : 0.0;
    return bwt_.to_gbs > 0;
  }
  // A row: the transfer size in bytes and the bandwidth in the header's unit; only inside a
  // table whose header was read (every later line of a log came this far).
  if (bwt_.direction.empty() || bwt_.to_gbs <= 0) return false;
  if (s.empty() || !text::is_digit(s.front())) {
    bwt_.to_gbs = 0;  // the table ended
    return false;
  }
  const auto t = text::words(s);
  std::optional<uint64_t> bytes;
  double gbs = -1;
  if (t.size() == 2) {
    bytes = text::parse_u64(t[0]);
    if (const auto bw = text::parse_double(t[1])) gbs = *bw * bwt_.to_gbs;
  }
  if (bwt_.direction.empty() || bwt_.to_gbs <= 0 || !bytes || !(gbs >= 0)) {
    bwt_.to_gbs = 0;  // the table ended: no later pair of numbers is one of its rows
    return false;
  }
  BandwidthMatrix m;
  m.kind = BandwidthMatrix::Kind::kBandwidth;
  m.title = "bandwidthTest: " + bwt_.direction + ", " +
            (bwt_.memory.empty() ? std::string("PINNED") : bwt_.memory) + ", " +
            std::to_string(*bytes) + " bytes" +
            (bwt_.device.empty() ? "" : " (" + bwt_.device + ")");
  m.origin = std::string(origin) + ":" + std::to_string(line_no);
  m.cells = {{gbs}};
  fold_.add(done_, std::move(m));
  return true;
}

bool BandwidthMatrixScanner::take(std::string_view line, std::string_view origin, size_t line_no) {
  const std::string_view s = text::trim(line);
  if (take_bandwidth_test(s, origin, line_no)) return true;
  if (auto m = title_of(s)) {
    close();
    cur_ = std::move(*m);
    cur_.origin = std::string(origin) + ":" + std::to_string(line_no);
    in_matrix_ = true;
    if (cur_.kind == BandwidthMatrix::Kind::kConnectivity || cur_.p2p) p2p_test_ = true;
    return true;
  }
  if (auto a = access_line(s)) {
    if (access_.empty()) access_origin_ = std::string(origin) + ":" + std::to_string(line_no);
    access_[{std::get<0>(*a), std::get<1>(*a)}] = std::get<2>(*a);
    p2p_test_ = true;
    return true;
  }
  if (is_tool_line(s)) {
    p2p_test_ = true;
    return true;
  }
  if (is_nvbandwidth_line(s)) {
    close();
    return true;
  }
  if (!in_matrix_) return false;
  // The latency matrices have a second header ("CPU 0 1 ...") under the same title.
  if (width_ > 0 && !cur_.cells.empty()) {
    if (const size_t w = header_width(s); w > 0) {
      BandwidthMatrix next;
      next.kind = cur_.kind;
      next.title = cur_.title + " (" + std::string(text::words(s)[0]) + ")";
      next.bidirectional = cur_.bidirectional;
      next.p2p = cur_.p2p;
      next.origin = std::string(origin) + ":" + std::to_string(line_no);
      close();
      cur_ = std::move(next);
      in_matrix_ = true;
      width_ = w;
      return true;
    }
  }
  if (width_ == 0) {
    width_ = header_width(s);
    if (width_ > 0) return true;
    close();
    return false;
  }
  // A row: its index, then one cell per column ("N/A" allowed).
  const auto t = text::words(s);
  if (t.size() != width_ + 1 || !is_index(t[0]) || t[0] != std::to_string(cur_.cells.size())) {
    close();
    return false;
  }
  std::vector<std::optional<double>> row;
  for (size_t i = 1; i < t.size(); ++i) {
    const auto v = text::parse_double(t[i]);
    if (!v && t[i] != "N/A") {
      close();
      return false;
    }
    row.push_back(v);
  }
  cur_.cells.push_back(std::move(row));
  return true;
}

std::vector<BandwidthMatrix> BandwidthMatrixScanner::finish() {
  close();
  if (!access_.empty()) {
    size_t n = 0;
    for (const auto& [pair, can] : access_) n = std::max({n, pair.first + 1, pair.second + 1});
    BandwidthMatrix m;
    m.kind = BandwidthMatrix::Kind::kConnectivity;
    m.title = "Device=N CAN/CANNOT Access Peer Device=M lines";
    m.origin = access_origin_;
    m.cells.assign(n, std::vector<std::optional<double>>(n));
    for (const auto& [pair, can] : access_) m.cells[pair.first][pair.second] = can ? 1.0 : 0.0;
    fold_.add(done_, std::move(m));
    access_.clear();
  }
  std::vector<BandwidthMatrix> out = std::move(done_);
  done_.clear();
  dropped_ = fold_.dropped();
  fold_ = GroupFold<BandwidthMatrix>(0, kMaxMatricesPerInput);
  return out;
}

}  // namespace gw
