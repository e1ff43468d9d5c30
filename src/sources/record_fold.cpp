#include "sources/record_fold.h"

#include <algorithm>
#include <functional>
#include <string_view>

namespace gw {

namespace {

uint64_t h(std::string_view s) {
  return std::hash<std::string_view>()(s);
}
uint64_t h(double d) {
  return std::hash<double>()(d);
}
uint64_t h(unsigned v) {
  return v;
}
template <class T>
uint64_t h(const std::optional<T>& o) {
  return o ? hash_mix(1, h(*o)) : 0;
}

}  // namespace

uint64_t content_hash(const DcgmResult& r) {
  uint64_t k = hash_mix(static_cast<uint64_t>(r.kind), h(r.gpu));
  for (const std::string* s : {&r.part, &r.test, &r.text, &r.level}) k = hash_mix(k, h(*s));
  return hash_mix(k, (uint64_t{r.count} << 32) | r.of);
}

bool same_content(const DcgmResult& a, const DcgmResult& b) {
  return a.kind == b.kind && a.gpu == b.gpu && a.count == b.count && a.of == b.of &&
         a.part == b.part && a.test == b.test && a.text == b.text && a.level == b.level;
}

uint64_t content_hash(const CollectiveRun& r) {
  uint64_t k = hash_mix(h(r.test), r.rows.size());
  for (const CollectiveRow& row : r.rows)
    k = hash_mix(hash_mix(k, row.bytes), h(row.busbw_gbs) ^ (h(row.algbw_gbs) << 1));
  k = hash_mix(k, h(r.avg_busbw_gbs));
  for (const std::string& d : r.devices) k = hash_mix(k, h(d));
  return k;
}

bool same_content(const CollectiveRun& a, const CollectiveRun& b) {
  const auto same_rows = [](const CollectiveRow& x, const CollectiveRow& y) {
    return x.bytes == y.bytes && x.busbw_gbs == y.busbw_gbs && x.algbw_gbs == y.algbw_gbs;
  };
  const auto same_ids = [](const CollectiveDevice& x, const CollectiveDevice& y) {
    return x.cuda_index == y.cuda_index && x.bus == y.bus;
  };
  return a.test == b.test && a.avg_busbw_gbs == b.avg_busbw_gbs && a.devices == b.devices &&
         a.visible_devices == b.visible_devices &&
         std::equal(a.rows.begin(), a.rows.end(), b.rows.begin(), b.rows.end(), same_rows) &&
         std::equal(a.device_ids.begin(), a.device_ids.end(), b.device_ids.begin(),
                    b.device_ids.end(), same_ids);
}

uint64_t content_hash(const BandwidthMatrix& m) {
  uint64_t k = hash_mix(static_cast<uint64_t>(m.kind), h(m.title));
  k = hash_mix(k, (m.bidirectional ? 2 : 0) | (m.p2p ? (*m.p2p ? 4 : 8) : 0));
  for (const auto& row : m.cells) {
    k = hash_mix(k, row.size());
    for (const auto& cell : row) k = hash_mix(k, h(cell));
  }
  return k;
}

bool same_content(const BandwidthMatrix& a, const BandwidthMatrix& b) {
  return a.kind == b.kind && a.bidirectional == b.bidirectional && a.p2p == b.p2p &&
         a.title == b.title && a.cells == b.cells;
}

}  // namespace gw
