#include "core/input_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "core/read_ahead_mapping.h"

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

std::string random_bytes(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(gen() & 0xFF);
  return s;
}

// Where two texts first differ (npos: equal), so that a failure names an offset instead of
// printing megabytes.
size_t first_difference(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return std::min(a.size(), b.size());
  const auto d = std::mismatch(a.begin(), a.end(), b.begin());
  return d.first == a.end() ? std::string_view::npos : static_cast<size_t>(d.first - a.begin());
}
constexpr size_t kSame = std::string_view::npos;

// Every byte of the view is the file's: ahead of the reader (copied in, or not yet), at it,
// behind it (given back to the file mapping), wherever the reader stands and whatever the size
// (no whole chunk, fewer chunks than buffers, a multiple of the chunk, a tail).
TEST_F(InputFileTest, ReadAheadViewHoldsTheFilesBytesBehindAtAndAheadOfTheReader) {
  constexpr uint64_t kChunk = ReadAheadMapping::kChunk;
  for (const uint64_t size : {kChunk - 1, 3 * kChunk, 5 * kChunk + 12345}) {
    SCOPED_TRACE(size);
    const std::string text = random_bytes(size, static_cast<unsigned>(size));
    const auto p = file("big", text);
    const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    auto m = ReadAheadMapping::open(fd, size);
    ::close(fd);  // it keeps a descriptor of its own
    ASSERT_NE(m, nullptr);
    ASSERT_TRUE(m->copying()) << "this kernel refused the copies (MREMAP_DONTUNMAP: Linux 5.13)";
    EXPECT_EQ(m->copied_chunks(), std::min<uint64_t>(size / kChunk, ReadAheadMapping::kSlots));
    const std::string_view view(m->data(), m->size()), want(text);
    ASSERT_EQ(view.size(), size);
    size_t most = 0;
    constexpr uint64_t kStep = 700001;  // lands anywhere in a chunk
    for (uint64_t done = 0; done < size; done += kStep) {
      const uint64_t end = std::min(done + kStep, size);
      ASSERT_EQ(first_difference(view.substr(done, end - done), want.substr(done, end - done)),
                kSame)
          << "at the reader, from " << done;
      m->advance(end);
      most = std::max(most, m->copied_chunks());
      ASSERT_TRUE(m->copying());
      ASSERT_EQ(first_difference(view.substr(0, end), want.substr(0, end)), kSame)
          << "behind the reader, done with " << end;
      const uint64_t tail = size - std::min<uint64_t>(size, 5000);
      ASSERT_EQ(first_difference(view.substr(tail), want.substr(tail)), kSame)
          << "the file's end, read ahead of the copies";
    }
    EXPECT_LE(most, ReadAheadMapping::kSlots);
    EXPECT_EQ(m->copied_chunks(), 0u) << "every copy goes back once the reader is past it";
    EXPECT_EQ(first_difference(view, want), kSame);
  }
}

// Choosing the cheaper way (doctor's): chunks 0 and 2 faulted in through the mapping and 1 and 3
// copied in to time them; whichever way the rest goes, the view holds the file's bytes, no more
// than kSlots chunks are ever copies, and none is once the reader is past them. Files of fewer
// than five whole chunks are not timed: they are copied as with kCopy.
TEST_F(InputFileTest, ReadAheadChoosingTheCheaperWayStillHoldsTheFilesBytes) {
  constexpr uint64_t kChunk = ReadAheadMapping::kChunk;
  for (const uint64_t size :
       {2 * kChunk + 5, 3 * kChunk, 5 * kChunk - 1, 5 * kChunk, 7 * kChunk + 4321}) {
    SCOPED_TRACE(size);
    const std::string text = random_bytes(size, static_cast<unsigned>(size) + 1);
    const int fd = ::open(file("cheaper", text).c_str(), O_RDONLY | O_CLOEXEC);
    auto m = ReadAheadMapping::open(fd, size, ReadAheadMapping::Choice::kCheaper);
    ::close(fd);
    ASSERT_NE(m, nullptr);
    if (size < 5 * kChunk) {
      EXPECT_TRUE(m->copying()) << "too small to time: copied";
    }
    // Timed: chunks 1 and 3 stay copies whichever way was chosen; untimed, chunks 0 and 1.
    EXPECT_EQ(m->copied_chunks(), 2u);
    const std::string_view view(m->data(), m->size()), want(text);
    ASSERT_EQ(first_difference(view, want), kSame) << "before any progress";
    for (uint64_t done = 0; done < size; done += 900001) {
      m->advance(done);
      ASSERT_LE(m->copied_chunks(), ReadAheadMapping::kSlots);
      ASSERT_EQ(first_difference(view, want), kSame) << "done with " << done;
    }
    m->advance(size);
    EXPECT_EQ(m->copied_chunks(), 0u);
    EXPECT_EQ(first_difference(view, want), kSame);
  }
}

