// Cluster: nodes of GPUs with their socket / PCIe-switch ids and health, which GPUs are free,
// and placement (which GPUs a job gets). The live queue builds one node from the host topology;
// the simulator builds many uniform ones.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sched/job.h"

namespace gw::sched {

enum class GpuHealth : uint8_t { kOk, kDrained, kFailed };

struct GpuSlot {
  uint32_t node = 0;
  uint16_t index = 0;        // GPU index within its node
  uint16_t socket = 0;       // CPU socket (NUMA node) the GPU hangs off
  uint16_t pcie_switch = 0;  // PCIe switch / NVLink island id, unique within the node
  GpuHealth health = GpuHealth::kOk;
  JobId job = 0;  // 0 = idle
};

struct NodeSpec {
  std::string name;
  // Per GPU: {socket, switch}.
  std::vector<std::pair<uint16_t, uint16_t>> gpus;
};

// Where a job goes (docs/scheduling.md#placement). Every node-aware mode puts a job of at most
// one node's GPUs on one node, and a wider job of g GPUs on floor(g / S) fully free nodes (lowest
// index first) plus, for the remainder, one more node chosen by the mode's single-node rule.
//  - kFirstFit: the lowest-index node with enough free GPUs (Tiresias `yarn`, PAI's default).
//  - kPack: best fit, the node with the fewest free GPUs that fit; ties by node index.
//  - kSpread: the node with the most free GPUs; ties by node index.
//  - kPool: no node boundaries, any free GPUs (Tiresias `count`): a capacity model.
// Ties never depend on allocation history, so a run is reproducible from its inputs alone.
enum class Packing : uint8_t { kPack, kSpread, kFirstFit, kPool };
std::string_view to_string(Packing p);
// "first-fit", "pack", "spread" or "pool"; nullopt for anything else.
std::optional<Packing> parse_packing(std::string_view name);

// A `--placement` value: a packing mode, or "gang:N" (first fit, wide jobs split into instances
// of N GPUs, as Alibaba PAI's simulator places a job converted to num_inst x num_gpu).
struct Placement {
  Packing packing = Packing::kPack;
  unsigned instance_gpus = 0;  // 0: no split
};
// "first-fit", "pack", "spread", "pool" or "gang:N" (N from 1 to 1024); nullopt otherwise.
std::optional<Placement> parse_placement(std::string_view text);
std::string to_string(const Placement& p);

// Per-node caps used by backfill: a job that would outlive the reservation may use at most
// `cap` GPUs of these nodes. Few entries (the reserved nodes), so a flat list.
struct NodeCaps {
  std::vector<std::pair<uint32_t, unsigned>> caps;
  // Pool placement has no nodes: at most this many GPUs in all for such jobs.
  std::optional<unsigned> pool_cap;
  std::optional<unsigned> cap(uint32_t node) const {
    for (const auto& [n, c] : caps)
      if (n == node) return c;
    return std::nullopt;
  }
};

class Cluster {
 public:
  explicit Cluster(std::vector<NodeSpec> nodes);
  // `nodes` x `gpus_per_node`, GPUs split evenly over `sockets`, `gpus_per_switch` per switch.
  static Cluster uniform(unsigned nodes, unsigned gpus_per_node, unsigned sockets = 2,
                         unsigned gpus_per_switch = 2);

  size_t node_count() const { return nodes_.size(); }
  size_t gpu_count() const { return gpus_.size(); }
  const GpuSlot& gpu(uint32_t g) const { return gpus_[g]; }
  const std::string& node_name(uint32_t n) const { return nodes_[n].name; }
  unsigned node_size(uint32_t n) const { return static_cast<unsigned>(nodes_[n].gpus.size()); }
  unsigned node_free(uint32_t n) const { return free_of_[n]; }
  const std::vector<uint32_t>& node_gpus(uint32_t n) const { return nodes_[n].gpus; }
  unsigned max_node_size() const { return max_size_; }
  unsigned free_gpus() const { return free_total_; }
  unsigned healthy_gpus() const { return healthy_total_; }
  unsigned busy_gpus() const { return busy_total_; }

