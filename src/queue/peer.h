// Who is on the other end of the queue socket: the kernel's SO_PEERCRED answer (uid, gid, pid)
// and the supplementary groups of that uid from the group database. Nothing the client sends
// about itself is believed.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace gw::queue {

struct Caller {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
  std::string user;           // name from the passwd database ("uid 1234" if it has none)
  std::vector<gid_t> groups;  // supplementary groups of the uid, primary included
  bool admin = false;         // root or a member of the configured admin group
};

// Errors: queue.peer (no credentials on this socket).
Result<Caller> peer_of(int fd, const std::optional<std::string>& admin_group);
// The caller as this process itself (tests, the supervisor).
Caller caller_for_uid(uid_t uid, gid_t gid, const std::optional<std::string>& admin_group);

}  // namespace gw::queue
