// libFuzzer target: arbitrary bytes into parse_smi_csv. Must never crash, hang or leak; each
// GPU reading comes from its own row, and the count returned is the count delivered. The fast
// path (SIMD scans, the per-slot memo of repeated fields) must give exactly what the plain
// reference path gives: every snapshot and every error. Only the final snapshot is marked last.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/fuzz_check.h"
#include "sources/smi/smi_csv.h"

namespace {

struct Run {
  std::vector<gw::Snapshot> snaps;
  std::vector<gw::Error> errors;
  bool ok = false;
  size_t count = 0;
  size_t lasts = 0;           // snapshots delivered as the text's last
  bool last_was_last = true;  // no snapshot came after the one marked last
};

Run parse(std::string_view text, gw::smi::CsvPath path) {
  Run r;
  auto res = gw::smi::parse_smi_csv_path(
      text, "fuzz",
      [&](const gw::Snapshot& s, bool last) {
        if (r.lasts > 0) r.last_was_last = false;
        r.lasts += last ? 1 : 0;
        r.snaps.push_back(s);
      },
      &r.errors, path);
  r.ok = res.ok();
  if (res) r.count = *res;
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const Run fast = parse(text, gw::smi::CsvPath::kFast);
  size_t gpus = 0;
  for (const auto& s : fast.snaps) gpus += s.gpus.size();
  if (fast.ok) GW_FUZZ_CHECK(fast.count == fast.snaps.size());
  // The final snapshot, and only it, comes marked as the last (the reducer keeps it).
  GW_FUZZ_CHECK(fast.last_was_last && fast.lasts == (fast.snaps.empty() ? 0u : 1u));
  GW_FUZZ_CHECK(gpus <= gw::fuzz::lines_in(text));
  GW_FUZZ_CHECK(fast.errors.size() <= gw::fuzz::lines_in(text));
  const Run ref = parse(text, gw::smi::CsvPath::kReference);
  GW_FUZZ_CHECK(fast.ok == ref.ok && fast.count == ref.count);
  GW_FUZZ_CHECK(fast.snaps == ref.snaps);
  GW_FUZZ_CHECK(fast.errors.size() == ref.errors.size());
  for (size_t i = 0; i < fast.errors.size() && i < ref.errors.size(); ++i)
    GW_FUZZ_CHECK(fast.errors[i].message == ref.errors[i].message &&
                  fast.errors[i].where == ref.errors[i].where);
  return 0;
}