  // The largest GPU count that can be placed right now (optionally under caps). Monotone:
  // every request up to it fits, no request above it does.
  unsigned max_fit(const NodeCaps* caps = nullptr) const;
  // GPUs for a job of `count` GPUs, or nullopt if it does not fit. Single-node requests go on
  // one node (topology-aware inside it); wider requests take whole, fully free nodes.
  std::optional<std::vector<uint32_t>> find(unsigned count, Packing packing,
                                            const NodeCaps* caps = nullptr) const;
  // Whether find() would succeed, without choosing the GPUs.
  bool fits(unsigned count, Packing packing) const;
  // Nodes a job of `count` GPUs spans when wider than one node (0 = fits on one node, or
  // pool placement): floor(count / S) whole nodes plus one for a remainder.
  unsigned nodes_needed(unsigned count) const;
  // Pool placement: node boundaries are ignored by max_fit and nodes_needed.
  void set_pool(bool pool) { pool_ = pool; }
  bool pool() const { return pool_; }
  // Instance split (docs/scheduling.md#instance-split-placement): a job wider than one node
  // whose GPUs are not a whole number of nodes, and a multiple of n, goes as GPUs/n instances of
  // n GPUs, each instance on one node, nodes lowest index first, as many per node as fit.
  // 0 turns it off. Other requests are placed as without it.
  void set_instance_gpus(unsigned n) { instance_ = n; }
  unsigned instance_gpus() const { return instance_; }
  // Whether a request of `count` GPUs is split into instances.
  bool split(unsigned count) const {
    return instance_ > 0 && !pool_ && count > max_size_ && max_size_ > 0 &&
           count % max_size_ != 0 && count % instance_ == 0 && instance_ <= max_size_;
  }

  void allocate(JobId job, const std::vector<uint32_t>& gpus);
  void release(const std::vector<uint32_t>& gpus);
  // Marks a GPU ok / drained / failed. An unhealthy GPU is never placed; the caller deals
  // with the job on it (Scheduler::fail_gpu).
  void set_health(uint32_t gpu, GpuHealth health);

 private:
  struct Node {
    std::string name;
    std::vector<uint32_t> gpus;
    unsigned free = 0;  // healthy and idle
    unsigned healthy = 0;
  };
  bool is_full(uint32_t n) const {
    return nodes_[n].free == nodes_[n].gpus.size() && nodes_[n].free > 0;
  }
  void rebucket(uint32_t n, unsigned old_free);
  void set_bit(std::vector<uint64_t>& bits, uint32_t n, bool on);
  // Usable free GPUs of node n under caps.
  unsigned usable(uint32_t n, const NodeCaps* caps) const;
  // The node for a single-node request of `count` GPUs by the mode's rule, skipping nodes in
  // `skip` (sorted); UINT32_MAX when none fits.
  uint32_t pick_node(unsigned count, Packing packing, const NodeCaps* caps,
                     const std::vector<uint32_t>& skip) const;
  std::vector<uint32_t> pick_in_node(uint32_t n, unsigned count) const;
  std::optional<std::vector<uint32_t>> pick_small(uint32_t n, unsigned count) const;
  std::optional<std::vector<uint32_t>> find_multi(unsigned count, Packing packing,
                                                  const NodeCaps* caps) const;
  std::optional<std::vector<uint32_t>> find_pool(unsigned count, const NodeCaps* caps) const;
  std::optional<std::vector<uint32_t>> find_instances(unsigned count, const NodeCaps* caps) const;
  // GPUs that instances of instance_ GPUs could take on all nodes now (no caps).
  unsigned instance_capacity() const;

  std::vector<GpuSlot> gpus_;
  std::vector<Node> nodes_;
  // Node ids by free-GPU count, as bitsets (by_free_[f] bit n: node n has f free GPUs), so
  // "lowest index with >= k free" is a few word operations whatever the history.
  std::vector<std::vector<uint64_t>> by_free_;
  std::vector<uint32_t> bucket_count_;
  std::vector<uint64_t> full_bits_;  // nodes whose every GPU is healthy and idle
  std::vector<unsigned> free_of_;    // nodes_[n].free, contiguous: node_free() in tight loops
  size_t words_ = 0;
  bool pool_ = false;
  unsigned instance_ = 0;
  unsigned max_size_ = 0;
  unsigned free_total_ = 0, healthy_total_ = 0, busy_total_ = 0;
  unsigned full_gpus_ = 0;  // GPUs on nodes that are entirely free
};

}  // namespace gw::sched
