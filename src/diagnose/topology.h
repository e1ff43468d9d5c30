// A summary of `nvidia-smi topo -m` for the report and the topology rules: GPU pairs by link
// type, NVLink counts, NUMA and CPU affinity, pairs that really cross sockets, and where the
// NICs sit relative to the GPUs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/host.h"

namespace gw {

struct TopologyPair {
  std::string a, b;  // "GPU0", "GPU3"
  std::string link;  // "NV12", "SYS", ...
};

struct LinkCount {
  std::string link;   // "NV12"
  size_t pairs = 0;   // GPU pairs with this link
  std::string words;  // "12 bonded NVLinks", "through the CPU interconnect between NUMA nodes"
};

struct GpuAffinity {
  std::string gpu;
  std::optional<std::string> cpus;  // "0-47,96-143"
  std::optional<int> numa;
};

struct NicLocality {
  std::string nic;                   // "NIC0" (and its device name when the legend gives it)
  std::string best_link;             // closest link to any GPU: "PXB"
  std::vector<std::string> nearest;  // GPUs at that link
};

struct TopologySummary {
  size_t gpus = 0;
  size_t pairs = 0;
  std::vector<LinkCount> by_link;  // closest link type first
  size_t nvlink_pairs = 0;
  size_t nvlinks = 0;  // sum of the bonded link counts over all pairs
  std::vector<GpuAffinity> affinity;
  // NUMA nodes among the GPUs: 0 when none is known.
  size_t numa_nodes = 0;
  // SYS pairs by what the NUMA affinity says: different nodes (a real socket crossing), one
  // node (traffic through the host, no socket claim: fixture 117), or not given.
  std::vector<TopologyPair> cross_socket;
  std::vector<TopologyPair> sys_same_numa;
  std::vector<TopologyPair> sys_unknown_numa;
  std::vector<NicLocality> nics;
};

// Closeness rank of a topo -m link word: NV# 1, PIX 2, PXB 3, PHB 4, NODE 5, SYS 6 (unknown 7).
int link_rank(const std::string& link);
// The number of NVLinks in "NV12" (0 for other links).
unsigned nvlink_count(const std::string& link);

TopologySummary summarize_topology(const Topology& t);

}  // namespace gw
