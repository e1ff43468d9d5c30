// JSON POST through libcurl's multi interface, so a shutdown can interrupt a request that
// waits on a hung receiver (curl_multi_poll also watches the wake pipe) without busy polling.
#include <curl/curl.h>

#include <mutex>

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
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  easy_ = curl_easy_init();
  multi_ = curl_multi_init();
}

HttpPoster::~HttpPoster() {
  if (multi_) curl_multi_cleanup(static_cast<CURLM*>(multi_));
  if (easy_) curl_easy_cleanup(static_cast<CURL*>(easy_));
}

Attempt HttpPoster::post_json(const std::string& url, const std::string& body,
                              const std::map<std::string, std::string>& headers,
                              std::chrono::milliseconds timeout, const std::atomic<bool>& abort) {
  CURL* h = static_cast<CURL*>(easy_);
  CURLM* m = static_cast<CURLM*>(multi_);
  if (!h || !m)
    return {false, true, "POST " + redact_url(url) + ": libcurl could not be initialised"};
  curl_easy_reset(h);  // keeps the connection cache: the next post reuses the socket
  std::string response;
  char errbuf[CURL_ERROR_SIZE] = {0};
  curl_slist* hdrs = curl_slist_append(nullptr, "Content-Type: application/json");
  for (const auto& [k, v] : headers) hdrs = curl_slist_append(hdrs, (k + ": " + v).c_str());
  const long timeout_ms = static_cast<long>(timeout.count());
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "gpuwarden");
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &response);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_multi_add_handle(m, h);
  CURLcode rc = CURLE_OK;
  bool done = false;
  bool aborted = false;
  while (!done) {
    int running = 0;
    curl_multi_perform(m, &running);
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(m, &queued)) {
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
    curl_multi_poll(m, &wake, wake_fd_ >= 0 ? 1 : 0, 1000, nullptr);
  }
  long status = 0;
  if (done && rc == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_multi_remove_handle(m, h);
  curl_slist_free_all(hdrs);
  const std::string what = "POST " + redact_url(url) + ": ";  // the log and the API see it
  if (aborted) return {false, true, what + "abandoned at the shutdown deadline"};
  if (rc != CURLE_OK) {
    std::string e = errbuf[0] ? errbuf : curl_easy_strerror(rc);
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
