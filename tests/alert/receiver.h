// A webhook receiver for the delivery tests: a cpp-httplib server on 127.0.0.1 (any free
// port) that records what arrives and can fail, refuse or hang on demand.
#pragma once

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gw::alert::test {

class Receiver {
 public:
  using Clock = std::chrono::steady_clock;

  // port 0: any free port; otherwise that port (to bring a receiver back where one was).
  explicit Receiver(int port = 0) {
    server_.set_keep_alive_timeout(1);  // stop() waits for idle kept-alive connections
    server_.Post("/hook", [this](const httplib::Request& req, httplib::Response& res) {
      std::unique_lock lk(mu_);
      arrivals_.push_back(Clock::now());
      ++requests_;
      cv_.notify_all();
      if (hang_) {
        cv_.wait(lk, [&] { return !hang_; });
      }
      if (fail_left_ > 0) {
        --fail_left_;
        res.status = fail_status_;
        res.set_content("receiver says no", "text/plain");
        return;
      }
      bodies_.push_back(req.body);
      headers_.push_back(req.get_header_value("Authorization"));
      res.status = 200;
      cv_.notify_all();
    });
    if (port == 0) {
      port_ = server_.bind_to_any_port("127.0.0.1");
    } else {
      port_ = server_.bind_to_port("127.0.0.1", port) ? port : -1;
    }
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~Receiver() { stop(); }

  void stop() {
    release();
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }

  void fail_first(int n, int status) {
    std::lock_guard lk(mu_);
    fail_left_ = n;
    fail_status_ = status;
  }
  void hang() {
    std::lock_guard lk(mu_);
    hang_ = true;
  }
  void release() {
    {
      std::lock_guard lk(mu_);
      hang_ = false;
    }
    cv_.notify_all();
  }

  // Waits until `n` messages were accepted (or requests seen); false at the deadline.
  bool wait_bodies(size_t n, std::chrono::milliseconds within) {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, within, [&] { return bodies_.size() >= n; });
  }
  bool wait_requests(int n, std::chrono::milliseconds within) {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, within, [&] { return requests_ >= n; });
  }

  std::vector<std::string> bodies() const {
    std::lock_guard lk(mu_);
    return bodies_;
  }
  std::vector<std::string> auth_headers() const {
    std::lock_guard lk(mu_);
    return headers_;
  }
  int requests() const {
    std::lock_guard lk(mu_);
    return requests_;
  }
  std::vector<Clock::time_point> arrivals() const {
    std::lock_guard lk(mu_);
    return arrivals_;
  }

 private:
  httplib::Server server_;
  int port_ = -1;
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> bodies_;
  std::vector<std::string> headers_;
  std::vector<Clock::time_point> arrivals_;
  int requests_ = 0;
  int fail_left_ = 0;
  int fail_status_ = 500;
  bool hang_ = false;
};

// A port nothing listens on: bound once, then released.
inline int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// Collects the notifier's log lines (thread-safe).
class LogCapture {
 public:
  std::function<void(std::string_view)> sink() {
    return [this](std::string_view l) {
      std::lock_guard lk(mu_);
      lines_.emplace_back(l);
    };
  }
  std::vector<std::string> lines() const {
    std::lock_guard lk(mu_);
    return lines_;
  }
  bool contains(std::string_view needle) const {
    std::lock_guard lk(mu_);
    for (const std::string& l : lines_) {
      if (l.find(needle) != std::string::npos) return true;
    }
    return false;
  }
  std::string all() const {
    std::lock_guard lk(mu_);
    std::string s;
    for (const std::string& l : lines_) s += l + "\n";
    return s;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

}  // namespace gw::alert::test
