// File access for the host-facts reader: everything below a root, absent vs unreadable kept
// apart. Internal to src/sources/host.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace gw::host {

class RootedFs {
 public:
  explicit RootedFs(std::filesystem::path root) : root_(std::move(root)) {}

  // "proc/loadavg" or "/proc/loadavg" -> <root>/proc/loadavg.
  std::filesystem::path real(const std::filesystem::path& logical) const {
    return root_ / logical.relative_path();
  }
  bool exists(const std::filesystem::path& logical) const;
  // The file's text; std::nullopt when absent (no error) or unreadable (an Error naming the
  // path is appended to `errors`).
  std::optional<std::string> read(const std::filesystem::path& logical,
                                  std::vector<Error>* errors) const;
  // Names of the entries of a folder, sorted; empty when absent or unreadable.
  std::vector<std::string> list(const std::filesystem::path& logical) const;
  // The last component of a symlink's target ("nvidia" for .../drivers/nvidia).
  std::optional<std::string> link_name(const std::filesystem::path& logical) const;
  bool is_dir(const std::filesystem::path& logical) const;

 private:
  std::filesystem::path root_;
};

}  // namespace gw::host
