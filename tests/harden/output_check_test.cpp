#include "cli/output_check.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gw::cli {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class OutputCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gw-out-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  size_t files() const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {}));
  }
  fs::path dir_;
};

TEST_F(OutputCheck, AtomicWriteReplacesOnlyWhenAllowed) {
  const auto p = (dir_ / "r.html").string();
  ASSERT_TRUE(write_file_atomically(p, "one", false).ok());
  EXPECT_EQ(slurp(p), "one");
  auto refused = write_file_atomically(p, "two", false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, "output.exists");
  EXPECT_EQ(slurp(p), "one");
  ASSERT_TRUE(write_file_atomically(p, "three", true).ok());
  EXPECT_EQ(slurp(p), "three");
  EXPECT_EQ(files(), 1u) << "no temporary file is left behind";
}

TEST_F(OutputCheck, UncommittedFileLeavesNothing) {
  {
    auto f = AtomicFile::create((dir_ / "c.json").string(), false);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE(f->write("partial").ok());
  }
  EXPECT_EQ(files(), 0u);
}

TEST_F(OutputCheck, DirectoryIsRefused) {
  auto f = AtomicFile::create(dir_.string(), true);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().code, "output.is_directory");
}

TEST(FinishOutput, AFailedStreamTurnsIntoTheWriteErrorCode) {
  std::ostringstream ok, err;
  EXPECT_EQ(finish_output(1, ok, err), 1);
  EXPECT_TRUE(err.str().empty());
  std::ofstream full("/dev/full");
  ASSERT_TRUE(full.is_open());
  full << std::string(1 << 16, 'x');
  EXPECT_EQ(finish_output(0, full, err), kWriteError);
  EXPECT_NE(err.str().find("cannot write to standard output"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace gw::cli
