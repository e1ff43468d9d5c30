// Offline mode of gpuwarden doctor: captured files in, the same rules as live.
#include <sys/stat.h>

#include <cstdint>

#include "cli/doctor_run.h"
#include "core/heap_pages.h"
#include "core/input_file.h"
#include "diagnose/diagnose.h"
#include "sources/capture_merge.h"
#include "sources/captures.h"

namespace gw::cli {
namespace {

bool any_input_from(const std::vector<std::string>& paths, uint64_t bytes) {
  for (const auto& p : paths) {
    struct stat st {};
    if (p != "-" && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        static_cast<uint64_t>(st.st_size) >= bytes)
      return true;
  }
  return false;
}

}  // namespace

void prepare_heap_for_inputs(const std::vector<std::string>& paths) {
  // The inputs that are copied in ahead are those big enough to fill the working set at once.
  if (any_input_from(paths, kReadAheadFromBytes)) prefer_huge_heap_pages(kCaptureWorkingSetBytes);
}

DoctorRun run_from_files(const std::vector<std::string>& paths) {
  return run_from_files(paths, ReadProgress{});
}

DoctorRun run_from_files(const std::vector<std::string>& paths, const ReadProgress& progress) {
  DoctorRun run;
  run.mode = "from";
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string& p = paths[i];
    run.source += (run.source.empty() ? "" : ", ") + p;
    // Regular files are mapped (page cache, not heap), big ones copied in ahead of the reader;
    // pipes and `-` are read with a cap.
    auto in = read_input(p, {}, InputAccess::kOnePass);
    if (!in) {
      run.obs.input_errors.push_back(in.error());
      continue;
    }
    const size_t errs = run.obs.input_errors.size();
    const size_t before = run.obs.samples.size() + run.obs.events.size();
    const bool had_topo = run.obs.topology.has_value();
    const size_t apps = run.obs.app_messages.size();
    const auto facts = [&run] { return run.obs.host ? run.obs.host->sources.size() : 0; };
    const size_t facts_before = facts();
    // The reader reports the bytes it is done with about every MiB: hand their pages back, so
    // a file of any size costs the few MiB being read, not its size (issue 20).
    InputText& text = *in;
    const CaptureProgress on_bytes = [&progress, &text, i, &p](size_t done, size_t total) {
      text.release_before(done);
      if (progress) progress(i, p, done, total);
    };
    add_capture(in->text(), p, run.obs, on_bytes);
    // Read = it gave something the rules use: samples, events, topology, but just as well only
    // application errors or host facts (an environment report, lspci, an nvidia-smi banner);
    // line errors beside them make the run incomplete, not unread. A file recognised as some
    // format from which nothing could be taken (a truncated XML, noise) is not read.
    const bool gave = run.obs.samples.size() + run.obs.events.size() > before ||
                      (!had_topo && run.obs.topology.has_value()) ||
                      run.obs.app_messages.size() > apps || facts() > facts_before;
    if (gave || run.obs.input_errors.size() == errs) ++run.inputs_read;
  }
  run.notes = run.obs.notes;
  run.findings = diagnose(run.obs);
  if (run.obs.samples.size() > 1) {
    run.window_s =
        static_cast<double>(run.obs.samples.back().time_ms - run.obs.samples.front().time_ms) /
        1000.0;
  }
  return run;
}

}  // namespace gw::cli
