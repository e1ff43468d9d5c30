#include <pwd.h>
#include <sys/stat.h>

#include "watch/feed.h"

namespace gw::watch {

UserOf process_users(const Snapshot& snapshot, const std::string& proc_root) {
  UserOf out;
  for (const GpuState& g : snapshot.gpus) {
    if (!g.sample.processes) continue;
    for (const ProcessInfo& p : *g.sample.processes) {
      if (out.contains(p.pid)) continue;
      struct stat st {};
      // The owner of /proc/<pid> is the process's real user: no parsing of status needed.
      if (::stat((proc_root + "/" + std::to_string(p.pid)).c_str(), &st) != 0) continue;
      passwd pw{}, *found = nullptr;
      char buf[1024];
      if (::getpwuid_r(st.st_uid, &pw, buf, sizeof buf, &found) == 0 && found != nullptr)
        out[p.pid] = found->pw_name;
      else
        out[p.pid] = std::to_string(st.st_uid);
    }
  }
  return out;
}

}  // namespace gw::watch
