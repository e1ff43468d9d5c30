// DCGM's tool output in a capture: the `dcgmi diag` result table (any level, any DCGM version
// with the 27-column name field), the `dcgmi nvlink --link-status` grid, `dcgmi dmon` (any
// fields: one reading per GPU and field, XIDER also as an Xid), `dcgmi health -c` (the text
// table and `-j` JSON), `dcgmi discovery -l`, `dcgmi stats` reports, and single lines (the host
// engine's health log, dcgmi's own confirmations, "4 GPUs found."). Pure functions over text; the
// capture reader finds the blocks.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/dcgm.h"
#include "sources/smi/text_util.h"

namespace gw::dcgm {

enum class Block {
  kNone,
  kDiagTable,
  kNvlinkGrid,
  kDmon,
  kJson,
  kHealthTable,
  kDiscovery,     // `dcgmi discovery -l`
  kStats,         // `dcgmi stats -j` / `-p` job and process reports
  kNvlinkErrors,  // `dcgmi nvlink -e`
};

// The block `trimmed` starts (`next` is the trimmed line after it: a grid's border comes
// before its title). Cheap on other lines: a first-byte gate.
Block block_start(std::string_view trimmed, std::string_view next);
// Whether a line still belongs to a block of that kind (blank lines are the caller's).
bool block_fits(Block b, std::string_view trimmed);

struct BlockInfo {
  bool recognised = false;  // the block held what its kind promises (else: not DCGM's)
  std::string cut;          // non-empty: why the block is incomplete ("table cut before its end")
};

// Reads one block (its lines, joined with '\n'; `first_line` is the file line of its first).
BlockInfo read_block(Block b, std::string_view block, std::string_view origin, size_t first_line,
                     std::vector<DcgmResult>& out);

// `dcgmi dmon`'s readings of each GPU and field, gathered over the pieces a long log is read
// in (a dmon of days is one block): each piece's XID errors go to `out` as they come, the
// readings once the last piece is read. read_block reads a whole block with one.
class DmonReadings {
 public:
  DmonReadings();
  ~DmonReadings();
  DmonReadings(DmonReadings&&) noexcept;
  DmonReadings& operator=(DmonReadings&&) noexcept;
  BlockInfo read(std::string_view piece, std::string_view origin, size_t first_line,
                 std::vector<DcgmResult>& out);
  // The dmon block that starts at text[begin] (its header, line `first_line`), read while its
  // lines fit it (block_fits), in pieces (text::walk_block): found and read in one pass.
  BlockInfo read_from(std::string_view text, size_t begin, size_t first_line,
                      const text::BlockLimits& limits, std::string_view origin,
                      std::vector<DcgmResult>& out, text::BlockStop& stop);
  // The readings, named after the first piece's line.
  void finish(std::string_view origin, std::vector<DcgmResult>& out);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// One line of DCGM's: a host-engine health incident, "Successfully ran diagnostic for group.",
// "Health monitor systems set successfully.", a `dcgmi ...` command echo. True when read.
bool take_line(std::string_view trimmed, std::string_view origin, size_t line_no,
               std::vector<DcgmResult>& out);

}  // namespace gw::dcgm
