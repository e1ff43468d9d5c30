// The bad files of the matrix, generated once per test run in a temporary folder.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace gw::badinput {

struct BadFile {
  std::string name;  // gtest-friendly: "missing", "dev_zero", ...
  std::string path;
};

// The names, in the order bad_files() gives them (known without creating anything, for
// gtest's test names at discovery time).
const std::vector<std::string>& bad_file_names();

// Creates the files on first use; every case of the matrix reads them.
const std::vector<BadFile>& bad_files();
const std::filesystem::path& work_dir();

// The unprivileged way to run the binary: as root, setpriv with every capability dropped, so
// the mode-000 file is unreadable (root bypasses file modes only through CAP_DAC_*).
std::vector<std::string> unprivileged_prefix();

}  // namespace gw::badinput
