// JSON POST through libcurl's multi interface, so a shutdown can interrupt a request that
// waits on a hung receiver (curl_multi_poll also watches the wake pipe) without busy polling.
#include "alert/curl_library.h"
#include "alert/deliver.h"

namespace gw::alert {
namespace {

size_t collect(char* data, size_t size, size_t n, void* user) {
  auto* body = static_cast<std::string*>(user);
  // Only the start of an error body is worth quoting in a log line.
  if (body->size() < 512) body->append(data, std::min(size * n, 512 - body->size()));
  return size * n;
}

std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s.size() > 200 ? s.substr(0, 200) + "..." : s;
}

}  // namespace

HttpPoster::HttpPoster(int wake_fd) : wake_fd_(wake_fd) {
  const auto api = curl_api();
  if (!api) {
    unavailable_ = api.error().to_string();
    return;
  }
  curl_ = *api;
  easy_ = curl_->easy_init.fn();
  multi_ = curl_->multi_init.fn();
}

HttpPoster::~HttpPoster() {
  if (multi_) curl_->multi_cleanup.fn(static_cast<CURLM*>(multi_));
  if (easy_) curl_->easy_cleanup.fn(static_cast<CURL*>(easy_));
}

Attempt HttpPoster::post_json(const std::string& url, const std::string& body,
                              const std::map<std::string, std::string>& headers,
                              std::chrono::milliseconds timeout, const std::atomic<bool>& abort) {
  if (curl_ == nullptr) return {false, true, "POST " + redact_url(url) + ": " + unavailable_};
  const CurlApi& c = *curl_;
  CURL* h = static_cast<CURL*>(easy_);
  CURLM* m = static_cast<CURLM*>(multi_);
  if (!h || !m)
    return {false, true, "POST " + redact_url(url) + ": libcurl could not be initialised"};
  c.easy_reset.fn(h);  // keeps the connection cache: the next post reuses the socket
  std::string response;
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_slist* hdrs = c.slist_append.fn(nullptr, "Content-Type: application/json");
  for (const auto& [k, v] : headers) hdrs = c.slist_append.fn(hdrs, (k + ": " + v).c_str());
  const long timeout_ms = static_cast<long>(timeout.count());
  c.easy_setopt.fn(h, CURLOPT_URL, url.c_str());
  c.easy_setopt.fn(h, CURLOPT_PROTOCOLS_STR, "http,https");
  c.easy_setopt.fn(h, CURLOPT_NOSIGNAL, 1L);
  c.easy_setopt.fn(h, CURLOPT_POST, 1L);
  c.easy_setopt.fn(h, CURLOPT_POSTFIELDS, body.data());
  c.easy_setopt.fn(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  c.easy_setopt.fn(h, CURLOPT_HTTPHEADER, hdrs);
  c.easy_setopt.fn(h, CURLOPT_USERAGENT, "gpuwarden");
  c.easy_setopt.fn(h, CURLOPT_TIMEOUT_MS, timeout_ms);
  c.easy_setopt.fn(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  c.easy_setopt.fn(h, CURLOPT_WRITEFUNCTION, collect);
  c.easy_setopt.fn(h, CURLOPT_WRITEDATA, &response);
  c.easy_setopt.fn(h, CURLOPT_ERRORBUFFER, errbuf);
  c.multi_add_handle.fn(m, h);
  CURLcode rc = CURLE_OK;
  bool done = false;
  bool aborted = false;
  while (!done) {
    int running = 0;
    c.multi_perform.fn(m, &running);
    int queued = 0;
    while (CURLMsg* msg = c.multi_info_read.fn(m, &queued)) {
      if (msg->msg == CURLMSG_DONE) {
        rc = msg->data.result;
        done = true;
      }
    }
    if (done) break;
    if (abort.load()) {
      aborted = true;
      break;
    }
    curl_waitfd wake{wake_fd_, CURL_WAIT_POLLIN, 0};
    c.multi_poll.fn(m, &wake, wake_fd_ >= 0 ? 1 : 0, 1000, nullptr);
  }
  long status = 0;
  if (done && rc == CURLE_OK) c.easy_getinfo.fn(h, CURLINFO_RESPONSE_CODE, &status);
  c.multi_remove_handle.fn(m, h);
  c.slist_free_all.fn(hdrs);
  const std::string what = "POST " + redact_url(url) + ": ";  // the log and the API see it
  if (aborted) return {false, true, what + "abandoned at the shutdown deadline"};
  if (rc != CURLE_OK) {
    std::string e = errbuf[0] ? errbuf : c.easy_strerror.fn(rc);
    if (rc == CURLE_OPERATION_TIMEDOUT) {
      e = "no answer within " + format_duration(timeout) + " (" + e + ")";
    }
    return {false, true, what + one_line(e)};
  }
  if (status >= 200 && status < 300) return {true, false, {}};
  // Like Alertmanager's own retrier: server errors and overload are retried, other client
  // errors would fail again the same way.
  const bool retry = status >= 500 || status == 408 || status == 429;
  return {false, retry,
          what + "HTTP " + std::to_string(status) +
              (response.empty() ? "" : ": " + one_line(response)) +
              (retry ? "" : " (not retried: the receiver refused the message)")};
}

}  // namespace gw::alert
