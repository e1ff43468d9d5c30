// `dcgmi diag -j`: the diagnostic's results as JSON, in the layouts of DCGM 2.x to 4.x and of
// nvvs ("gpu_id" / "gpu_ids" / "entity_id" per result, warnings as strings or as objects with
// "warning", upper- or mixed-case statuses). Read token by token rather than parsed whole, so
// that what people paste (cut mid-way, an entry replaced by "...") still gives the results it
// shows. Pure over text.
#pragma once

#include <string_view>
#include <vector>

#include "core/dcgm.h"
#include "sources/dcgm/dcgm_text.h"

namespace gw::dcgm {

// The results of one JSON block as DcgmResults: one kDiagFail / kDiagWarn / kDiagSkip per test
// and GPU (text: the result's warnings, else its info lines), and one kDiagPass when results
// were shown and none failed or warned. Recognised when a result with a status stands under a
// test's name; cut when the JSON does not close.
BlockInfo read_diag_json(std::string_view block, std::string_view origin, size_t first_line,
                         std::vector<DcgmResult>& out);

// A line that may belong to a pretty-printed JSON text (a brace, bracket, string, number or
// literal first): where a JSON block that never closes ends.
bool json_like(std::string_view trimmed);

}  // namespace gw::dcgm
