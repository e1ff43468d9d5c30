#include "diagnose/figures.h"

#include <fmt/format.h>

#include <algorithm>

namespace gw {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string gpus_text(const std::vector<unsigned>& v) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    parts.push_back(j == i ? std::to_string(v[i])
                           : fmt::format("{}{}{}", v[i], j == i + 1 ? ", " : "-", v[j]));
    i = j + 1;
  }
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i)
    s += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return (v.size() == 1 ? "GPU " : "GPUs ") + s;
}

}  // namespace gw
