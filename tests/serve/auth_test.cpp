// serve/auth.cpp: the one decision of who may call which route, then the same decision made
// by a running daemon (serve.auth = "token" on loopback takes the path a non-loopback
// listener takes; tests never listen beyond loopback).
#include "serve/auth.h"

#include "serve/daemon_state.h"
#include "serve_helpers.h"

namespace gw::serve {
namespace {

AuthPolicy beyond_loopback(std::optional<std::string> token) {
  AuthPolicy p;
  p.loopback = false;
  p.token = std::move(token);
  return p;
}

TEST(Auth, LoopbackReadsAreOpenWritesNeedTheToken) {
  AuthPolicy p;
  EXPECT_TRUE(authorize(p, "GET", "/api/findings", "").allowed);
  const AuthDecision w = authorize(p, "POST", "/api/reload", "");
  EXPECT_FALSE(w.allowed);
  EXPECT_EQ(w.status, 403);
  EXPECT_EQ(w.code, "api.read_only");
  p.token = "s3cret";
  EXPECT_EQ(authorize(p, "POST", "/api/reload", "Bearer wrong").status, 401);
  EXPECT_EQ(authorize(p, "POST", "/api/reload", "s3cret").status, 401) << "scheme is required";
  EXPECT_EQ(authorize(p, "POST", "/api/reload", "Bearer s3cre").status, 401) << "a prefix";
  EXPECT_EQ(authorize(p, "POST", "/api/reload", "Bearer s3cretX").status, 401);
  EXPECT_TRUE(authorize(p, "POST", "/api/reload", "Bearer s3cret").allowed);
}

TEST(Auth, BeyondLoopbackEverythingButTheOpenPathsNeedsTheToken) {
  const AuthPolicy none = beyond_loopback(std::nullopt);
  for (const char* open : {"/metrics", "/healthz", "/readyz"})
    EXPECT_TRUE(authorize(none, "GET", open, "").allowed) << open;
  const AuthDecision d = authorize(none, "GET", "/api/history", "");
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.code, "api.token_required");
  EXPECT_FALSE(authorize(none, "POST", "/metrics", "").allowed) << "open means GET only";
  const AuthPolicy with = beyond_loopback("t0k");
  EXPECT_EQ(authorize(with, "GET", "/api/gpus", "").status, 401);
  EXPECT_TRUE(authorize(with, "GET", "/api/gpus", "Bearer t0k").allowed);
  EXPECT_FALSE(authorize(with, "GET", "/metrics/../api/gpus", "").allowed)
      << "only exact open paths";
}

TEST(Auth, ModesAndOpenPathsAreConfigurable) {
  AuthPolicy open = beyond_loopback(std::nullopt);
  open.mode = AuthMode::kOpen;
  EXPECT_TRUE(authorize(open, "GET", "/api/gpus", "").allowed);
  EXPECT_FALSE(authorize(open, "POST", "/api/reload", "").allowed);
  AuthPolicy strict;
  strict.mode = AuthMode::kToken;
  strict.token = "t";
  strict.open_paths = {"/healthz"};
  EXPECT_EQ(authorize(strict, "GET", "/metrics", "").status, 401);
  EXPECT_TRUE(authorize(strict, "GET", "/healthz", "").allowed);
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_FALSE(is_loopback_host("0.0.0.0"));
  EXPECT_FALSE(is_loopback_host("::"));
  EXPECT_FALSE(is_loopback_host("10.1.2.3"));
  EXPECT_FALSE(parse_auth_mode("yes"));
  auto bad = parse_config("[serve]\nauth = \"sometimes\"\n", "t.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().to_string().find("serve.auth"), std::string::npos);
}

TEST(Auth, TheDaemonChecksEveryRouteBeforeRouting) {
  servetest::set_time_scale(1);
  servetest::TempDir dir;
  std::string cfg = servetest::fast_config(dir.path());
  cfg.replace(cfg.find("[serve]\n"), 8,
              "[serve]\nauth = \"token\"\napi_token = \"t0k\"\nopen_paths = [\"/metrics\"]\n");
  servetest::RunningDaemon d(servetest::options_for("demo", cfg));
  ASSERT_TRUE(d.ok()) << d.error;
  EXPECT_EQ(servetest::get(d.port(), "/metrics").status, 200);
  for (const char* path :
       {"/healthz", "/api/findings", "/api/jobs", "/api/history?metric=temp_c", "/nope"})
    EXPECT_EQ(servetest::get(d.port(), path).status, 401) << path;
  httplib::Client c("127.0.0.1", d.port());
  c.set_bearer_token_auth("t0k");
  auto r = c.Get("/api/findings");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = c.Get("/api/jobs");  // with the token; this daemon runs no queue, and says so
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  const auto jobs = nlohmann::json::parse(r->body, nullptr, false);
  EXPECT_TRUE(jobs.is_object() && jobs.contains("queue") && jobs["queue"].is_null()) << r->body;
  r = c.Get("/api/jobs?finished=many");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("finished"), std::string::npos) << r->body;
  c.set_bearer_token_auth("wrong");
  r = c.Post("/api/reload");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_NE(r->body.find("api.unauthorized"), std::string::npos) << r->body;
}

}  // namespace
}  // namespace gw::serve
