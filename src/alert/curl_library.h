// libcurl, opened with dlopen when the first alert is posted. Linked, it made every gpuwarden
// command load it and the ~30 libraries under it (TLS, Kerberos, LDAP, ...) at start: 2.6 ms
// of CPU for a `doctor` or `status` that never posts anything. <curl/curl.h> gives the types
// and constants only; nothing here links against libcurl.
#pragma once

#include <curl/curl.h>

#include "core/dl_symbols.h"
#include "core/result.h"

namespace gw::alert {

struct CurlApi {
  Sym<CURLcode (*)(long)> global_init;
  Sym<CURL* (*)()> easy_init;
  Sym<void (*)(CURL*)> easy_cleanup;
  Sym<void (*)(CURL*)> easy_reset;
  Sym<CURLcode (*)(CURL*, CURLoption, ...)> easy_setopt;
  Sym<CURLcode (*)(CURL*, CURLINFO, ...)> easy_getinfo;
  Sym<const char* (*)(CURLcode)> easy_strerror;
  Sym<CURLM* (*)()> multi_init;
  Sym<CURLMcode (*)(CURLM*)> multi_cleanup;
  Sym<CURLMcode (*)(CURLM*, CURL*)> multi_add_handle;
  Sym<CURLMcode (*)(CURLM*, CURL*)> multi_remove_handle;
  Sym<CURLMcode (*)(CURLM*, int*)> multi_perform;
  Sym<CURLMsg* (*)(CURLM*, int*)> multi_info_read;
  Sym<CURLMcode (*)(CURLM*, curl_waitfd*, unsigned, int, int*)> multi_poll;
  Sym<curl_slist* (*)(curl_slist*, const char*)> slist_append;
  Sym<void (*)(curl_slist*)> slist_free_all;
};

// The process's libcurl ("libcurl.so.4"), opened and initialised (curl_global_init) on the
// first call, never closed. The error says what could not be loaded or bound; every later call
// returns the same answer.
Result<const CurlApi*> curl_api();

}  // namespace gw::alert
