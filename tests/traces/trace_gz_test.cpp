// The bundled traces are stored gzip-compressed and `simulate` carries the Philly trace inside
// the binary: reading .gz must give exactly what reading the plain file gives.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "sim/trace.h"
#include "sim/trace_io.h"

namespace gw::sim {
namespace {

namespace fs = std::filesystem;
const std::string kTraces = std::string(GW_SOURCE_DIR) + "/data/traces/";

std::string gzip(std::string_view text) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, static_cast<uLong>(text.size())) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("gw-trace-gz-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, std::string_view bytes) {
  std::ofstream(p, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

const std::string kTiny =
    "job_id,num_gpu,submit_time,iterations,model_name,duration,interval\n"
    "1,1,0,100,vgg19,100,10\n"
    "2,4,5,100,resnet50,200,10\n";

TEST(TraceGz, GunzipRoundTripsAndReadsConcatenatedMembers) {
  auto one = gunzip(gzip("abc\n"), "t");
  ASSERT_TRUE(one) << one.error().to_string();
  EXPECT_EQ(*one, "abc\n");
  auto two = gunzip(gzip("abc\n") + gzip("def\n"), "t");  // `cat a.gz b.gz`
  ASSERT_TRUE(two) << two.error().to_string();
  EXPECT_EQ(*two, "abc\ndef\n");
}

TEST(TraceGz, TruncatedOrCorruptGzipIsAnErrorNamingTheFile) {
  const std::string z = gzip(kTiny);
  auto cut = gunzip(std::string_view(z).substr(0, z.size() / 2), "cut.csv.gz");
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error().code, "trace.io");
  EXPECT_EQ(cut.error().where, "cut.csv.gz");
  std::string bad = z;
  bad[12] = static_cast<char>(bad[12] ^ 0x5a);
  bad[13] = static_cast<char>(bad[13] ^ 0x5a);
  EXPECT_FALSE(gunzip(bad, "bad.gz"));
}

TEST(TraceGz, CompressedFileReadsLikeThePlainOne) {
  const fs::path d = temp_dir("same");
  write(d / "60_job.csv", kTiny);
  fs::create_directories(d / "z");
  write(d / "z" / "60_job.csv.gz", gzip(kTiny));
  auto plain = read_trace((d / "60_job.csv").string(), {});
  auto packed = read_trace((d / "z" / "60_job.csv.gz").string(), {});
  auto folder = read_trace((d / "z").string(), {});  // the folder finds the .gz copy
  auto by_plain_name = read_trace((d / "z" / "60_job.csv").string(), {});  // name without .gz
  ASSERT_TRUE(plain && packed && folder && by_plain_name);
  ASSERT_EQ(plain->jobs.size(), 2U);
  for (const Trace* t : {&*packed, &*folder, &*by_plain_name}) {
    ASSERT_EQ(t->jobs.size(), plain->jobs.size());
    for (size_t i = 0; i < t->jobs.size(); ++i) {
      EXPECT_EQ(t->jobs[i].submit_ms, plain->jobs[i].submit_ms);
      EXPECT_EQ(t->jobs[i].gpus, plain->jobs[i].gpus);
      EXPECT_EQ(t->jobs[i].actual_runtime_ms, plain->jobs[i].actual_runtime_ms);
    }
  }
  fs::remove_all(d);
}

TEST(TraceGz, FolderFilesKeepTheirAccountWithoutTheGzSuffix) {
  const Trace t = *read_trace(kTraces + "gavel-philly-vc", {});
  std::set<std::string> accounts;
  for (const auto& j : t.jobs) accounts.insert(j.account);
  EXPECT_TRUE(accounts.count("6214e9"));  // from 6214e9.trace.gz
  EXPECT_TRUE(accounts.count("23dbec"));  // from the small, uncompressed 23dbec.trace
  for (const auto& a : accounts) EXPECT_EQ(a.find(".trace"), std::string::npos) << a;
}

TEST(TraceGz, BundledPhillyIsTheRepositoryCopy) {
  auto bundled = read_bundled_trace({});
  ASSERT_TRUE(bundled) << bundled.error().to_string();
  auto file = read_trace(kTraces + "philly-sia/philly.csv.gz", {});
  ASSERT_TRUE(file) << file.error().to_string();
  EXPECT_EQ(bundled->jobs.size(), 82247U);
  ASSERT_EQ(bundled->jobs.size(), file->jobs.size());
  for (size_t i = 0; i < file->jobs.size(); i += 997) {
    EXPECT_EQ(bundled->jobs[i].submit_ms, file->jobs[i].submit_ms) << i;
    EXPECT_EQ(bundled->jobs[i].actual_runtime_ms, file->jobs[i].actual_runtime_ms) << i;
    EXPECT_EQ(bundled->jobs[i].account, file->jobs[i].account) << i;
  }
  EXPECT_EQ(bundled->notes.front(), "no --trace given: the bundled Philly trace");
}

// Every job naming one account, user or QoS shares one copy of the name, and resampling to
// more jobs copies no text (docs/perf/sim.md: ten million jobs in about a gigabyte).
TEST(TraceGz, JobsShareTheirNames) {
  auto t = read_trace(kTraces + "philly-sia/philly.csv.gz", {});
  ASSERT_TRUE(t) << t.error().to_string();
  std::map<std::string, const sched::JobSpec*> first_of;
  size_t shared = 0;
  for (const auto& j : t->jobs) {
    const auto [it, added] = first_of.try_emplace(j.account.str(), &j);
    if (added) continue;
    EXPECT_TRUE(j.account.same_text_as(it->second->account)) << j.id;
    EXPECT_TRUE(j.qos.same_text_as(it->second->qos)) << j.id;
    ++shared;
  }
  EXPECT_GT(shared, 80000U);
  const Trace big = resample_trace(*t, 200000, 3);
  ASSERT_EQ(big.jobs.size(), 200000U);
  for (size_t i = 0; i < big.jobs.size(); i += 1009)
    EXPECT_TRUE(big.jobs[i].user.same_text_as(
        std::find_if(t->jobs.begin(), t->jobs.end(),
                     [&](const auto& j) { return j.user == big.jobs[i].user; })
            ->user))
        << i;
}

TEST(TraceGz, SpecialFilesAreRefused) {
  const fs::path d = temp_dir("special");
  auto dir = read_trace_file(d);
  ASSERT_FALSE(dir);
  // The messages and codes of the shared input reader (core/input_file.h, docs/cli.md).
  EXPECT_EQ(dir.error().code, "input.is_directory");
  EXPECT_EQ(dir.error().message, "is a directory, not a file");
  EXPECT_EQ(dir.error().where, d.string());
  auto zero = read_trace_file("/dev/zero");
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().code, "input.special_file");
  EXPECT_EQ(zero.error().message,
            "is a character device, not a file: give a regular file, a pipe or - (standard "
            "input)");
  auto missing = read_trace_file(d / "none.csv");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "input.not_found");
  fs::remove_all(d);
}

}  // namespace
}  // namespace gw::sim
