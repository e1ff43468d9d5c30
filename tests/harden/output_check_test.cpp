#include "cli/output_check.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

#include "run_binary.h"

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

// The nodes an output may name that must never be replaced by a regular file. Made in a temp
// dir (the machine's own /dev/null is never touched): a copy of /dev/null made with mknod
// (needs root, as in CI), a FIFO with a reader, a socket with a listener, symbolic links.
class OutputNodes : public OutputCheck {
 protected:
  // A character device node with /dev/null's numbers (1, 3), or empty when not root.
  fs::path null_copy() {
    const fs::path p = dir_ / "null";
    if (::mknod(p.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0) return {};
    return p;
  }
  static bool is_char_device(const fs::path& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
  }
};

TEST_F(OutputNodes, CharacterDeviceIsWrittenInPlaceNotReplaced) {
  const fs::path dev = null_copy();
  if (dev.empty()) GTEST_SKIP() << "mknod needs root (CI runs this as root)";
  for (const bool force : {false, true}) {
    auto st = write_file_atomically(dev.string(), "discarded", force);
    ASSERT_TRUE(st.ok()) << st.error().to_string();
    EXPECT_TRUE(is_char_device(dev)) << "the device node was replaced by a file";
    EXPECT_EQ(slurp(dev), "") << "a null device reads empty: the write went to the device";
  }
  EXPECT_EQ(files(), 1u) << "no temporary file is left behind";
}

TEST_F(OutputNodes, FifoIsWrittenToItsReader) {
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto reader = std::async(std::launch::async, [&] { return slurp(fifo); });
  auto st = write_file_atomically(fifo.string(), "through the pipe", false);
  ASSERT_TRUE(st.ok()) << st.error().to_string();
  EXPECT_EQ(reader.get(), "through the pipe");
  struct stat s {};
  ASSERT_EQ(::lstat(fifo.c_str(), &s), 0);
  EXPECT_TRUE(S_ISFIFO(s.st_mode));
  EXPECT_EQ(files(), 1u);
}

TEST_F(OutputNodes, UnixSocketIsConnectedTo) {
  const fs::path sock = dir_ / "s";
  const int lfd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, sock.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(lfd, 1), 0);
  auto reader = std::async(std::launch::async, [&] {
    const int c = ::accept(lfd, nullptr, nullptr);
    std::string got;
    char buf[256];
    for (ssize_t n; (n = ::read(c, buf, sizeof buf)) > 0;) got.append(buf, size_t(n));
    ::close(c);
    return got;
  });
  auto st = write_file_atomically(sock.string(), "over the socket", false);
  ASSERT_TRUE(st.ok()) << st.error().to_string();
  EXPECT_EQ(reader.get(), "over the socket");
  ::close(lfd);
  struct stat s {};
  ASSERT_EQ(::lstat(sock.c_str(), &s), 0);
  EXPECT_TRUE(S_ISSOCK(s.st_mode));
}

TEST_F(OutputNodes, SymlinkIsFollowedAndKept) {
  fs::create_directories(dir_ / "real");
  const fs::path target = dir_ / "real" / "report.txt";
  std::ofstream(target) << "old";
  fs::permissions(target, fs::perms(0640));
  const fs::path link = dir_ / "link.txt";
  fs::create_symlink(target, link);
  ASSERT_FALSE(write_file_atomically(link.string(), "new", false).ok())
      << "an existing target still needs --force";
  ASSERT_TRUE(write_file_atomically(link.string(), "new", true).ok());
  EXPECT_TRUE(fs::is_symlink(link)) << "the link was replaced by a file";
  EXPECT_EQ(slurp(target), "new");
  EXPECT_EQ(fs::status(target).permissions() & fs::perms::all, fs::perms(0640))
      << "a replaced file keeps its mode";
  EXPECT_EQ(static_cast<size_t>(std::distance(fs::directory_iterator(dir_ / "real"), {})), 1u);
}

TEST_F(OutputNodes, DanglingSymlinkIsRefused) {
  const fs::path link = dir_ / "dangling";
  fs::create_symlink(dir_ / "nowhere" / "x", link);
  auto st = write_file_atomically(link.string(), "x", true);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, "output.dangling_link");
  EXPECT_TRUE(fs::is_symlink(link));
}

// The end-to-end case that would have caught `-o /dev/null` turning /dev/null into a file:
// every writer of the binary, pointed at a device node, a FIFO and a symlink.
TEST_F(OutputNodes, EveryWriterOfTheBinaryKeepsTheNode) {
  const fs::path dev = null_copy();
  if (dev.empty()) GTEST_SKIP() << "mknod needs root (CI runs this as root)";
  const std::string trace = std::string(GW_SOURCE_DIR) + "/data/traces/philly-sia/philly.csv.gz";
  const std::vector<std::vector<std::string>> writers = {
      {"simulate", "--trace", trace, "--limit", "50", "--policies", "fcfs", "-o", dev.string()},
      {"simulate", "--trace", trace, "--limit", "50", "--policies", "fcfs", "--jobs-out", dev.string()},
      {"capture", "--demo", "-o", dev.string()},
      {"capture", "--demo", "--force", "-o", dev.string()},
  };
  for (const auto& args : writers) {
    const auto r = clitest::run_gpuwarden(args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << " " << args.back() << "\n" << r.describe();
    EXPECT_TRUE(is_char_device(dev)) << args[0] << ": the device node was replaced";
  }
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto reader = std::async(std::launch::async, [&] { return slurp(fifo); });
  const auto r = clitest::run_gpuwarden({"capture", "--demo", "-o", fifo.string()});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(reader.get().find("\"devices\""), std::string::npos) << "the scenario went through";
  const fs::path target = dir_ / "scenario.json", link = dir_ / "latest.json";
  fs::create_symlink(target, link);
  std::ofstream(target) << "{}";
  const auto l = clitest::run_gpuwarden({"capture", "--demo", "--force", "-o", link.string()});
  EXPECT_EQ(l.exit_code, 0) << l.describe();
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_NE(slurp(target).find("\"devices\""), std::string::npos);
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
