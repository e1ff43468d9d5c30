// `doctor --from` on a 1 GiB kernel log and a 256 MiB --query-gpu CSV keeps the process's peak
// RSS (VmHWM, from wait4's ru_maxrss) under 64 MiB, and loses nothing on the way: every line is
// counted, every Xid is counted (issue 20). The inputs are written into the build directory
// (a 1 MiB block repeated, about a second) and removed at the end.
//
// The bound is the child's own high-water mark. In a plain build it is 64 MiB whatever the input.
// Under ASan three things are ASan's memory, not ours, and are allowed for: its runtime and the
// 400 MB binary (measured: the same binary's peak on a one-line input), the shadow byte it
// faults in for every 8 bytes read from the mapped file (input/8, never given back), and its
// redzones around each heap block (the 64 MiB counted twice). A parse that kept the mapping
// resident (the bug this guards) would still exceed that by the whole input. The child runs
// with a small allocator quarantine: the default keeps up to 256 MiB of freed blocks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
constexpr long kBoundKb = 64 * 1024;

struct Block {
  std::string text;
  size_t lines = 0;
  size_t xid13 = 0;  // Xid 13 lines on bus 18
};

// About 1 MiB of dmesg lines: kernel chatter with an NVRM Xid on one of 8 GPUs every 50 lines.
Block kernel_block() {
  Block b;
  const char* noise[] = {
      "EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode. Quota mode: none.",
      "IPv6: ADDRCONF(NETDEV_CHANGE): ens3f0np0: link becomes ready",
      "mlx5_core 0000:b8:00.0: mlx5_pcie_event:301:(pid 1234): PCIe slot advertised power",
      "systemd-journald[812]: Received client request to flush runtime journal."};
  char line[256];
  for (size_t n = 0; b.text.size() < (size_t{1} << 20) - 256; ++n) {
    const double t = static_cast<double>(n) * 0.013;
    const unsigned bus = 0x18 + static_cast<unsigned>((n / 50) % 8);
    if (n % 50 == 0)
      std::snprintf(line, sizeof line,
                    "[%12.6f] NVRM: Xid (PCI:0000:%02x:00): 13, pid=4242, name=python, Graphics "
                    "Exception: ESR 0x405848=0x3d000000\n",
                    t, bus);
    else
      std::snprintf(line, sizeof line, "[%12.6f] %s\n", t, noise[n % 4]);
    b.text += line;
    ++b.lines;
    if (n % 50 == 0 && bus == 0x18) ++b.xid13;
  }
  return b;
}

// About 1 MiB of an 8-GPU --query-gpu CSV log without its header: `seconds` rows per GPU.
Block csv_block(int first_second) {
  Block b;
  char line[512];
  for (int s = first_second; b.text.size() < (size_t{1} << 20) - 4096; ++s)
    for (int g = 0; g < 8; ++g) {
      std::snprintf(
          line, sizeof line,
          "2026/11/%02d %02d:%02d:%02d.000, %d, NVIDIA H100 80GB HBM3, 00000000:%02X:00.0, "
          "GPU-0000000%d-1111-2222-3333-444444444444, %d, %d.12 W, 700.00 W, %d %%, "
          "%d %%, %d MiB, 81559 MiB, 1980 MHz, 0x0000000000000000\n",
          1 + s / 86400, s / 3600 % 24, s / 60 % 60, s % 60, g, 0x18 + g, g, 60 + (s + g) % 20,
          500 + (s * 7 + g) % 200, 90 + s % 10, 40 + g, 60000 + s % 1000);
      b.text += line;
      ++b.lines;
    }
  return b;
}

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    ASSERT_GT(n, 0) << "writing the test input";
    off += static_cast<size_t>(n);
  }
}

struct Child {
  int exit_code = -1;
  long max_rss_kb = 0;
  std::string out;
};

