// The parse path of `gpuwarden doctor --from FILE...` as a process of its own, without the rules
// and the report: read_input, add_capture with the pages already read handed back (as
// cli/doctor_offline.cpp does: big files copied in ahead of the reader, the heap in huge pages),
// then one line of counts. For profiling and CPU / RSS figures (docs/perf/parse.md) when the
// whole binary is not at hand; GW_KEEP_PAGES=1 maps the files plainly and keeps their pages.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/heap_pages.h"
#include "core/input_file.h"
#include "core/observation.h"
#include "sources/capture_merge.h"
#include "sources/captures.h"

namespace {

// VmHWM (peak RSS), RssAnon and RssFile from /proc/self/status, as "VmHWM 12345 kB, ...".
std::string memory_line() {
  std::ifstream in("/proc/self/status");
  std::string out;
  for (std::string line; std::getline(in, line);)
    for (const char* key : {"VmHWM:", "RssAnon:", "RssFile:"})
      if (line.rfind(key, 0) == 0) {
        std::string v = line.substr(std::string(key).size());
        v.erase(0, v.find_first_not_of(" \t"));
        out += (out.empty() ? "" : ", ") + std::string(key) + " " + v;
      }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const bool keep = std::getenv("GW_KEEP_PAGES") != nullptr;
  gw::Observation obs;
  if (!keep) gw::prefer_huge_heap_pages(gw::kCaptureWorkingSetBytes);
  for (int i = 1; i < argc; ++i) {
    auto in =
        gw::read_input(argv[i], {}, keep ? gw::InputAccess::kAnyOrder : gw::InputAccess::kOnePass);
    if (!in) {
      std::fprintf(stderr, "%s\n", in.error().to_string().c_str());
      return 2;
    }
    gw::InputText& text = *in;
    const gw::CaptureProgress release = [&text, keep](size_t done, size_t) {
      if (!keep) text.release_before(done);
    };
    gw::add_capture(text.text(), argv[i], obs, release);
  }
  uint64_t counted = 0;
  for (const auto& c : obs.event_counts) counted += c.count;
  size_t lines = 0;
  for (const auto& c : obs.coverage) lines += c.lines;
  std::printf("lines %zu, samples kept %zu, events counted %llu, kept %zu, input errors %zu\n",
              lines, obs.samples.size(), static_cast<unsigned long long>(counted),
              obs.events.size(), obs.input_errors.size());
  std::printf("%s\n", memory_line().c_str());
  return 0;
}
