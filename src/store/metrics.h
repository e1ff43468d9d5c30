// The per-GPU readings the history keeps: one row of this table per stored column. The names
// are what `gpuwarden history --metric`, `/api/history` and the alert rules use; units are in
// the names. Adding a metric: append a row (never reorder: the row index is stored in the
// 1-minute rollup table) and add a migration that adds the column.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "core/snapshot.h"

namespace gw::store {

struct MetricDef {
  std::string_view name;  // "temp_c": also the SQL column name
  std::string_view help;  // one line for `history --list-metrics`
  std::optional<double> (*get)(const GpuSample&);
};

std::span<const MetricDef> metric_table();
// Index into metric_table(), or nullopt for an unknown name.
std::optional<size_t> metric_index(std::string_view name);
// "temp_c, mem_temp_c, ..." for error messages.
std::string metric_names_text();

}  // namespace gw::store
