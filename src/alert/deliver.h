// Internal: one delivery attempt per sink kind, and the text each sends.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "alert/alert.h"

namespace gw::alert {

struct CurlApi;

struct Attempt {
  bool ok = false;
  bool retry = true;  // false: a permanent failure (4xx, command not found): do not retry
  std::string error;
};

// One HTTP client per sink worker. Reuses its connection between posts. `wake_fd` becomes
// readable when the notifier wants the attempt abandoned (shutdown deadline). libcurl is
// loaded by the first poster (curl_library.h); without it every post fails, saying why.
class HttpPoster {
 public:
  explicit HttpPoster(int wake_fd);
  ~HttpPoster();
  HttpPoster(const HttpPoster&) = delete;
  HttpPoster& operator=(const HttpPoster&) = delete;

  Attempt post_json(const std::string& url, const std::string& body,
                    const std::map<std::string, std::string>& headers,
                    std::chrono::milliseconds timeout, const std::atomic<bool>& abort);

 private:
  const CurlApi* curl_ = nullptr;
  std::string unavailable_;  // why curl_ is null
  void* easy_ = nullptr;
  void* multi_ = nullptr;
  int wake_fd_;
};

// Runs argv with `env` added to the environment and `stdin_data` on its stdin; kills its
// process group after `timeout` or when wake_fd turns readable.
Attempt run_command(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                    const std::string& stdin_data, std::chrono::milliseconds timeout, int wake_fd,
                    const std::atomic<bool>& abort);

std::string log_line(const AlertTransition& t, bool json, bool journal);
std::vector<std::string> alert_env(const AlertTransition& t);

}  // namespace gw::alert
