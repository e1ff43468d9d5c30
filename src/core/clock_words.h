// The clock-reason bits in words ("SW power cap", "HW thermal slowdown"), worst first; "GPU
// idle" is left out (it is not a problem). Shared by `status`, `watch` and the dashboard so a
// reason reads the same everywhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gw {

std::vector<std::string> clock_reason_words(uint64_t mask);

}  // namespace gw
