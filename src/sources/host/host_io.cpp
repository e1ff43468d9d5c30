#include "sources/host/host_io.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gw::host {

namespace fs = std::filesystem;

bool RootedFs::exists(const fs::path& logical) const {
  std::error_code ec;
  return fs::exists(fs::symlink_status(real(logical), ec)) && !ec;
}

bool RootedFs::is_dir(const fs::path& logical) const {
  std::error_code ec;
  return fs::is_directory(real(logical), ec);
}

std::optional<std::string> RootedFs::read(const fs::path& logical,
                                          std::vector<Error>* errors) const {
  const fs::path p = real(logical);
  std::error_code ec;
  const auto st = fs::status(p, ec);
  if (st.type() == fs::file_type::not_found) return std::nullopt;
  const auto fail = [&](const std::string& why) -> std::optional<std::string> {
    if (errors != nullptr) {
      errors->push_back(make_error("host.unreadable",
                                   "cannot read " + logical.string() + ": " + why, p.string()));
    }
    return std::nullopt;
  };
  if (ec) return fail(ec.message());
  if (!fs::is_regular_file(st)) return fail("not a regular file");
  std::ifstream in(p, std::ios::binary);
  if (!in) return fail(std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return fail("read error");
  return text.str();
}

std::vector<std::string> RootedFs::list(const fs::path& logical) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(real(logical), ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> RootedFs::link_name(const fs::path& logical) const {
  std::error_code ec;
  const auto target = fs::read_symlink(real(logical), ec);
  if (ec || target.filename().empty()) return std::nullopt;
  return target.filename().string();
}

}  // namespace gw::host
