// libFuzzer target: arbitrary bytes as a `dcgmi dmon` block, read as the capture reader reads it
// (DmonReadings::read_from: most rows held to the bounds of their shape, DmonShape) and row by
// row (DmonReadings::read: every cell read). Both must give the same readings and Xids, and
// neither may crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/fuzz_check.h"
#include "sources/dcgm/dcgm_text.h"

namespace {

using Digest = std::tuple<int, long, std::string, std::string, unsigned, unsigned, std::string>;

std::vector<Digest> digest(const std::vector<gw::DcgmResult>& rs) {
  std::vector<Digest> out;
  for (const gw::DcgmResult& r : rs)
    out.emplace_back(static_cast<int>(r.kind), r.gpu ? static_cast<long>(*r.gpu) : -1L, r.test,
                     r.text, r.count, r.of, r.origin);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const size_t huge = size_t{1} << 40;
  std::vector<gw::DcgmResult> one_pass, row_by_row;
  gw::text::BlockStop stop;
  gw::dcgm::DmonReadings a;
  a.read_from(text, 0, 1, {huge, huge}, "fuzz", one_pass, stop);
  a.finish("fuzz", one_pass);
  GW_FUZZ_CHECK(stop.end <= text.size());
  gw::dcgm::DmonReadings b;
  b.read(text.substr(0, stop.end), "fuzz", 1, row_by_row);
  b.finish("fuzz", row_by_row);
  GW_FUZZ_CHECK(digest(one_pass) == digest(row_by_row));
  // A reading per (GPU, field), at most 4,096 of them (kMaxDmonReadings), and an Xid per row.
  GW_FUZZ_CHECK(one_pass.size() <= 4096 + gw::fuzz::lines_in(text));
  return 0;
}
