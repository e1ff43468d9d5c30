// Offline mode of gpuwarden doctor: captured files in, the same rules as live.
#include "cli/doctor_run.h"
#include "diagnose/diagnose.h"
#include "sources/captures.h"
#include "sources/input_file.h"

namespace gw::cli {

DoctorRun run_from_files(const std::vector<std::string>& paths) {
  return run_from_files(paths, ReadProgress{});
}

DoctorRun run_from_files(const std::vector<std::string>& paths, const ReadProgress& progress) {
  DoctorRun run;
  run.mode = "from";
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string& p = paths[i];
    run.source += (run.source.empty() ? "" : ", ") + p;
    // Regular files are mapped (page cache, not heap); pipes and `-` are read with a cap.
    auto in = read_input(p);
    if (!in) {
      run.obs.input_errors.push_back(in.error());
      continue;
    }
    const size_t errs = run.obs.input_errors.size();
    const size_t covs = run.obs.coverage.size();
    CaptureProgress on_bytes;
    if (progress)
      on_bytes = [&progress, i, &p](size_t done, size_t total) { progress(i, p, done, total); };
    add_capture(in->text(), p, run.obs, on_bytes);
    // Read = some parser recognised a part of it (samples, events, topology, but just as well
    // application errors, environment reports, lspci facts); line errors inside a recognised
    // input make it incomplete, not unread.
    const bool recognised =
        run.obs.coverage.size() > covs && !run.obs.coverage.back().formats.empty();
    if (recognised || run.obs.input_errors.size() == errs) ++run.inputs_read;
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
