#include "serve/auth.h"

#include <algorithm>

namespace gw::serve {
namespace {

// Compares in time independent of where the strings differ (the token is a secret).
bool same_secret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

bool is_read(std::string_view method) {
  return method == "GET" || method == "HEAD";
}

AuthDecision refuse(int status, std::string code, std::string message) {
  return {false, status, std::move(code), std::move(message)};
}

}  // namespace

bool reads_need_token(const AuthPolicy& p) {
  switch (p.mode) {
    case AuthMode::kOpen:
      return false;
    case AuthMode::kToken:
      return true;
    case AuthMode::kAuto:
      return !p.loopback;
  }
  return true;
}

AuthDecision authorize(const AuthPolicy& p, std::string_view method, std::string_view path,
                       std::string_view authorization) {
  const bool read = is_read(method);
  if (read && std::find(p.open_paths.begin(), p.open_paths.end(), path) != p.open_paths.end())
    return {};
  if (read && !reads_need_token(p)) return {};
  if (!p.token) {
    if (!read)
      return refuse(403, "api.read_only",
                    "the API is read-only: set serve.api_token to allow " + std::string(method) +
                        " " + std::string(path));
    return refuse(403, "api.token_required",
                  "this daemon listens beyond loopback: set serve.api_token and send "
                  "\"Authorization: Bearer <token>\" (or set serve.auth = \"open\")");
  }
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.substr(0, kBearer.size()) != kBearer ||
      !same_secret(authorization.substr(kBearer.size()), *p.token))
    return refuse(401, "api.unauthorized", "missing or wrong bearer token");
  return {};
}

bool is_loopback_host(std::string_view host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  return host.substr(0, 4) == "127.";
}

std::optional<AuthMode> parse_auth_mode(std::string_view text) {
  if (text == "auto") return AuthMode::kAuto;
  if (text == "token") return AuthMode::kToken;
  if (text == "open") return AuthMode::kOpen;
  return std::nullopt;
}

const char* auth_mode_name(AuthMode m) {
  switch (m) {
    case AuthMode::kAuto:
      return "auto";
    case AuthMode::kToken:
      return "token";
    case AuthMode::kOpen:
      return "open";
  }
  return "auto";
}

}  // namespace gw::serve
