// Small helpers the rule files share for their figures and GPU lists.
#pragma once

#include <string>
#include <vector>

namespace gw {

// The median (the mean of the two middle values for an even count); 0 for none.
double median(std::vector<double> v);

// "GPUs 0-2 and 4-7", "GPU 5".
std::string gpus_text(const std::vector<unsigned>& v);

}  // namespace gw
