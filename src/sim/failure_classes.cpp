#include "sim/failure_classes.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace gw::sim {
namespace {

// Table 5 of "The Llama 3 Herd of Models" (arXiv 2407.21783, §3.3.4), summed per class; the rows
// are in data/failure/llama3-table5.tsv.
struct ClassCount {
  std::string_view name;
  FailureScope scope;
  uint32_t count;
  bool hardware, infrastructure;
};
constexpr std::array<ClassCount, 7> kTable5 = {{
    // Faulty GPU 148, SRAM 19, GPU system processor 17, silent data corruption 6, thermal 6.
    {"gpu", FailureScope::kGpu, 196, true, true},
    {"gpu-memory", FailureScope::kGpu, 72, true, true},  // HBM3
    // NIC 7, SSD 3, power supply 3, chassis 2, IO board 2, CPU 2, system memory 2.
    {"host", FailureScope::kNode, 21, true, true},
    // "Host Maintenance": the paper counts it as suspected hardware.
    {"unplanned-maintenance", FailureScope::kNode, 32, true, true},
    {"network", FailureScope::kNodeGroup, 35, false, true},  // switch or cable
    // Software bug 54, dependency 2; NCCL watchdog timeouts 7. Per rank (one process per GPU):
    // any rank that crashes, or whose collective stalls, stops the whole synchronous job.
    {"software", FailureScope::kJobGpu, 56, false, false},
    {"unknown", FailureScope::kJobGpu, 7, false, false},
}};

}  // namespace

std::string_view scope_name(FailureScope s) {
  switch (s) {
    case FailureScope::kGpu:
      return "gpu";
    case FailureScope::kNode:
      return "node";
    case FailureScope::kNodeGroup:
      return "node-group";
    case FailureScope::kJob:
      return "job";
    case FailureScope::kJobGpu:
      return "job-gpu";
  }
  return "?";
}

std::string_view rate_unit(FailureScope s) {
  switch (s) {
    case FailureScope::kGpu:
      return "GPU-hour";
    case FailureScope::kNode:
      return "node-hour";
    case FailureScope::kNodeGroup:
      return "switch-hour";
    case FailureScope::kJob:
      return "job-hour";
    case FailureScope::kJobGpu:
      return "GPU-hour of the job";
  }
  return "?";
}

std::vector<FailureClass> llama3_classes(unsigned nodes_per_group) {
  const unsigned k = std::max(1u, nodes_per_group);
  const double nodes = kLlama3Gpus / kLlama3GpusPerNode;
  const double groups = std::ceil(nodes / k);
  std::vector<FailureClass> out;
  for (const ClassCount& c : kTable5) {
    double units = 1;
    switch (c.scope) {
      case FailureScope::kGpu:
      case FailureScope::kJobGpu:
        units = kLlama3Gpus;
        break;
      case FailureScope::kNode:
        units = nodes;
        break;
      case FailureScope::kNodeGroup:
        units = groups;
        break;
      case FailureScope::kJob:
        units = 1;
        break;
    }
    out.push_back(FailureClass{std::string(c.name), c.scope, c.count / (units * kLlama3Hours),
                               c.hardware, c.infrastructure, c.count});
  }
  return out;
}

PlannedMaintenance llama3_planned() {
  return PlannedMaintenance{std::llround(kLlama3Hours * 3.6e6 / kLlama3Planned), 0};
}

std::string llama3_source() {
  return "Llama 3 405B pre-training (\"The Llama 3 Herd of Models\", arXiv 2407.21783, Table 5): "
         "419 unexpected interruptions by cause plus 47 planned in 54 days on 16,384 H100 GPUs "
         "(2,048 nodes, 2 per switch)";
}

std::vector<FailureClass> single_rate_classes(double per_gpu_hour, double per_node_hour) {
  std::vector<FailureClass> out;
  if (per_gpu_hour > 0) out.push_back({"gpu", FailureScope::kGpu, per_gpu_hour, true, true, 0});
  if (per_node_hour > 0) out.push_back({"node", FailureScope::kNode, per_node_hour, true, true, 0});
  return out;
}

double job_rate_per_hour(const std::vector<FailureClass>& classes, unsigned gpus, unsigned nodes,
                         unsigned groups, bool (*keep)(const FailureClass&)) {
  double r = 0;
  for (const FailureClass& c : classes) {
    if (keep && !keep(c)) continue;
    switch (c.scope) {
      case FailureScope::kGpu:
      case FailureScope::kJobGpu:
        r += c.rate_per_unit_hour * gpus;
        break;
      case FailureScope::kNode:
        r += c.rate_per_unit_hour * nodes;
        break;
      case FailureScope::kNodeGroup:
        r += c.rate_per_unit_hour * groups;
        break;
      case FailureScope::kJob:
        r += c.rate_per_unit_hour;
        break;
    }
  }
  return r;
}

double job_rate_for_width(const std::vector<FailureClass>& classes, unsigned gpus,
                          unsigned gpus_per_node, unsigned nodes_per_group,
                          bool (*keep)(const FailureClass&)) {
  const unsigned per = std::max(1u, gpus_per_node), k = std::max(1u, nodes_per_group);
  const unsigned nodes = (gpus + per - 1) / per;
  const unsigned groups = (nodes + k - 1) / k;
  // A multi-node job holds whole nodes, so every GPU of them is exposed.
  const unsigned held = nodes > 1 ? nodes * per : gpus;
  return job_rate_per_hour(classes, held, nodes, groups, keep);
}

double expected_ett(double lambda, double interval, double cost, double restart) {
  if (interval <= 0) return 0;
  if (lambda <= 0) return interval / (interval + cost);
  // Useful work kept per attempt: I x sum_k P(attempt survives R + k (I + C)); an attempt lasts
  // 1/lambda on average.
  const double denom = std::expm1(lambda * (interval + cost));
  if (!std::isfinite(denom)) return 0;
  return lambda * interval * std::exp(-lambda * restart) / denom;
}

double first_order_ett(double lambda, double interval, double cost, double restart) {
  if (interval <= 0) return 0;
  return (1 - lambda * (restart + interval / 2)) / (1 + cost / interval);
}

double log_wall_without_checkpoints(double lambda, double work, double restart) {
  if (lambda <= 0) return std::log(std::max(work, 1.0));
  const double x = lambda * (work + restart);
  // (exp(x) - 1) / lambda, in logs so that it cannot overflow.
  return x + std::log(-std::expm1(-x)) - std::log(lambda);
}

}  // namespace gw::sim
