// Parsers for captured nvidia-smi outputs. Pure functions: text in, model out. `origin` names
// the input in errors ("dump.xml:12: expected ..."). Streaming forms call `sink` once per
// Snapshot (the Snapshot is reused between calls: copy what you keep).
#pragma once

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "core/host.h"
#include "core/result.h"
#include "core/snapshot.h"
#include "sources/smi/text_util.h"

namespace gw {

// Takes each snapshot a streaming parser completes, in order; `last` is true for the final one
// of its text (a reducer keeps that one: the newest state is what a report is about).
using SnapshotSink = std::function<void(const Snapshot&, bool last)>;

// nvidia-smi -q (text), any driver generation, Linux or Windows.
Result<Snapshot> parse_smi_query_text(std::string_view text, std::string_view origin);

// What a -q text said about itself, for the capture loader's notes.
struct QueryTextInfo {
  std::optional<unsigned> attached_gpus;  // "Attached GPUs : 8"
  size_t gpu_sections = 0;                // "GPU <bus id>" lines read
  bool implicit_gpu = false;  // fields before any GPU line: read as one GPU of unknown bus id
  bool header_only = false;   // driver/CUDA header and no GPU section (returned, no GPUs)
  size_t elided = 0;          // "[...]" lines
};
Result<Snapshot> parse_smi_query_text_ex(std::string_view text, std::string_view origin,
                                         QueryTextInfo* info);

// nvidia-smi -q -x (XML), driver 418 through 590 schemas.
Result<Snapshot> parse_smi_query_xml(std::string_view text, std::string_view origin);
// The largest -q -x document read (capture.smi_xml beyond it).
inline constexpr size_t kMaxSmiXmlBytes = size_t{8} << 20;

// nvidia-smi --query-gpu=... --format=csv[,nounits] (one-shot or -l series). Rows with the
// wrong number of fields add to `errors` and are skipped. Returns an Error only when the
// header itself is unusable. Returns the number of snapshots produced.
Result<size_t> parse_smi_csv(std::string_view text, std::string_view origin,
                             const SnapshotSink& sink, std::vector<Error>* errors);

// nvidia-smi dmon (any column subset, "-" = N/A). One Snapshot per cycle of GPU indices.
Result<size_t> parse_smi_dmon(std::string_view text, std::string_view origin,
                              const SnapshotSink& sink, std::vector<Error>* errors);

// Whether a trimmed line belongs to an nvidia-smi dmon block: a '#' line (the header's names
// or units) or a row that starts with a GPU index ("0", "  3  214 ...").
bool smi_dmon_line(std::string_view trimmed);
// parse_smi_dmon over the dmon block that starts at text[begin] (its header, line `first_line`),
// read while its lines fit (smi_dmon_line), in pieces (text::walk_block): found and read in one
// pass. Errors name the input's lines.
Result<size_t> parse_smi_dmon_at(std::string_view text, size_t begin, size_t first_line,
                                 const text::BlockLimits& limits, std::string_view origin,
                                 const SnapshotSink& sink, std::vector<Error>* errors,
                                 text::BlockStop& stop);

// nvidia-smi topo -m (ANSI escapes tolerated; tabs or spaces; NIC rows and columns).
Result<Topology> parse_smi_topo(std::string_view text, std::string_view origin);
// The header row of topo -m ("GPU0 GPU1 ... CPU Affinity ...").
bool looks_like_topo_header(std::string_view line);

// Plain nvidia-smi (the table).
Result<Snapshot> parse_smi_table(std::string_view text, std::string_view origin);

// Convenience: collect every snapshot of a CSV/dmon text (small inputs, tests).
std::vector<Snapshot> collect_smi_csv(std::string_view text, std::string_view origin,
                                      std::vector<Error>* errors);
std::vector<Snapshot> collect_smi_dmon(std::string_view text, std::string_view origin,
                                       std::vector<Error>* errors);

}  // namespace gw
