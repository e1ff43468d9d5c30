// `gpuwarden history` output: pure renderers over query results, and the time arguments.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "store/store.h"

namespace gw::store {

// "now", "-1h" / "1h" (that long ago), Unix seconds or milliseconds, or ISO 8601 UTC
// ("2026-12-01T08:00:00Z") -> Unix ms.
Result<int64_t> parse_time_arg(std::string_view text, int64_t now_ms);

std::string history_table(const std::vector<HistoryPoint>& pts, std::string_view metric);
std::string history_csv(const std::vector<HistoryPoint>& pts, std::string_view metric);
// One point as `history --json` and `/api/history` both write it.
nlohmann::json history_point_json(const HistoryPoint& p);
std::string history_json(const std::vector<HistoryPoint>& pts, std::string_view metric,
                         int64_t from_ms, int64_t to_ms);
// The metric names with their help lines.
std::string metrics_list();

}  // namespace gw::store
