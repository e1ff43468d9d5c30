// The kernel-log follower survives rotation like `tail -F`: logrotate's rename + create and
// copytruncate while lines keep coming; every Xid line arrives exactly once. And what cannot
// be followed (a directory, a device, a FIFO nobody writes to) is refused at start.
#include <sys/stat.h>

#include <map>
#include <mutex>

#include "serve/event_sources.h"
#include "serve_helpers.h"

namespace gw::servetest {
namespace {

using namespace std::chrono_literals;

class Collected {
 public:
  serve::EventCallback sink() {
    return [this](Event&& e) {
      std::lock_guard lk(m_);
      ++seen_[e.pid ? "pid " + std::to_string(*e.pid) : e.message];
    };
  }
  size_t distinct() const {
    std::lock_guard lk(m_);
    return seen_.size();
  }
  std::map<std::string, int> seen() const {
    std::lock_guard lk(m_);
    return seen_;
  }

 private:
  mutable std::mutex m_;
  std::map<std::string, int> seen_;
};

std::string xid_line(int n) {
  return "[ " + std::to_string(n) +
         ".000000] NVRM: Xid (PCI:0000:18:00): 48, pid=" + std::to_string(n) +
         ", An uncorrectable double bit error\n";
}

TEST(KernelLogFollow, RenameCreateAndCopytruncateLoseAndRepeatNothing) {
  TempDir tmp;
  const fs::path log = tmp.write("kern.log", "old line before the daemon\n");
  Collected got;
  auto f = serve::KernelLogFollower::start(log.string(), got.sink());
  ASSERT_TRUE(f) << f.error().to_string();
  int n = 0;
  auto write_to = [&](std::ofstream& out, int count) {
    for (int i = 0; i < count; ++i) out << xid_line(++n) << std::flush;
  };
  auto arrived = [&](int count) {
    return wait_until([&] { return got.distinct() == size_t(count); }, 10s);
  };
  {
    std::ofstream w(log, std::ios::app);
    write_to(w, 50);
    ASSERT_TRUE(arrived(50));
    // logrotate: rename, the writer still appends to the renamed file until told, then create.
    fs::rename(log, tmp.path() / "kern.log.1");
    write_to(w, 20);
  }
  {
    std::ofstream w(log, std::ios::app);  // the new file (create)
    write_to(w, 30);
    ASSERT_TRUE(arrived(100)) << got.distinct();
    // copytruncate: the content copied away, the file cut to 0; the writer goes on.
    fs::copy_file(log, tmp.path() / "kern.log.2");
    fs::resize_file(log, 0);
  }
  std::this_thread::sleep_for(100ms);  // the follower notices the shrink before new lines pass it
  {
    std::ofstream w(log, std::ios::app);
    write_to(w, 40);
  }
  ASSERT_TRUE(arrived(140)) << got.distinct();
  std::this_thread::sleep_for(200ms);  // nothing arrives twice, even late
  for (const auto& [msg, count] : got.seen()) EXPECT_EQ(count, 1) << msg;
  EXPECT_EQ(got.distinct(), 140u);
}

// copytruncate that the follower cannot see as a shrink: lines written after its last read go
// into the copy, and the cut file grows past the old size before the next check. The lines
// come from the copy, then the new file from its top; each exactly once. Every interleaving of
// the follower's checks with the burst gives the same result, so the test does not race it.
TEST(KernelLogFollow, CopytruncateOutgrownBetweenTwoChecksLosesNothing) {
  TempDir tmp;
  const fs::path log = tmp.write("kern.log", "old line before the daemon\n");
  Collected got;
  auto f = serve::KernelLogFollower::start(log.string(), got.sink());
  ASSERT_TRUE(f) << f.error().to_string();
  int n = 0;
  auto burst = [&](int count) {
    std::string text;
    for (int i = 0; i < count; ++i) text += xid_line(++n);
    return text;
  };
  {
    std::ofstream w(log, std::ios::app);
    w << burst(50) << std::flush;
  }
  ASSERT_TRUE(wait_until([&] { return got.distinct() == 50u; }, 10s));
  for (int round = 0; round < 5; ++round) {
    const std::string unread = burst(10);  // written just before the copy
    const std::string after = burst(200);  // more than the old size, right after the cut
    {
      std::ofstream w(log, std::ios::app);
      w << unread << std::flush;
    }
    const fs::path copy = tmp.path() / ("kern.log-2026120" + std::to_string(round));
    fs::copy_file(log, copy);
    fs::resize_file(log, 0);
    {
      std::ofstream w(log, std::ios::app);
      w << after << std::flush;
    }
    ASSERT_TRUE(wait_until([&] { return got.distinct() == size_t(n); }, 10s))
        << "round " << round << ": " << got.distinct() << " of " << n;
  }
  std::this_thread::sleep_for(200ms);  // nothing arrives twice, even late
  for (const auto& [msg, count] : got.seen()) EXPECT_EQ(count, 1) << msg;
  EXPECT_EQ(got.distinct(), size_t(n));
}

// Without a copy the cut is still noticed (the bytes before the offset changed) and the new
// content is read from its top, not from the old offset (which would skip its first lines).
TEST(KernelLogFollow, CutFileOutgrownWithoutCopyIsReadFromItsTop) {
  TempDir tmp;
  const fs::path log = tmp.write("kern.log", "");
  Collected got;
  auto f = serve::KernelLogFollower::start(log.string(), got.sink());
  ASSERT_TRUE(f) << f.error().to_string();
  {
    std::ofstream w(log, std::ios::app);
    for (int i = 1; i <= 20; ++i) w << xid_line(i);
  }
  ASSERT_TRUE(wait_until([&] { return got.distinct() == 20u; }, 10s));
  {
    std::ofstream w(log, std::ios::trunc);  // cut and rewritten past the old size at once
    for (int i = 21; i <= 80; ++i) w << xid_line(i);
  }
  ASSERT_TRUE(wait_until([&] { return got.distinct() == 80u; }, 10s)) << got.distinct();
  std::this_thread::sleep_for(100ms);
  for (const auto& [msg, count] : got.seen()) EXPECT_EQ(count, 1) << msg;
}

// A driver crash written while the daemon follows the log: the RIP line comes lines after the
// report's header, which the follower still has (its recent lines), written in pieces.
TEST(KernelLogFollow, ADriverCrashIsOneEventNamedAfterItsHeader) {
  TempDir tmp;
  const fs::path log = tmp.write("kern.log", "old line before the daemon\n");
  std::mutex m;
  std::vector<Event> events;
  auto f = serve::KernelLogFollower::start(log.string(), [&](Event&& e) {
    std::lock_guard lk(m);
    events.push_back(std::move(e));
  });
  ASSERT_TRUE(f) << f.error().to_string();
  for (const char* line :
       {"[ 395.350871] BUG: unable to handle kernel NULL pointer dereference at 00000000000000b1\n",
        "[ 395.351068] Oops: 0000 [#1] SMP NOPTI\n",
        "[ 395.351153] CPU: 33 PID: 4564 Comm: sbatchd Tainted: P OE 4.18.0 #1\n",
        "[ 395.351681] RIP: 0010:_nv031695rm+0x79/0x940 [nvidia]\n",
        "[ 395.352001]  ? _nv031696rm+0x10/0x20 [nvidia]\n"}) {
    std::ofstream(log, std::ios::app) << line << std::flush;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(wait_until(
      [&] {
        std::lock_guard lk(m);
        return !events.empty();
      },
      10s));
  std::this_thread::sleep_for(200ms);
  std::lock_guard lk(m);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].driver_kind, DriverMessageKind::kKernelFault);
  EXPECT_EQ(events[0].process_name, "sbatchd");
  EXPECT_EQ(events[0].message.rfind("BUG: unable to handle kernel NULL pointer dereference", 0), 0u)
      << events[0].message;
}

TEST(KernelLogFollow, WhatCannotBeFollowedIsRefused) {
  TempDir tmp;
  const fs::path fifo = tmp.path() / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Collected got;
  for (const fs::path& p : {tmp.path(), fs::path("/dev/zero"), fifo}) {
    auto f = serve::KernelLogFollower::start(p.string(), got.sink());
    ASSERT_FALSE(f) << p;
    EXPECT_EQ(f.error().code, "kmsg.not_followable") << p << ": " << f.error().to_string();
  }
  // A FIFO with a writer is followed.
  const int w = ::open(fifo.c_str(), O_RDWR);  // O_RDWR: opens without waiting for a reader
  ASSERT_GE(w, 0);
  auto f = serve::KernelLogFollower::start(fifo.string(), got.sink());
  ASSERT_TRUE(f) << f.error().to_string();
  const std::string line = xid_line(7);
  ASSERT_EQ(::write(w, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  EXPECT_TRUE(wait_until([&] { return got.distinct() == 1; }, 5s));
  f->reset();
  ::close(w);
}

}  // namespace
}  // namespace gw::servetest
