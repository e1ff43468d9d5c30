#include "serve/job_mapping.h"

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace gw::serve {
namespace {

bool gpu_key(const std::string& name) {
  static const std::regex re(R"(^\d+(\.\d+)?$)");
  return std::regex_match(name, re);
}

}  // namespace

std::vector<std::string> parse_job_file(std::string_view text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size() && out.size() < 64) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty() && line.size() <= 128) out.emplace_back(line);
    pos = nl + 1;
  }
  return out;
}

JobMap read_job_mapping(const std::string& dir) {
  JobMap out;
  if (dir.empty()) return out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!gpu_key(name) || !e.is_regular_file(ec)) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::string text(8192, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    auto ids = parse_job_file(text);
    if (!ids.empty()) out[name] = std::move(ids);
  }
  return out;
}

}  // namespace gw::serve
