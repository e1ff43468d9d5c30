// The HTTP commands' plugin (cli/http_commands.h): the binary starts without cpp-httplib and
// what it brings, the commands that speak HTTP open the plugin, and a missing or foreign plugin
// is an error that names it, never a crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "run_binary.h"

namespace gw::clitest {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// The libraries the dynamic loader maps for the binary (what `ldd` prints): the loader's own
// listing, not a reading of the ELF file, so a dependency pulled in indirectly counts too.
std::string loaded_libraries() {
  RunOptions o;
  o.env["LD_TRACE_LOADED_OBJECTS"] = "1";
  const auto r = run_gpuwarden({"--version"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  return r.out;
}

TEST(HttpPlugin, TheBinaryStartsWithoutTheHttpLibraries) {
  const std::string libs = loaded_libraries();
  ASSERT_THAT(libs, HasSubstr("libc.so.6"));  // the listing is the loader's
  for (const char* lib : {"libcpp-httplib", "libssl", "libcrypto", "libbrotli", "libncursesw"})
    EXPECT_THAT(libs, Not(HasSubstr(lib))) << lib;
}

// Nor SQLite (opened at the first database), toml++ or pugixml (compiled in): a command that
// needs none of them pays nothing for them at start (CMakeLists.txt, store/sqlite_library.h).
TEST(HttpPlugin, TheBinaryStartsWithoutSqliteTomlOrPugixml) {
  const std::string libs = loaded_libraries();
  ASSERT_THAT(libs, HasSubstr("libc.so.6"));
  for (const char* lib : {"libsqlite3", "libtomlplusplus", "libpugixml"})
    EXPECT_THAT(libs, Not(HasSubstr(lib))) << lib;
}

TEST(HttpPlugin, CommandsThatSpeakHttpRunFromThePlugin) {
  const auto r =
      run_gpuwarden({"serve", "--check-config", "--config",
                     (fs::path(GW_SOURCE_DIR) / "packaging" / "gpuwarden.toml").string()});
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_THAT(r.out, HasSubstr(": OK ("));
}

// The binary alone in a folder of the build tree (a hard link: /proc/self/exe names the link),
// with `plugin` beside it when given.
class LoneBinary {
 public:
  explicit LoneBinary(const fs::path& plugin = {}) {
    dir_ = fs::path(GW_BINARY_DIR) / "tests" / "cli" / ("lone-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    fs::create_hard_link(gpuwarden_path(), dir_ / "gpuwarden");
    if (!plugin.empty()) fs::copy_file(plugin, dir_ / "gpuwarden-http.so");
  }
  ~LoneBinary() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  LoneBinary(const LoneBinary&) = delete;
  LoneBinary& operator=(const LoneBinary&) = delete;
  RunResult run(const std::vector<std::string>& args) const {
    RunOptions o;
    o.binary = dir_ / "gpuwarden";
    return run_gpuwarden(args, o);
  }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

TEST(HttpPlugin, WithoutItsPluginAnHttpCommandSaysWhatWasTriedAndExits69) {
  const LoneBinary lone;
  const auto r = lone.run({"check", "--demo"});
  EXPECT_EQ(r.exit_code, 69) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("gpuwarden check: the HTTP commands' plugin is unavailable"));
  EXPECT_THAT(r.err, HasSubstr((lone.dir() / "gpuwarden-http.so").string()));
  EXPECT_THAT(r.err, HasSubstr("/lib/gpuwarden/gpuwarden-http.so"));
  // The other commands never need it.
  const auto capture =
      fs::path(GW_SOURCE_DIR) / "fixtures/captures/001-a10-remapped-rows-pending/input.txt";
  const auto doctor = lone.run({"doctor", "--from", capture.string(), "--json"});
  EXPECT_EQ(doctor.exit_code, 1) << doctor.describe();
  EXPECT_THAT(doctor.out, HasSubstr("\"mode\": \"from\""));
}

TEST(HttpPlugin, APluginFromAnotherBuildIsRefused) {
  const LoneBinary lone(fs::path(GW_BINARY_DIR) / "tests" / "cli" / "stale-http-plugin.so");
  for (const char* command : {"serve", "watch"}) {
    const auto r = lone.run({command, "--demo"});
    EXPECT_EQ(r.exit_code, 69) << command << ": " << r.describe();
    EXPECT_THAT(r.err, HasSubstr("is from another build of gpuwarden (version 0.0.0-stale"))
        << command;
  }
}

}  // namespace
}  // namespace gw::clitest
