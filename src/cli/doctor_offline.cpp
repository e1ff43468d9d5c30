// Offline mode of gpuwarden doctor: captured files in, the same rules as live.
#include "cli/doctor_run.h"
#include "core/input_file.h"
#include "diagnose/diagnose.h"
#include "sources/captures.h"

namespace gw::cli {

DoctorRun run_from_files(const std::vector<std::string>& paths) {
  DoctorRun run;
  run.mode = "from";
  for (const std::string& p : paths) {
    run.source += (run.source.empty() ? "" : ", ") + p;
    // Regular files are mapped (page cache, not heap); pipes and `-` are read with a cap.
    auto in = read_input(p);
    if (!in) {
      run.obs.input_errors.push_back(in.error());
      continue;
    }
    const size_t errs = run.obs.input_errors.size();
    const size_t before = run.obs.samples.size() + run.obs.events.size();
    const bool had_topo = run.obs.topology.has_value();
    add_capture(in->text(), p, run.obs);
    const bool gave = run.obs.samples.size() + run.obs.events.size() > before ||
                      (!had_topo && run.obs.topology.has_value());
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
