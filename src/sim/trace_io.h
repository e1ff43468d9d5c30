// Reading trace files from disk: plain or gzip-compressed (the bundled traces are stored as
// .gz), and the Philly trace that travels inside the binary as `simulate`'s default.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "core/result.h"

namespace gw::sim {

// Upper bound on a trace file's (decompressed) size: a real trace is a few hundred MB at most;
// this keeps /dev/zero or a gzip bomb from exhausting memory.
inline constexpr size_t kMaxTraceBytes = size_t{2} << 30;

// The file's text, inflated when it starts with the gzip magic (whatever its name).
Result<std::string> read_trace_file(const std::filesystem::path& p);

// Inflates gzip data held in memory (error origin `what`).
Result<std::string> gunzip(std::string_view data, std::string_view what);

// `dir/name`, or `dir/name.gz` when only the compressed copy exists; empty when neither.
std::filesystem::path find_plain_or_gz(const std::filesystem::path& dir, std::string_view name);

// A file name without a trailing ".gz": "ee9e8c.trace.gz" -> "ee9e8c.trace".
std::string strip_gz(std::string name);

// The bundled Philly trace (data/traces/philly-sia/philly.csv.gz, embedded at build time).
std::string_view bundled_philly_gz();
inline constexpr std::string_view kBundledPhillyName = "bundled:philly-sia/philly.csv";

}  // namespace gw::sim
