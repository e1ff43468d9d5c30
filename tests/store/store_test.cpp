// The history store: schema migrations, round trips, rollups, retention, the size bound, a full
// database, read-only opening, and the history renderers and time arguments.
#include "store/store.h"

#include <gtest/gtest.h>

#include <set>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "store/history_view.h"
#include "store/metrics.h"

namespace gw::store {
namespace {

namespace fs = std::filesystem;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() /
           ("gw-store-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string db() const { return (dir_ / "h.db").string(); }

  static Snapshot snap(int64_t t_ms, int temp0, int temp1) {
    Snapshot s;
    s.time_ms = t_ms;
    for (unsigned i = 0; i < 2; ++i) {
      GpuState g;
      g.info.index = i;
      g.info.uuid = "GPU-" + std::to_string(i);
      g.info.name = "H100";
      g.info.pci_bus_id = "00000000:1" + std::to_string(i) + ":00.0";
      g.sample.temp_c = i == 0 ? temp0 : temp1;
      g.sample.power_mw = 650'500;
      g.sample.mem_used_bytes = 1ULL << 33;
      s.gpus.push_back(g);
    }
    return s;
  }
  fs::path dir_;
};

TEST_F(StoreTest, RoundTripsSamplesEventsFindingsAndAlerts) {
  auto st = Store::open(db(), {});
  ASSERT_TRUE(st) << st.error().to_string();
  EXPECT_EQ((*st)->schema_version(), kSchemaVersion);
  Event e;
  e.kind = EventKind::kXid;
  e.code = 79;
  e.gpu_index = 1;
  e.pci_bus_id = "00000000:11:00.0";
  e.message = "GPU has fallen off the bus";
  e.origin = "kern.log:3";
  e.time_ms = 1000;
  FindingRecord f;
  f.finding.code = "xid.hardware";
  f.finding.severity = Severity::kCritical;
  f.finding.gpu = 1;
  f.finding.title = "Xid 79";
  f.finding.evidence = {"line one", "line two"};
  f.raised_ms = f.last_active_ms = 1000;
  AlertTransitionRecord a{1000, "GpuXid", "firing", "critical", 1, R"({"gpu":"1"})", "Xid 79"};
  std::vector<FindingRecord> fs{f};
  ASSERT_TRUE((*st)->record(nullptr, {}, {}, {}));
  const Snapshot s = snap(1000, 60, 70);
  ASSERT_TRUE((*st)->record(&s, std::vector<Event>{e}, fs, std::vector<AlertTransitionRecord>{a}));
  EXPECT_GT(fs[0].id, 0);
  fs[0].cleared_ms = 5000;
  ASSERT_TRUE((*st)->record(nullptr, {}, fs, {}));
  auto pts = (*st)->query({std::string("1"), "temp_c", 0, 10'000});
  ASSERT_TRUE(pts);
  ASSERT_EQ(pts->size(), 1u);
  EXPECT_EQ((*pts)[0].avg, 70);
  EXPECT_EQ((*pts)[0].uuid, "GPU-1");
  auto power = (*st)->query({std::string("GPU-0"), "power_w", 0, 10'000});
  ASSERT_EQ(power->size(), 1u);
  EXPECT_DOUBLE_EQ((*power)[0].avg, 650.5);
  auto ev = (*st)->events(0, 10);
  ASSERT_EQ(ev->size(), 1u);
  EXPECT_EQ((*ev)[0].event.code, 79u);
  EXPECT_EQ((*ev)[0].event.pci_bus_id, "00000000:11:00.0");
  auto found = (*st)->findings(0, 10);
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ((*found)[0].cleared_ms, 5000);
  EXPECT_EQ((*found)[0].finding.evidence.size(), 2u);
  EXPECT_TRUE((*st)->open_findings()->empty());
  auto al = (*st)->alert_transitions(0, 10);
  ASSERT_EQ(al->size(), 1u);
  EXPECT_EQ((*al)[0].state, "firing");
  auto bad = (*st)->query({std::nullopt, "tmp_c", 0, 1});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "history.unknown_metric");
  EXPECT_NE(bad.error().message.find("temp_c"), std::string::npos);
}

TEST_F(StoreTest, MissingReadingsStayNullAndLostGpusStoreNoValues) {
  auto st = Store::open(db(), {});
  Snapshot s = snap(1000, 60, 70);
  s.gpus[0].sample.temp_c.reset();
  s.gpus[1].access = GpuAccess::kLost;
  ASSERT_TRUE((*st)->record(&s, {}, {}, {}));
  EXPECT_TRUE((*st)->query({std::nullopt, "temp_c", 0, 5000})->empty());
  EXPECT_EQ((*st)->query({std::nullopt, "power_w", 0, 5000})->size(), 1u);
}

TEST_F(StoreTest, MigratesAVersionOneDatabaseAndRefusesANewerOne) {
  {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(db().c_str(), &h), SQLITE_OK);
    const std::string v1 =
        std::string("BEGIN;") + schema_migrations()[0] +
        "INSERT INTO gpus(uuid,gpu_index,name,pci_bus_id) VALUES('GPU-0',0,'x','y');"
        "INSERT INTO samples(gpu_id,t_ms,access,temp_c) VALUES(1,500,0,55);"
        "PRAGMA user_version=1;COMMIT;";
    ASSERT_EQ(sqlite3_exec(h, v1.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(h);
  }
  auto st = Store::open(db(), {});
  ASSERT_TRUE(st) << st.error().to_string();
  EXPECT_EQ((*st)->schema_version(), 2);
  EXPECT_EQ((*st)->query({std::string("0"), "temp_c", 0, 1000})->at(0).avg, 55);
  EXPECT_TRUE((*st)->events(0, 1)) << "the v2 tables exist";
  st->reset();
  {
    sqlite3* h = nullptr;
    sqlite3_open(db().c_str(), &h);
    sqlite3_exec(h, "PRAGMA user_version=9", nullptr, nullptr, nullptr);
    sqlite3_close(h);
  }
  auto newer = Store::open(db(), {});
  ASSERT_FALSE(newer);
  EXPECT_EQ(newer.error().code, "store.schema");
  EXPECT_NE(newer.error().message.find("version 9"), std::string::npos);
}

TEST_F(StoreTest, NotADatabaseIsAClearError) {
  std::ofstream(db()) << "this is a text file, not SQLite\n";
  auto st = Store::open(db(), {});
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().where, db());
}

TEST_F(StoreTest, RollsUpMinutesAndDropsRawPastRetention) {
  StoreOptions o;
  o.raw_retention_ms = 2 * 60'000;
  o.rollup_retention_ms = 10 * 60'000;
  auto st = Store::open(db(), o);
  const int64_t t0 = 1'800'000'000'000 / 60'000 * 60'000;  // a minute boundary
  // 5 minutes at 1 Hz; GPU 0 alternates 60/70 so each minute is min 60, avg 65, max 70.
  for (int64_t t = 0; t < 5 * 60'000; t += 1000) {
    const Snapshot s = snap(t0 + t, (t / 1000) % 2 == 0 ? 60 : 70, 50);
    ASSERT_TRUE((*st)->record(&s, {}, {}, {}));
  }
  const int64_t now = t0 + 5 * 60'000;
  ASSERT_TRUE((*st)->compact(now));
  auto stats = (*st)->stats();
  EXPECT_EQ(stats->raw_rows, 2 * 120) << "two minutes of raw rows for two GPUs";
  auto pts = (*st)->query({std::string("0"), "temp_c", 0, now});
  ASSERT_TRUE(pts);
  size_t rolled = 0, raw = 0;
  for (const auto& p : *pts) {
    if (p.rollup) {
      ++rolled;
      EXPECT_EQ(p.min, 60);
      EXPECT_EQ(p.max, 70);
      EXPECT_DOUBLE_EQ(p.avg, 65);
      EXPECT_EQ(p.n, 60);
    } else {
      ++raw;
    }
  }
  EXPECT_EQ(rolled, 3u) << "minutes 0-2 only as rollups";
  EXPECT_EQ(raw, 120u);
  // Past the rollup retention everything goes.
  ASSERT_TRUE((*st)->compact(now + 20 * 60'000));
  EXPECT_TRUE((*st)->query({std::nullopt, "temp_c", 0, now + 20 * 60'000})->empty());
}

// Raw retention cuts mid-minute: that minute must come from its raw samples only, never as a
// rollup too (`history` printed the first minute twice).
TEST_F(StoreTest, NoMinuteIsShownAsRollupAndRaw) {
  StoreOptions o;
  o.raw_retention_ms = 150'000;  // 2.5 minutes
  auto st = Store::open(db(), o);
  const int64_t t0 = 1'800'000'000'000 / 60'000 * 60'000;
  for (int64_t t = 0; t < 5 * 60'000; t += 1000) {
    const Snapshot s = snap(t0 + t, 60, 50);
    ASSERT_TRUE((*st)->record(&s, {}, {}, {}));
  }
  const int64_t now = t0 + 5 * 60'000;
  ASSERT_TRUE((*st)->compact(now));
  auto pts = (*st)->query({std::string("0"), "temp_c", 0, now});
  ASSERT_TRUE(pts);
  std::set<int64_t> rolled_minutes, raw_minutes;
  for (const auto& p : *pts) (p.rollup ? rolled_minutes : raw_minutes).insert(p.t_ms / 60'000);
  ASSERT_FALSE(raw_minutes.empty());
  for (int64_t m : rolled_minutes) EXPECT_EQ(raw_minutes.count(m), 0u) << "minute " << m - t0 / 60'000;
  EXPECT_EQ(rolled_minutes.size(), 2u) << "minutes 0 and 1; minute 2 has raw samples left";
}

TEST_F(StoreTest, StaysUnderItsSizeBoundByDroppingTheOldest) {
  StoreOptions o;
  o.max_bytes = 256 * 1024;
  auto st = Store::open(db(), o);
  const int64_t t0 = 1'800'000'000'000;
  int64_t t = 0;
  for (int round = 0; round < 30; ++round) {
    for (int i = 0; i < 200; ++i, t += 1000) {
      const Snapshot s = snap(t0 + t, 60 + i % 5, 50);
      if (!(*st)->record(&s, {}, {}, {})) break;
    }
    ASSERT_TRUE((*st)->compact(t0 + t));
    EXPECT_LE((*st)->file_bytes(), o.max_bytes + o.max_bytes / 4) << round;
  }
  auto stats = (*st)->stats();
  EXPECT_GT(stats->raw_rows, 0);
  EXPECT_GT(*stats->oldest_raw_ms, t0) << "the oldest rows were dropped";
  EXPECT_EQ(*stats->newest_raw_ms, t0 + t - 1000) << "the newest are kept";
}

TEST_F(StoreTest, AFullDatabaseFailsWritesWithStoreFull) {
  StoreOptions o;
  o.max_bytes = 64 * 1024;
  auto st = Store::open(db(), o);
  Status last;
  for (int i = 0; i < 5000 && last; ++i) {
    const Snapshot s = snap(1000 + i * 1000, 60, 50);
    last = (*st)->record(&s, {}, {}, {});
  }
  ASSERT_FALSE(last) << "the hard cap must be reached";
  EXPECT_EQ(last.error().code, "store.full") << last.error().to_string();
  // The failed transaction was rolled back: the store is consistent and readable.
  EXPECT_TRUE((*st)->query({std::nullopt, "temp_c", 0, INT64_MAX}));
}

TEST_F(StoreTest, ReadOnlyOpenSeesTheWritersCommits) {
  auto w = Store::open(db(), {});
  const Snapshot s = snap(1000, 60, 70);
  ASSERT_TRUE((*w)->record(&s, {}, {}, {}));
  StoreOptions ro;
  ro.read_only = true;
  auto r = Store::open(db(), ro);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ((*r)->query({std::nullopt, "temp_c", 0, 5000})->size(), 2u);
  EXPECT_FALSE((*r)->record(&s, {}, {}, {}));
  auto missing = Store::open((dir_ / "none.db").string(), ro);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "store.open");
}

TEST(HistoryView, TimeArguments) {
  const int64_t now = 1'800'000'000'000;
  EXPECT_EQ(*parse_time_arg("now", now), now);
  EXPECT_EQ(*parse_time_arg("-1h", now), now - 3'600'000);
  EXPECT_EQ(*parse_time_arg("30m", now), now - 1'800'000);
  EXPECT_EQ(*parse_time_arg("-1h30m", now), now - 5'400'000);
  EXPECT_EQ(*parse_time_arg("1800000000", now), 1'800'000'000'000);
  EXPECT_EQ(*parse_time_arg("1800000000123", now), 1'800'000'000'123);
  EXPECT_EQ(*parse_time_arg("2026-12-01T08:00:00Z", now), 1'796'112'000'000);
  for (const char* bad : {"", "yesterday", "-5x", "2026-13-45T99:00:00Z", "12:00"}) {
    auto r = parse_time_arg(bad, now);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find(bad), std::string::npos);
  }
}

// Found by reading parse_time_arg for the fuzz target: "-9999999999999999d" overflowed the
// multiplication (UB), a number beyond 64 bits read as time 0, a huge year overflowed the ms.
TEST(HistoryView, TimeArgumentsOutOfRangeAreRefused) {
  const int64_t now = 1'800'000'000'000;
  for (const char* bad : {"-9999999999999999d", "9223372036854775807ms", "-101y", "1h-5m",
                          "-36700d", "99999999999999999999", "99999-01-01T00:00:00Z"}) {
    auto r = parse_time_arg(bad, now);
    EXPECT_FALSE(r) << bad << " read as " << (r ? *r : 0);
  }
  EXPECT_EQ(*parse_time_arg("-36500d", now), now - 36500LL * 86'400'000);  // a century is fine
}

TEST(HistoryView, TableCsvAndJson) {
  std::vector<HistoryPoint> pts = {{1, "GPU-1", 1'796'112'000'000, 60, 60, 60, 1, false},
                                   {1, "GPU-1", 1'796'112'060'000, 58, 63.5, 71, 60, true}};
  const std::string table = history_table(pts, "temp_c");
  EXPECT_NE(table.find("2026-12-01T08:00:00.000Z"), std::string::npos) << table;
  EXPECT_NE(table.find("63.500"), std::string::npos);
  EXPECT_NE(table.find("1m"), std::string::npos);
  const std::string csv = history_csv(pts, "temp_c");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "gpu,uuid,time_ms,time_utc,metric,min,avg,max,n,resolution");
  EXPECT_NE(csv.find("1,GPU-1,1796112060000,2026-12-01T08:01:00.000Z,temp_c,58,63.500,71,60,1m"),
            std::string::npos)
      << csv;
  const auto j = nlohmann::json::parse(history_json(pts, "temp_c", 0, 1));
  EXPECT_EQ(j["schema"], "gpuwarden.history/1");
  EXPECT_EQ(j["points"][1]["avg"], 63.5);
  EXPECT_EQ(history_table({}, "temp_c"), "no temp_c samples in that range\n");
  EXPECT_NE(metrics_list().find("temp_c"), std::string::npos);
}

}  // namespace
}  // namespace gw::store
