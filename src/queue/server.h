// The queue's Unix socket: one JSON request per line, one JSON reply per line. The socket is
// world-connectable (0666) on purpose: the kernel's peer credentials are the only identity.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "core/result.h"
#include "queue/service.h"

namespace gw::queue {

inline constexpr const char* kDefaultSocket = "/run/gpuwarden/queue.sock";
// GPUWARDEN_SOCKET when set, else kDefaultSocket.
std::string default_socket_path();

class QueueServer {
 public:
  // Binds (replacing a stale socket file) and starts the accept thread.
  static Result<std::unique_ptr<QueueServer>> start(const std::string& path, QueueService& service);
  ~QueueServer();  // stops the thread, removes the socket file
  QueueServer(const QueueServer&) = delete;
  QueueServer& operator=(const QueueServer&) = delete;

 private:
  QueueServer(QueueService& s) : service_(s) {}
  void serve();
  void one(int fd);
  QueueService& service_;
  std::string path_;
  int listen_fd_ = -1;
  int stop_fd_ = -1;  // eventfd
  std::thread thread_;
};

// Client side: sends one request and returns the reply. Errors: queue.connect (no daemon on
// that socket), queue.protocol.
Result<nlohmann::json> request(const std::string& socket_path, const nlohmann::json& req);

}  // namespace gw::queue
