// The CSV parser's two row paths, for tests and benchmarks. parse_smi_csv (smi_parsers.h)
// always takes the fast path; the reference path is the plain one (split into a field
// vector, reset the whole GpuState, parse every value through text_util) that the fast path
// must match Snapshot for Snapshot.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sources/smi/smi_parsers.h"

namespace gw::smi {

enum class CsvPath { kFast, kReference };

Result<size_t> parse_smi_csv_path(std::string_view text, std::string_view origin,
                                  const SnapshotSink& sink, std::vector<Error>* errors,
                                  CsvPath path);

// What a CSV block held, for a reader that finds the CSV inside a larger text.
struct CsvBlockInfo {
  size_t end = 0;       // byte offset just past the block's last CSV line
  size_t end_line = 0;  // that line's number, 1 = the header
  size_t rows = 0;      // rows read
  size_t bad_rows = 0;  // rows with the wrong number of fields
  size_t elided = 0;    // "[...]" lines
  // In: called with the bytes of `text` read so far, about every MiB (a progress line).
  std::function<void(size_t bytes)> on_progress;
  // In: the column names when `text` has no header line (`--format=csv,noheader`: from the
  // command's --query-gpu, or inferred); line 1 is then the first row.
  std::string header;
};
// True for a line that belongs to something else (a kernel log line, a prompt...).
using CsvStopFn = std::function<bool(std::string_view line)>;

// `--format=csv,noheader` rows seen without their command: the header inferred from one row's
// values, or "" when the line is not such a row. Only what a value shows for certain is named
// (a GPU name, a PCI bus id, a GPU UUID, a P-state, a driver version, an index before a name);
// every other column is "column N", read only for failed readings. `named` counts the named.
std::string infer_csv_header(std::string_view row, size_t* named);
// The column names of an `nvidia-smi --query-gpu=a,b,c --format=csv,noheader` command line
// ("a, b, c"), or "" when the line is not one (no query, or a header is printed).
std::string query_header_of(std::string_view command);
// True when every field of the row is a value nvidia-smi prints or names a GPU: a row with the
// wrong field count that is not this (a sentence after the table) ends a table, not an error.
bool looks_like_csv_values(std::string_view row);
// How many fields a row has, not counting a note written after it ("<= GPU is unusable").
size_t csv_row_fields(std::string_view row);

// parse_smi_csv_path over the start of `text`: with `is_other` set, the table ends at the first
// row with no comma or with the wrong field count that `is_other` claims (info->end says
// where); without it, as parse_smi_csv. "[...]" lines are skipped and counted.
Result<size_t> parse_smi_csv_block(std::string_view text, std::string_view origin,
                                   const SnapshotSink& sink, std::vector<Error>* errors,
                                   CsvPath path, const CsvStopFn* is_other, CsvBlockInfo* info);

}  // namespace gw::smi
