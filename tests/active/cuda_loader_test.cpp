// The CUDA driver loader against a real dlopen: the fake libcuda.so.1 exports the whole table
// under its versioned names; a library that is not libcuda is refused by name; the "cuda"
// scenario section's errors name their JSON path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "sources/cuda/cuda_library.h"
#include "sources/nvml/scenario.h"

namespace gw {
namespace {

using ::testing::HasSubstr;

const std::string kFakeCuda = std::string(GW_BINARY_DIR) + "/fake-cuda/libcuda.so.1";
const std::string kFakeNvml = std::string(GW_BINARY_DIR) + "/fake-nvml/libnvidia-ml.so.1";

TEST(CudaLoader, FakeExportsTheWholeTableUnderVersionedNames) {
  auto lib = cuda::CudaLibrary::open(kFakeCuda);
  ASSERT_TRUE(lib) << lib.error().to_string();
  EXPECT_TRUE((*lib)->missing_symbols().empty());
  const cuda::CudaApi& a = (*lib)->api();
  EXPECT_STREQ(a.mem_alloc.name, "cuMemAlloc_v2");
  EXPECT_STREQ(a.memcpy_htod_async.name, "cuMemcpyHtoDAsync_v2");
  EXPECT_STREQ(a.primary_ctx_release.name, "cuDevicePrimaryCtxRelease_v2");
  EXPECT_STREQ(a.mem_get_info.name, "cuMemGetInfo_v2");
  EXPECT_EQ((*lib)->describe(2), "CUDA_ERROR_OUT_OF_MEMORY: out of memory (2)");
  EXPECT_NE((*lib)->extra_symbol("gwfake_cuda_attach"), nullptr);
}

TEST(CudaLoader, MissingLibraryAndWrongLibraryAreNamedErrors) {
  auto none = cuda::CudaLibrary::open("/nonexistent/libcuda.so.1");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, "cuda.library_not_found");
  auto wrong = cuda::CudaLibrary::open(kFakeNvml);
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code, "cuda.incompatible_library");
  EXPECT_THAT(wrong.error().to_string(), HasSubstr("cuInit"));
}

TEST(CudaScenario, BadValuesNameTheirPath) {
  const std::string head = R"({"devices": [{"name": "a"}, {"name": "b"}], "cuda": )";
  const std::pair<const char*, const char*> cases[] = {
      {R"({"peers": [{"gpus": [0, 5]}]})", "cuda.peers[0].gpus[1]"},
      {R"({"peers": [{"gpus": [1, 1]}]})", "its own peer"},
      {R"({"devices": [{"gpu": 0, "h2d_gb_s": -3}]})", "cuda.devices[0].h2d_gb_s"},
      {R"({"efficiency": 1.5})", "cuda.efficiency"},
      {R"({"bogus": 1})", "cuda.bogus"},
      {R"({"devices": [{"gpu": 0, "launch_error": "x"}]})", "launch_error"},
  };
  for (const auto& [cuda, says] : cases) {
    auto s = nvml::parse_scenario(head + cuda + "}", "x.json");
    ASSERT_FALSE(s) << cuda;
    EXPECT_THAT(s.error().to_string(), HasSubstr(says)) << cuda;
    EXPECT_THAT(s.error().to_string(), HasSubstr("x.json")) << cuda;
  }
}

TEST(CudaScenario, AfterLoadEntriesAreKeptApartAndWrittenBack) {
  const std::string text =
      R"({"devices": [{"name": "a"}], "cuda": {"peers": []},
          "timeline": [{"t": 1, "gpu": 0, "set": {"temp_c": 50}},
                       {"after_load": 3, "gpu": 0, "set": {"temp_c": 80}}]})";
  auto s = nvml::parse_scenario(text, "x.json");
  ASSERT_TRUE(s) << s.error().to_string();
  ASSERT_EQ(s->timeline.size(), 1u);
  ASSERT_EQ(s->load_timeline.size(), 1u);
  EXPECT_TRUE(s->load_timeline[0].after_load);
  EXPECT_EQ(s->load_timeline[0].t_s, 3);
  auto again = nvml::parse_scenario(nvml::write_scenario(*s), "y.json");
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_EQ(again->load_timeline.size(), 1u);
  EXPECT_TRUE(again->cuda_json.has_value());
  auto both = nvml::parse_scenario(
      R"({"devices": [{"name": "a"}], "timeline": [{"t": 1, "after_load": 2, "gpu": 0}]})", "z");
  ASSERT_FALSE(both);
  EXPECT_THAT(both.error().to_string(), HasSubstr("not both"));
}

}  // namespace
}  // namespace gw
