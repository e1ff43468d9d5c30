// Who may call which HTTP route of the daemon: the one decision, in one place. Every route
// (the API here, the dashboard, anything added later) goes through authorize(); the server
// installs it as a pre-routing check so a new route cannot forget it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gw::serve {

// serve.auth: when reads need the bearer token. Writes (anything but GET/HEAD) always do.
enum class AuthMode {
  kAuto,   // reads need the token when the daemon listens on a non-loopback address
  kToken,  // reads always need the token (except the open paths)
  kOpen,   // reads never need it: a trusted network, the operator's explicit choice
};

struct AuthPolicy {
  AuthMode mode = AuthMode::kAuto;
  std::optional<std::string> token;  // serve.api_token
  bool loopback = true;              // the listen address is loopback only
  // Paths anyone may GET (scrapers and probes carry no token): serve.open_paths.
  std::vector<std::string> open_paths = {"/metrics", "/healthz", "/readyz"};
};

struct AuthDecision {
  bool allowed = true;
  int status = 200;  // 401 (no or wrong token) or 403 (no token configured) when refused
  std::string code;  // api.unauthorized, api.read_only, api.token_required
  std::string message;
};

// The decision for one request. `authorization` is the Authorization header ("" if none).
AuthDecision authorize(const AuthPolicy& policy, std::string_view method, std::string_view path,
                       std::string_view authorization);

// Whether reads of non-open paths need the token under `policy`.
bool reads_need_token(const AuthPolicy& policy);

// 127.0.0.0/8, ::1, localhost. "0.0.0.0", "::" and every other address are not.
bool is_loopback_host(std::string_view host);

// "auto", "token", "open".
std::optional<AuthMode> parse_auth_mode(std::string_view text);
const char* auth_mode_name(AuthMode m);

}  // namespace gw::serve
