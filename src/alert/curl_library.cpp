#include "alert/curl_library.h"

#include <dlfcn.h>

#include <string>

namespace gw::alert {
namespace {

template <class Bind>
void for_each_symbol(CurlApi& a, Bind&& b) {
  b(a.global_init, {"curl_global_init"}, true);
  b(a.easy_init, {"curl_easy_init"}, true);
  b(a.easy_cleanup, {"curl_easy_cleanup"}, true);
  b(a.easy_reset, {"curl_easy_reset"}, true);
  b(a.easy_setopt, {"curl_easy_setopt"}, true);
  b(a.easy_getinfo, {"curl_easy_getinfo"}, true);
  b(a.easy_strerror, {"curl_easy_strerror"}, true);
  b(a.multi_init, {"curl_multi_init"}, true);
  b(a.multi_cleanup, {"curl_multi_cleanup"}, true);
  b(a.multi_add_handle, {"curl_multi_add_handle"}, true);
  b(a.multi_remove_handle, {"curl_multi_remove_handle"}, true);
  b(a.multi_perform, {"curl_multi_perform"}, true);
  b(a.multi_info_read, {"curl_multi_info_read"}, true);
  b(a.multi_poll, {"curl_multi_poll"}, true);  // libcurl 7.66
  b(a.slist_append, {"curl_slist_append"}, true);
  b(a.slist_free_all, {"curl_slist_free_all"}, true);
}

struct Loaded {
  CurlApi api;
  Status status;
};

Loaded open_curl() {
  static constexpr const char* kName = "libcurl.so.4";
  Loaded out;
  auto h = open_library(kName, RTLD_NOW | RTLD_LOCAL, "alert.curl_not_found", "libcurl",
                        ": webhooks need it; install libcurl4 (Debian) or libcurl");
  if (!h) {
    out.status = h.error();
    return out;
  }
  const std::string missing =
      bind_symbols(*h, out.api, [](auto& a, auto f) { for_each_symbol(a, f); });
  if (!missing.empty())
    out.status =
        make_error("alert.curl_too_old",
                   "libcurl does not export " + missing + " (7.66 or newer is needed)", kName);
  else if (out.api.global_init.fn(CURL_GLOBAL_DEFAULT) != CURLE_OK)
    out.status = make_error("alert.curl_init", "curl_global_init failed", kName);
  return out;
}

}  // namespace

Result<const CurlApi*> curl_api() {
  static const Loaded loaded = open_curl();  // thread-safe: the first caller opens it
  if (!loaded.status) return loaded.status.error();
  return &loaded.api;
}

}  // namespace gw::alert
