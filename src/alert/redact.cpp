// Sink URLs carry secrets (user:password@, a token in the path as webhook services issue them,
// ?token=... in the query): every URL the daemon prints (log lines, the API's last_error,
// --check-config) goes through redact_url first.
#include <cctype>

#include "alert/alert.h"

namespace gw::alert {
namespace {

// A path segment that reads like a credential: long, with letters and digits mixed.
bool looks_secret(std::string_view seg) {
  if (seg.size() < 16) return false;
  bool alpha = false, digit = false;
  for (char c : seg) {
    alpha = alpha || std::isalpha(static_cast<unsigned char>(c));
    digit = digit || std::isdigit(static_cast<unsigned char>(c));
  }
  return alpha && digit;
}

std::string redact_path(std::string_view path) {
  std::string out;
  size_t p = 0;
  while (p <= path.size()) {
    const size_t e = std::min(path.find('/', p), path.size());
    const std::string_view seg = path.substr(p, e - p);
    out += looks_secret(seg) ? "***" : std::string(seg);
    if (e == path.size()) break;
    out += '/';
    p = e + 1;
  }
  return out;
}

// Every query value is hidden: which parameter names are secret is the receiver's business.
std::string redact_query(std::string_view q) {
  std::string out;
  size_t p = 0;
  while (p <= q.size()) {
    const size_t e = std::min(q.find('&', p), q.size());
    const std::string_view kv = q.substr(p, e - p);
    const size_t eq = kv.find('=');
    out += eq == std::string_view::npos ? std::string(kv) : std::string(kv.substr(0, eq)) + "=***";
    if (e == q.size()) break;
    out += '&';
    p = e + 1;
  }
  return out;
}

}  // namespace

std::string redact_url(std::string_view url) {
  const size_t scheme = url.find("://");
  const size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  const size_t path_at = std::min(url.find_first_of("/?#", start), url.size());
  std::string_view authority = url.substr(start, path_at - start);
  std::string out(url.substr(0, start));
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) {
    out += "***@";
    authority.remove_prefix(at + 1);
  }
  out += authority;
  std::string_view rest = url.substr(path_at);
  const size_t frag = rest.find('#');
  if (frag != std::string_view::npos) rest = rest.substr(0, frag);
  const size_t qm = rest.find('?');
  out += redact_path(rest.substr(0, qm));
  if (qm != std::string_view::npos) out += "?" + redact_query(rest.substr(qm + 1));
  return out;
}

}  // namespace gw::alert
