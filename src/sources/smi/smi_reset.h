// What `nvidia-smi -r` (and `-pm`) print:
//   The following GPUs could not be reset:
//     GPU 00000000:1A:00.0: In use by another client
//   GPU 00000000:1A:00.0 was successfully reset.
//   All done.                       (a setting applied: -pm, -c, ...)
//   Enabled MIG Mode for GPU 00000000:10:1C.0, Successfully created GPU instance ID 9 on GPU 0
//   using profile MIG 1g.5gb (ID 19), ... compute instance ...   (MIG set-up done: read)
// A refused reset is read when a later line of the input says the same GPU was reset; a refusal
// nothing resolves is handed back at the end (unresolved()) to be listed as not read: the GPU
// may still need its reset. Pure over text.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gw {

class SmiResetScanner {
 public:
  bool take(std::string_view trimmed, size_t line_no);
  // The refusals no later success resolved: (line, text).
  std::vector<std::pair<size_t, std::string>> unresolved() const;

 private:
  struct Refusal {
    std::string bus;
    size_t line = 0;
    std::string text;
  };
  size_t refused_header_ = 0;  // the line of "could not be reset:", 0 when none is open
  std::vector<Refusal> refused_;
  std::set<std::string> reset_;
};

}  // namespace gw
