#include "queue/server.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace gw::queue {
namespace {

constexpr size_t kMaxRequest = 4u << 20;  // a submit carries an environment; 4 MiB is plenty

Result<sockaddr_un> address(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path)
    return make_error("queue.socket", "socket path too long", path);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

bool read_line(int fd, std::string& out) {
  char buf[65536];
  while (out.find('\n') == std::string::npos) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0 || out.size() + static_cast<size_t>(n) > kMaxRequest) return false;
    out.append(buf, static_cast<size_t>(n));
  }
  out.resize(out.find('\n'));
  return true;
}

bool write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::send(fd, s.data() + done, s.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

std::string default_socket_path() {
  const char* env = std::getenv("GPUWARDEN_SOCKET");
  return env != nullptr && *env != '\0' ? env : kDefaultSocket;
}

Result<std::unique_ptr<QueueServer>> QueueServer::start(const std::string& path,
                                                        QueueService& service) {
  auto addr = address(path);
  if (!addr) return addr.error();
  std::unique_ptr<QueueServer> s(new QueueServer(service));
  s->path_ = path;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  s->listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ::unlink(path.c_str());
  if (::bind(s->listen_fd_, reinterpret_cast<sockaddr*>(&*addr), sizeof *addr) != 0 ||
      ::chmod(path.c_str(), 0666) != 0 || ::listen(s->listen_fd_, 512) != 0)
    return make_error("queue.socket", std::strerror(errno), path);
  s->stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
  s->thread_ = std::thread([p = s.get()] { p->serve(); });
  return s;
}

QueueServer::~QueueServer() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    (void)!::write(stop_fd_, &one, sizeof one);
    thread_.join();
  }
  ::close(listen_fd_);
  ::close(stop_fd_);
  ::unlink(path_.c_str());
}

void QueueServer::serve() {
  for (;;) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0 && errno != EINTR) return;
    if ((p[1].revents & POLLIN) != 0) return;
    if ((p[0].revents & POLLIN) == 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    one(fd);
    ::close(fd);
  }
}

// One connection: a slow or silent client is cut off after 5 s so it cannot stall the queue.
void QueueServer::one(int fd) {
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  auto caller = peer_of(fd, service_.options().admin_group);
  std::string line;
  nlohmann::json reply;
  if (!caller) {
    reply = {{"ok", false},
             {"error", {{"code", "queue.peer"}, {"message", caller.error().message}}}};
  } else if (!read_line(fd, line)) {
    reply = {
        {"ok", false},
        {"error", {{"code", "queue.protocol"}, {"message", "no request line (or over 4 MiB)"}}}};
  } else {
    auto req = nlohmann::json::parse(line, nullptr, false);
    reply =
        req.is_discarded()
            ? nlohmann::json{{"ok", false},
                             {"error",
                              {{"code", "queue.protocol"}, {"message", "the request is not JSON"}}}}
            : service_.handle(*caller, req);
  }
  write_all(fd, reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

Result<nlohmann::json> request(const std::string& socket_path, const nlohmann::json& req) {
  auto addr = address(socket_path);
  if (!addr) return addr.error();
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&*addr), sizeof *addr) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return make_error("queue.connect",
                      "cannot reach the gpuwarden daemon (" + why +
                          "); is `gpuwarden serve --socket` running? (--socket / GPUWARDEN_SOCKET)",
                      socket_path);
  }
  std::string line;
  const bool ok =
      write_all(fd, req.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n") &&
      read_line(fd, line);
  ::close(fd);
  if (!ok) return make_error("queue.protocol", "no reply from the daemon", socket_path);
  auto reply = nlohmann::json::parse(line, nullptr, false);
  if (reply.is_discarded())
    return make_error("queue.protocol", "the reply is not JSON", socket_path);
  return reply;
}

}  // namespace gw::queue
