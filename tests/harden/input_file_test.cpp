#include "core/input_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

namespace gw {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

class InputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("gw-input-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  fs::path dir_;
};

TEST_F(InputFileTest, RegularFilesAreMappedWithTheirExactBytes) {
  const std::string text = std::string("line 1\n\0binary\xFF\n", 16) + std::string(100000, 'x');
  auto in = read_input(file("a.txt", text));
  ASSERT_TRUE(in.ok()) << in.error().to_string();
  EXPECT_TRUE(in->mapped());
  EXPECT_EQ(in->text(), text);
  InputText moved = std::move(*in);  // the mapping moves with the object
  EXPECT_EQ(moved.text(), text);
}

TEST_F(InputFileTest, EmptyFileIsEmptyText) {
  auto in = read_input(file("e", ""));
  ASSERT_TRUE(in.ok());
  EXPECT_TRUE(in->text().empty());
}

TEST_F(InputFileTest, EachRefusalNamesThePathAndWhatItIs) {
  auto missing = read_input((dir_ / "nope").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, "input.not_found");
  EXPECT_EQ(missing.error().where, (dir_ / "nope").string());

  auto dir = read_input(dir_.string());
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.error().code, "input.is_directory");

  const auto t0 = std::chrono::steady_clock::now();
  auto zero = read_input("/dev/zero");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, milliseconds(1000));
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().code, "input.special_file");
  EXPECT_NE(zero.error().message.find("character device"), std::string::npos);
}

TEST_F(InputFileTest, SocketIsRefused) {
  const auto path = (dir_ / "sock").string();
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  auto in = read_input(path);
  ::close(fd);
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.error().code, "input.special_file");
  EXPECT_NE(in.error().message.find("socket"), std::string::npos);
}

TEST_F(InputFileTest, FifoWithoutWriterIsAnErrorAfterTheBoundedWait) {
  const auto path = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  InputLimits lim;
  lim.first_data = milliseconds(300);
  const auto t0 = std::chrono::steady_clock::now();
  auto in = read_input(path, lim);
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.error().code, "input.no_writer");
  EXPECT_GE(took, milliseconds(250));
  EXPECT_LT(took, milliseconds(3000));
}

TEST_F(InputFileTest, FifoWithAWriterIsReadToTheEnd) {
  const auto path = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::thread writer([&] {
    std::this_thread::sleep_for(milliseconds(100));  // the reader is already waiting
    const int fd = ::open(path.c_str(), O_WRONLY);
    for (int i = 0; i < 3; ++i) {
      ASSERT_EQ(::write(fd, "chunk\n", 6), 6);
      std::this_thread::sleep_for(milliseconds(20));
    }
    ::close(fd);
  });
  auto in = read_input(path);
  writer.join();
  ASSERT_TRUE(in.ok()) << in.error().to_string();
  EXPECT_FALSE(in->mapped());
  EXPECT_EQ(in->text(), "chunk\nchunk\nchunk\n");
}

TEST_F(InputFileTest, PipeBeyondTheCapIsRefused) {
  // The writer outlives the reader that gave up: its writes must fail, not kill the test.
  const auto old_pipe = ::signal(SIGPIPE, SIG_IGN);
  const auto path = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::thread writer([&] {
    const int fd = ::open(path.c_str(), O_WRONLY);
    const std::string block(4096, 'z');
    for (int i = 0; i < 64; ++i)
      if (::write(fd, block.data(), block.size()) < 0) break;  // reader gone: stop
    ::close(fd);
  });
  InputLimits lim;
  lim.max_stream_bytes = 10000;
  auto in = read_input(path, lim);
  writer.join();
  ::signal(SIGPIPE, old_pipe);
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.error().code, "input.too_large");
}

TEST_F(InputFileTest, PipeThatGoesSilentIsStalled) {
  const auto path = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  int wfd = -1;
  std::thread writer([&] {
    wfd = ::open(path.c_str(), O_WRONLY);
    ASSERT_EQ(::write(wfd, "start\n", 6), 6);  // then nothing, with the end still open
  });
  InputLimits lim;
  lim.stall = milliseconds(300);
  auto in = read_input(path, lim);
  writer.join();
  ::close(wfd);
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.error().code, "input.stalled");
  EXPECT_NE(in.error().message.find("read 6 bytes"), std::string::npos) << in.error().message;
}

TEST_F(InputFileTest, StandardInputThatIsATerminalIsRefused) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(::grantpt(master), 0);
  ASSERT_EQ(::unlockpt(master), 0);
  const int slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(slave, 0);
  const int saved = ::dup(STDIN_FILENO);
  ::dup2(slave, STDIN_FILENO);
  auto in = read_input("-");
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  ::close(slave);
  ::close(master);
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.error().code, "input.stdin_is_terminal");
}

TEST_F(InputFileTest, StandardInputRedirectedFromAFileIsMapped) {
  const auto p = file("in.txt", "from stdin\n");
  const int fd = ::open(p.c_str(), O_RDONLY);
  const int saved = ::dup(STDIN_FILENO);
  ::dup2(fd, STDIN_FILENO);
  auto in = read_input("-");
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  ::close(fd);
  ASSERT_TRUE(in.ok()) << in.error().to_string();
  EXPECT_TRUE(in->mapped());
  EXPECT_EQ(in->text(), "from stdin\n");
}

TEST_F(InputFileTest, CheckInputPathAllowsFoldersOnlyWhenAsked) {
  EXPECT_TRUE(check_input_path(dir_.string(), true).ok());
  EXPECT_EQ(check_input_path(dir_.string(), false).error().code, "input.is_directory");
  EXPECT_EQ(check_input_path("/dev/zero", true).error().code, "input.special_file");
  const auto fifo = (dir_ / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(check_input_path(fifo, true).error().code, "input.special_file");
  EXPECT_TRUE(check_input_path(fifo, false, true).ok());
  EXPECT_TRUE(check_input_path(file("ok", "x"), false).ok());
}

}  // namespace
}  // namespace gw