// Runs the gpuwarden binary with `args`, stdout into `out_path`; its peak RSS from wait4.
Child run(const std::vector<std::string>& args, const fs::path& out_path) {
  const fs::path bin = fs::path(GW_BINARY_DIR) / "gpuwarden";
  std::vector<char*> argv{const_cast<char*>(bin.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || ::dup2(fd, STDOUT_FILENO) < 0) ::_exit(126);
    ::setenv("ASAN_OPTIONS", "quarantine_size_mb=8:detect_leaks=0", 1);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  Child c;
  int status = 0;
  rusage ru{};
  if (pid < 0 || ::wait4(pid, &status, 0, &ru) != pid) return c;
  c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  c.max_rss_kb = ru.ru_maxrss;  // kilobytes on Linux: the child's VmHWM
  std::ifstream in(out_path);
  std::stringstream ss;
  ss << in.rdbuf();
  c.out = ss.str();
  return c;
}

// The peak-RSS bound for an input of `input_bytes` (see the top of this file).
long bound_kb(const fs::path& dir, size_t input_bytes) {
#if defined(__SANITIZE_ADDRESS__)
  const fs::path tiny = dir / "tiny.log";
  std::ofstream(tiny) << "[    1.000000] Linux version 6.1.0\n";
  const Child base = run({"doctor", "--json", "--from", tiny.string()}, dir / "tiny.json");
  return base.max_rss_kb + 2 * kBoundKb + static_cast<long>(input_bytes / 8 / 1024);
#else
  (void)dir;
  (void)input_bytes;
  return kBoundKb;
#endif
}

class BigInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(GW_BINARY_DIR) / ("big-input-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(BigInput, KernelLogOfOneGibStaysUnder64MibAndCountsEverything) {
  const Block b = kernel_block();
  const fs::path log = dir_ / "kernel.log";
  constexpr size_t kBlocks = 1024;
  {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    for (size_t i = 0; i < kBlocks; ++i) write_all(fd, b.text);
    ::close(fd);
  }
  ASSERT_GE(fs::file_size(log), size_t{1000} << 20);
  const Child c = run({"doctor", "--json", "--from", log.string()}, dir_ / "out.json");
  ASSERT_GE(c.exit_code, 0) << "killed by a signal";
  const auto j = nlohmann::json::parse(c.out);
  ASSERT_EQ(j["coverage"].size(), 1u);
  EXPECT_EQ(j["coverage"][0]["lines"].get<size_t>(), b.lines * kBlocks);
  EXPECT_EQ(j["coverage"][0]["lines_not_understood"].get<size_t>(), 0u);
  EXPECT_EQ(j["coverage"][0]["formats"], nlohmann::json::array({"kernel log"}));
  // Events beyond 1000 per (kind, GPU, code) are counted, not kept: the note has the count.
  const std::string count = std::to_string(b.xid13 * kBlocks) + " xid 13 on ";
  bool counted = false;
  for (const auto& n : j["notes"]) {
    const std::string note = n.get<std::string>();
    counted = counted || (note.find(count) != std::string::npos &&
                          note.find(":18:00.0 events") != std::string::npos);
  }
  EXPECT_TRUE(counted) << "no note with '" << count << "' in " << j["notes"].dump();
  EXPECT_LE(c.max_rss_kb, bound_kb(dir_, fs::file_size(log)))
      << "peak RSS " << c.max_rss_kb / 1024 << " MiB";
}

TEST_F(BigInput, QueryGpuCsvOf256MibStaysUnder64Mib) {
  const fs::path csv = dir_ / "query-gpu.csv";
  size_t rows = 0;
  {
    const int fd = ::open(csv.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    write_all(fd,
              "timestamp, index, name, pci.bus_id, uuid, temperature.gpu, power.draw [W], "
              "power.limit [W], utilization.gpu [%], utilization.memory [%], memory.used [MiB], "
              "memory.total [MiB], clocks.sm [MHz], clocks_event_reasons.active\n");
    // Each block goes on where the last one stopped, so time only moves forward.
    for (int second = 0; fs::file_size(csv) < (size_t{256} << 20);) {
      const Block b = csv_block(second);
      write_all(fd, b.text);
      rows += b.lines;
      second += static_cast<int>(b.lines / 8);
    }
    ::close(fd);
  }
  const Child c = run({"doctor", "--json", "--from", csv.string()}, dir_ / "out.json");
  ASSERT_GE(c.exit_code, 0) << "killed by a signal";
  const auto j = nlohmann::json::parse(c.out);
  ASSERT_EQ(j["coverage"].size(), 1u);
  EXPECT_EQ(j["coverage"][0]["lines"].get<size_t>(), rows + 1);
  EXPECT_EQ(j["coverage"][0]["lines_not_understood"].get<size_t>(), 0u);
  EXPECT_EQ(j["gpus"].size(), 8u);
  EXPECT_LE(c.max_rss_kb, bound_kb(dir_, fs::file_size(csv)))
      << "peak RSS " << c.max_rss_kb / 1024 << " MiB";
}

// Every capture of the repository, each file once, in one text: the tools' outputs (DCGM tables,
// nccl-tests runs, nvidia-smi tables, bandwidth matrices, environment reports, broken tables).
std::string every_fixture() {
  std::vector<fs::path> files;
  for (const auto& d : fs::directory_iterator(fs::path(GW_SOURCE_DIR) / "fixtures/captures"))
    if (d.is_directory())
      for (const auto& f : fs::directory_iterator(d.path()))
        if (f.is_regular_file() && f.path().filename() != "expected.md" &&
            f.path().extension() != ".gz")
          files.push_back(f.path());
  std::sort(files.begin(), files.end());
  std::string out;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    out += ss.str();
    if (!out.empty() && out.back() != '\n') out += '\n';
  }
  return out;
}

// A log that repeats whole tool runs (a script looped for days) keeps what one run gives: the
// same findings, a report that does not grow, memory under the bound (it grew with every copy).
TEST_F(BigInput, EveryCaptureRepeatedTo64MibGivesWhatOneCopyGives) {
  const std::string one = every_fixture();
  ASSERT_GT(one.size(), size_t{1} << 20);
  const fs::path once = dir_ / "once.log", many = dir_ / "many.log";
  std::ofstream(once, std::ios::binary) << one;
  const size_t copies = (size_t{64} << 20) / one.size() + 1;
  {
    const int fd = ::open(many.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    for (size_t i = 0; i < copies; ++i) write_all(fd, one);
    ::close(fd);
  }
  const Child a = run({"doctor", "--json", "--from", once.string()}, dir_ / "once.json");
  const Child b = run({"doctor", "--json", "--from", many.string()}, dir_ / "many.json");
  ASSERT_GE(a.exit_code, 0) << "killed by a signal";
  ASSERT_GE(b.exit_code, 0) << "killed by a signal";
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  EXPECT_EQ(jb["coverage"][0]["lines"].get<size_t>(),
            ja["coverage"][0]["lines"].get<size_t>() * copies);
  // Not the very same findings: the copies are a time series of snapshots (thinned, judged
  // over time), and where one copy ends a table may read on into the next. But never a finding
  // per copy.
  EXPECT_LE(jb["findings"].size(), ja["findings"].size() + 16);
  EXPECT_GE(jb["findings"].size(), ja["findings"].size() / 2);
  EXPECT_LE(jb["notes"].size(), ja["notes"].size() + 40);
  EXPECT_LE(jb["input_errors"].size(), ja["input_errors"].size() + 40);
  EXPECT_LT(b.out.size(), 2 * a.out.size() + (size_t{256} << 10));
  EXPECT_LE(b.max_rss_kb, bound_kb(dir_, fs::file_size(many)))
      << "peak RSS " << b.max_rss_kb / 1024 << " MiB";
}

// Logs in which nothing repeats, each of one kind a long capture holds: an Xid storm, an Xid
// 119 flood with the driver's dumps, a PCIe AER flood, a firmware-error flood, kernel faults in
// the driver one after another, a fabric manager
// restarted over and over, nvidia-smi dmon and dcgmi dmon for days, nvidia-smi tables printed
// back to back. Each was resident whole or kept every line (a 64 MB one peaked at 73-885 MB):
// four times the input may cost a few MiB more, never the input's growth.
using LineFn = std::string (*)(size_t i);

std::string t_of(size_t i) {
  return "[" + std::to_string(1000 + i / 8) + ".000" + std::to_string(100 + i % 900) + "] ";
}

const std::vector<std::pair<std::string, LineFn>>& families() {
  static const std::vector<std::pair<std::string, LineFn>> f = {
      {"xid-storm",
       [](size_t i) {
         return t_of(i) + "NVRM: Xid (PCI:0000:" + (i % 2 ? "3b" : "86") +
                ":00): 13, pid=" + std::to_string(i) +
                ", name=python, Graphics SM Warp Exception\n";
       }},
      {"xid119-dumps",
       [](size_t i) {
         if (i % 6 == 0)
           return t_of(i) + "NVRM: Xid (PCI:0000:9b:00): 119, pid=" + std::to_string(i) +
                  ", name=x, Timeout after 6s of waiting for RPC response from GPU4 GSP!\n";
         return t_of(i) + "NVRM:     -" + std::to_string(i % 6) +
                "    103  GSP_RM_ALLOC          0x0000000000002081 0x" + std::to_string(i) + "\n";
       }},
      {"aer-flood",
       [](size_t i) {
         if (i % 2 == 0)
           return t_of(i) + "pcieport 0000:00:0" + std::to_string(1 + i % 3) +
                  ".1: AER: Corrected error received: 0000:07:00.0\n";
         return t_of(i) +
                "nvidia 0000:07:00.0: PCIe Bus Error: severity=Corrected, type=Data "
                "Link Layer, (Transmitter ID) id " +
                std::to_string(i) + "\n";
       }},
      {"ghes-flood",
       [](size_t i) {
         const std::string t = t_of(i) + "{" + std::to_string(i / 3 % 9) + "}[Hardware Error]: ";
         if (i % 3 == 0) return t + "Hardware error from APEI Generic Hardware Error Source: 1\n";
         if (i % 3 == 1) return t + " section_type: PCIe error\n";
         return t + " device_id: 0000:" + (i % 2 ? "3b" : "86") + ":00.0\n";
       }},
      {"kernel-faults",
       [](size_t i) {
         static constexpr const char* kReport[] = {
             "BUG: kernel NULL pointer dereference, address: 0000000000000008\n",
             "CPU: 3 PID: 4564 Comm: python Tainted: P           OE\n",
             "RIP: 0010:_nv031695rm+0x79/0x940 [nvidia]\n",
             "Call Trace:\n",
             " ? uvm_pmm_gpu_alloc+0x2f5/0x6d0 [nvidia_uvm]\n",
             "---[ end trace 0 ]---\n"};
         return t_of(i) + kReport[i % 6];
       }},
      {"fabric-manager-loop",
       [](size_t i) {
         const std::string t = "Dec 07 1" + std::to_string(i / 3600 % 10) + ":" +
                               std::to_string(10 + i / 60 % 50) + ":" +
                               std::to_string(10 + i % 50) + " node1 ";
         if (i % 2) return t + "systemd[1]: Started NVIDIA fabric manager service.\n";
         return t + "nv-fabricmanager[" + std::to_string(i) +
                "]: fabric manager NVLink initialization failed\n";
       }},
      {"smi-dmon",
       [](size_t i) {
         std::string l = i % 160 == 0
                             ? "# gpu   pwr  gtemp     sm    mem\n# Idx     W      C      %"
                               "      %\n"
                             : "";
         return l + "    " + std::to_string(i % 8) + "   " + std::to_string(100 + i % 500) +
                "    " + std::to_string(30 + i % 50) + "     " + std::to_string(i % 100) + "     " +
                std::to_string(i * 7 % 100) + "\n";
       }},
      {"dcgmi-dmon",
       [](size_t i) {
         std::string l = i % 160 == 0 ? "#Entity   GPUTL  SMACT\nID\n" : "";
         return l + "GPU " + std::to_string(i % 8) + "     " + std::to_string(i % 100) + "    0." +
                std::to_string(100 + i % 900) + "\n";
       }},
      {"smi-tables",
       [](size_t i) {
         std::string l;
         if (i % 8 == 0)
           l = "\n+-------------------------------+----------------------+----------------------+\n"
               "| NVIDIA-SMI 535.129.03   Driver Version: 535.129.03   CUDA Version: 12.2     |\n"
               "|-------------------------------+----------------------+----------------------+\n"
               "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
               "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n"
               "|===============================+======================+======================|\n";
         char row[512];
         std::snprintf(row, sizeof row,
                       "|  %2zu  NVIDIA H100 80G...  On   | 00000000:%02zX:00.0 Off |           "
                       "         0 |\n| N/A   %2zuC    P0   %3zuW / 700W |  %5zuMiB / 81559MiB |"
                       "    %2zu%%      Default |\n|-------------------------------+-------------"
                       "---------+----------------------+\n",
                       i % 8, 0x18 + i % 8, 30 + i % 60, 100 + i % 500, i % 80000, i % 100);
         return l + row;
       }},
  };
  return f;
}

// Written line by line: the test process stays small, since the child's peak (ru_maxrss)
// counts what it shares with this process between fork and exec.
void write_family(const fs::path& path, LineFn line, size_t bytes) {
  std::ofstream out(path, std::ios::binary);
  for (size_t i = 0, n = 0; n < bytes; ++i) {
    const std::string l = line(i);
    out << l;
    n += l.size();
  }
}

// One test per kind, so that they run beside the others (each is a few seconds under ASan).
class LogsThatNeverRepeatALine : public BigInput, public ::testing::WithParamInterface<size_t> {};

TEST_P(LogsThatNeverRepeatALine, GrowNotWithTheirLength) {
  // Both below kReadAheadFromBytes (16 MiB): read the same way, through a mapping. A run or a
  // block resident whole would cost the 9 MiB more of the bigger (ASan's shadow of it: 1.1 MiB).
  constexpr size_t kSmall = size_t{3} << 20, kBig = size_t{12} << 20;
  const auto& [name, line] = families()[GetParam()];
  const fs::path small = dir_ / (name + "-small.log"), big = dir_ / (name + "-big.log");
  write_family(small, line, kSmall);
  write_family(big, line, kBig);
  const Child a = run({"doctor", "--json", "--from", small.string()}, dir_ / "small.json");
  const Child b = run({"doctor", "--json", "--from", big.string()}, dir_ / "big.json");
  ASSERT_GE(a.exit_code, 0) << "killed by a signal";
  ASSERT_GE(b.exit_code, 0) << "killed by a signal";
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  EXPECT_FALSE(ja["coverage"][0]["formats"].empty());
  // Under ASan the two peaks of the tables' kind moved by 3.5 MiB run alone and by up to
  // 6 MiB here (one run in three above 5): 8 MiB still tells a resident input (10 MiB) apart.
#if defined(__SANITIZE_ADDRESS__)
  constexpr long kGrowthKb = 8 * 1024;
#else
  constexpr long kGrowthKb = 5 * 1024;
#endif
  EXPECT_LE(b.max_rss_kb, a.max_rss_kb + kGrowthKb)
      << "peak RSS " << a.max_rss_kb / 1024 << " MiB at 3 MiB, " << b.max_rss_kb / 1024
      << " MiB at 12 MiB";
  EXPECT_LE(jb["findings"].size(), ja["findings"].size() + 16);
  EXPECT_LT(b.out.size(), 2 * a.out.size() + (size_t{64} << 10));
}

INSTANTIATE_TEST_SUITE_P(Kinds, LogsThatNeverRepeatALine,
                         ::testing::Range(size_t{0}, families().size()),
                         [](const ::testing::TestParamInfo<size_t>& p) {
                           std::string n = families()[p.param].first;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
