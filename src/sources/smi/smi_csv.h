// The CSV parser's two row paths, for tests and benchmarks. parse_smi_csv (smi_parsers.h)
// always takes the fast path; the reference path is the plain one (split into a field
// vector, reset the whole GpuState, parse every value through text_util) that the fast path
// must match Snapshot for Snapshot.
#pragma once

#include <string_view>
#include <vector>

#include "sources/smi/smi_parsers.h"

namespace gw::smi {

enum class CsvPath { kFast, kReference };

Result<size_t> parse_smi_csv_path(std::string_view text, std::string_view origin,
                                  const SnapshotSink& sink, std::vector<Error>* errors,
                                  CsvPath path);

}  // namespace gw::smi
