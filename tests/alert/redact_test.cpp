// Sink URLs are printed (log lines, the API's last_error, --check-config) only redacted.
#include <gtest/gtest.h>

#include <atomic>

#include "alert/alert.h"
#include "alert/deliver.h"

namespace gw::alert {
namespace {

TEST(RedactUrl, CredentialsInEveryPlaceAreHidden) {
  EXPECT_EQ(redact_url("https://alice:hunter2@am.example:9093/api"),
            "https://***@am.example:9093/api");
  EXPECT_EQ(redact_url("http://tok3n@h/x"), "http://***@h/x");
  EXPECT_EQ(redact_url("https://hooks.example.com/services/T0AB12CD/B0XY34ZW/aB3dE5fG7hI9jK1lM3nO"),
            "https://hooks.example.com/services/T0AB12CD/B0XY34ZW/***");
  EXPECT_EQ(redact_url("https://h/hook?token=abc&channel=ops#frag"),
            "https://h/hook?token=***&channel=***");
  EXPECT_EQ(redact_url("http://127.0.0.1:9093"), "http://127.0.0.1:9093") << "nothing to hide";
  EXPECT_EQ(redact_url("http://h/alerts/receiver"), "http://h/alerts/receiver");
}

TEST(RedactUrl, ADeliveryErrorNamesTheReceiverWithoutItsSecrets) {
  HttpPoster poster(-1);
  const std::atomic<bool> abort{false};
  // Port 9 on loopback: nothing listens, the attempt fails at once with an error text.
  const Attempt a = poster.post_json("http://bob:s3cretpw@127.0.0.1:9/x?key=k3y", "{}", {},
                                     std::chrono::milliseconds(2000), abort);
  ASSERT_FALSE(a.ok);
  EXPECT_NE(a.error.find("127.0.0.1:9"), std::string::npos) << a.error;
  EXPECT_EQ(a.error.find("s3cretpw"), std::string::npos) << a.error;
  EXPECT_EQ(a.error.find("bob"), std::string::npos) << a.error;
  EXPECT_EQ(a.error.find("k3y"), std::string::npos) << a.error;
}

}  // namespace
}  // namespace gw::alert
