// A file written for `doctor` to read, in a folder of this test process's own. The folder is
// removed when the process ends: ctest runs every test in a process of its own, and each used
// to leave its folder in /tmp (a thousand a day on a developer's machine).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace gw::test {

inline std::string scratch_file(const std::string& name, const std::string& text) {
  struct Folder {
    std::filesystem::path path;
    ~Folder() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Folder folder{std::filesystem::temp_directory_path() /
                             ("gw-doctor-test-" + std::to_string(::getpid()))};
  std::filesystem::create_directories(folder.path);
  const auto path = folder.path / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

}  // namespace gw::test