// A reader that reports progress in long jumps: the buffer of a chunk it is done with moves on
// to the chunk the reader is in (or the next not copied yet), never to one it skipped behind.
TEST_F(InputFileTest, ReadAheadViewHoldsTheFilesBytesWhenTheReaderJumpsChunks) {
  constexpr uint64_t kChunk = ReadAheadMapping::kChunk;
  const uint64_t size = 9 * kChunk + 777;
  const std::string text = random_bytes(size, 9);
  const int fd = ::open(file("jumps", text).c_str(), O_RDONLY | O_CLOEXEC);
  auto m = ReadAheadMapping::open(fd, size);
  ::close(fd);
  ASSERT_NE(m, nullptr);
  const std::string_view view(m->data(), m->size()), want(text);
  for (const uint64_t done : {kChunk + 1, 4 * kChunk + 5, 4 * kChunk + 9, 8 * kChunk, size}) {
    m->advance(done);
    ASSERT_TRUE(m->copying());
    ASSERT_LE(m->copied_chunks(), ReadAheadMapping::kSlots);
    ASSERT_EQ(first_difference(view, want), kSame) << "done with " << done;
  }
  EXPECT_EQ(m->copied_chunks(), 0u);
}

// The file shrinks under the reader: the chunk a buffer moved on to cannot be filled. Copying
// stops, the buffer is dropped, the file is mapped where it was, and the bytes that are still
// the file's read as they did.
TEST_F(InputFileTest, ReadAheadStopsCopyingWhenTheFileShrinksAndKeepsItsBytes) {
  constexpr uint64_t kChunk = ReadAheadMapping::kChunk;
  const uint64_t size = 6 * kChunk, left = 3 * kChunk + kChunk / 2;
  const std::string text = random_bytes(size, 6);
  const auto p = file("shrinks", text);
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  auto m = ReadAheadMapping::open(fd, size);
  ::close(fd);
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(::truncate(p.c_str(), static_cast<off_t>(left)), 0);
  const std::string_view view(m->data(), left), want(std::string_view(text).substr(0, left));
  m->advance(kChunk + (uint64_t{64} << 10));  // chunk 0's buffer moves on to chunk 2: filled
  EXPECT_TRUE(m->copying());
  EXPECT_EQ(first_difference(view, want), kSame);
  m->advance(2 * kChunk + (uint64_t{64} << 10));  // chunk 1's to chunk 3: half of it is gone
  EXPECT_FALSE(m->copying());
  EXPECT_EQ(m->copied_chunks(), 1u) << "chunk 2 stays copied; the other buffer is dropped";
  EXPECT_EQ(first_difference(view, want), kSame);
  m->advance(left);
  EXPECT_EQ(first_difference(view, want), kSame);
}

TEST_F(InputFileTest, OnePassReadOfABigFileGivesItsBytesAndMovesWithTheObject) {
  const std::string text = random_bytes((size_t{16} << 20) + 3, 11);
  auto in = read_input(file("big", text), {}, InputAccess::kOnePass);
  ASSERT_TRUE(in.ok()) << in.error().to_string();
  EXPECT_TRUE(in->mapped());
  EXPECT_EQ(in->size(), text.size());
  for (uint64_t done = 0; done < text.size(); done += uint64_t{3} << 20) in->release_before(done);
  InputText moved = std::move(*in);
  EXPECT_EQ(first_difference(moved.text(), text), kSame);
  moved.release_before(text.size());
  EXPECT_EQ(first_difference(moved.text(), text), kSame);
}

}  // namespace
}  // namespace gw
