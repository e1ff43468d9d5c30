// libFuzzer target: the cluster descriptions shipped beside traces (Tiresias cluster CSV,
// Alibaba node list, Gavel cluster_specs.json; the first byte picks the reader) and the
// demand-derived cluster. Must never crash, hang or leak; a cluster read has at least one node
// of at least one GPU, and its GPU total fits in the unsigned the scheduler uses.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/fuzz_check.h"
#include "sim/trace_formats.h"

namespace {

void check_cluster(const gw::sim::ClusterSpec& c) {
  GW_FUZZ_CHECK(c.nodes >= 1 && c.gpus_per_node >= 1);
  GW_FUZZ_CHECK(uint64_t{c.nodes} * c.gpus_per_node <= UINT32_MAX);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  namespace f = gw::sim::formats;
  gw::Result<gw::sim::ClusterSpec> c = [&] {
    switch (data[0] % 4) {
      case 0:
        return f::parse_tiresias_cluster(text, "cluster.csv");
      case 1:
        return f::parse_alibaba_nodes(text, "nodes.csv");
      case 2:
        return f::parse_gavel_cluster_specs(text, "cluster_specs.json");
      default:
        break;
    }
    // Whatever a trace holds, the cluster sized from its demand is a real cluster.
    auto t = gw::sim::parse_trace_text(text, "fuzz.csv", "fuzz", gw::sim::TraceOptions{});
    if (!t) return gw::Result<gw::sim::ClusterSpec>(t.error());
    if (auto d = gw::sim::cluster_from_demand(t->jobs)) return gw::Result<gw::sim::ClusterSpec>(*d);
    return gw::Result<gw::sim::ClusterSpec>(gw::make_error("fuzz", "no durations", "fuzz"));
  }();
  if (c) check_cluster(*c);
  return 0;
}
