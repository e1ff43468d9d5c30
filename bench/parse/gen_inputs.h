// Generators for realistic big inputs: an 8-GPU `--query-gpu ... -l 1` CSV log and a kernel
// log that is mostly non-GPU lines with Xid/SXid lines mixed in.
#pragma once

#include <cstddef>
#include <string>

namespace gw::bench {

struct Generated {
  size_t bytes = 0;
  size_t rows = 0;       // CSV rows or log lines
  size_t gpu_lines = 0;  // kernel log: lines that are Xid/SXid/fallen-off-the-bus
};

Generated write_csv_log(const std::string& path, size_t target_bytes);
Generated write_kernel_log(const std::string& path, size_t target_bytes);

}  // namespace gw::bench
