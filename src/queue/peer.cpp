#include "queue/peer.h"

#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace gw::queue {

Caller caller_for_uid(uid_t uid, gid_t gid, const std::optional<std::string>& admin_group) {
  Caller c;
  c.uid = uid;
  c.gid = gid;
  c.user = "uid " + std::to_string(uid);
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    c.user = found->pw_name;
    int n = 64;
    std::vector<gid_t> groups(static_cast<size_t>(n));
    if (getgrouplist(found->pw_name, gid, groups.data(), &n) < 0) {
      groups.resize(static_cast<size_t>(n));
      getgrouplist(found->pw_name, gid, groups.data(), &n);
    }
    groups.resize(static_cast<size_t>(std::max(n, 0)));
    c.groups = groups;
  } else {
    c.groups = {gid};
  }
  c.admin = uid == 0;
  if (!c.admin && admin_group) {
    group gr{};
    group* g = nullptr;
    if (getgrnam_r(admin_group->c_str(), &gr, buf.data(), buf.size(), &g) == 0 && g != nullptr)
      c.admin = std::find(c.groups.begin(), c.groups.end(), g->gr_gid) != c.groups.end();
  }
  return c;
}

Result<Caller> peer_of(int fd, const std::optional<std::string>& admin_group) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
    return make_error("queue.peer", std::string("no peer credentials: ") + std::strerror(errno));
  Caller c = caller_for_uid(cred.uid, cred.gid, admin_group);
  c.pid = cred.pid;
  return c;
}

}  // namespace gw::queue
