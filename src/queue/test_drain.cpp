#include "queue/test_drain.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "queue/server.h"

namespace gw::queue {
namespace {

bool wanted(const std::vector<unsigned>& gpus, unsigned g) {
  return gpus.empty() || std::find(gpus.begin(), gpus.end(), g) != gpus.end();
}

std::string refusal(const nlohmann::json& reply) {
  return reply.contains("error") ? reply["error"].value("message", std::string("refused"))
                                 : std::string("refused");
}

}  // namespace

Result<std::unique_ptr<TestDrain>> TestDrain::acquire(const std::string& socket,
                                                      const std::vector<unsigned>& gpus,
                                                      const std::string& reason) {
  auto list = request(socket, {{"cmd", "gpu.list"}});
  if (!list && list.error().code == "queue.connect") return std::unique_ptr<TestDrain>();
  if (!list) return list.error();
  if (!list->value("ok", false))
    return make_error("queue.denied", "the queue refused to list its GPUs: " + refusal(*list),
                      socket);
  std::unique_ptr<TestDrain> d(new TestDrain(socket, reason));
  for (const nlohmann::json& g : (*list)["gpus"]) {
    const unsigned index = g.value("index", 0u);
    if (!wanted(gpus, index)) continue;
    if (g.value("state", std::string()) == "drained") {
      d->kept_.push_back(index);
      continue;
    }
    auto r = request(socket, {{"cmd", "gpu.drain"}, {"gpu", index}, {"reason", reason}});
    if (!r) return r.error();  // the destructor resumes what was drained so far
    if (!r->value("ok", false))
      return make_error(
          "queue.denied",
          fmt::format("the queue refused to drain GPU {} for the test: {}", index, refusal(*r)),
          socket);
    d->drained_.push_back(index);
  }
  return d;
}

// Resumes a GPU only while its drain is still the one this test made.
void TestDrain::resume_own() {
  if (drained_.empty()) return;
  auto list = request(socket_, {{"cmd", "gpu.list"}});
  if (!list || !list->value("ok", false)) return;
  for (const nlohmann::json& g : (*list)["gpus"]) {
    const unsigned index = g.value("index", 0u);
    if (std::find(drained_.begin(), drained_.end(), index) == drained_.end()) continue;
    if (g.value("state", std::string()) != "drained" || g.value("reason", std::string()) != reason_)
      continue;
    (void)request(socket_, {{"cmd", "gpu.resume"}, {"gpu", index}});
  }
}

TestDrain::~TestDrain() {
  resume_own();
}

std::string TestDrain::summary() const {
  std::string s = drained_.empty() ? "no GPU drained"
                                   : fmt::format(
                                         "drained GPU {} in the queue at {} for the "
                                         "test, resumed after it",
                                         fmt::join(drained_, ", "), socket_);
  if (!kept_.empty())
    s += fmt::format("; GPU {} already drained (left so)", fmt::join(kept_, ", "));
  return s;
}

TestHold hold_for_test(const std::vector<unsigned>& gpus, bool fake_source, bool force) {
  TestHold h;
  if (fake_source && std::getenv("GPUWARDEN_SOCKET") == nullptr) return h;
  const std::string socket = default_socket_path();
  auto d =
      TestDrain::acquire(socket, gpus, fmt::format("gpuwarden stress test (pid {})", ::getpid()));
  if (d) {
    h.drain = std::move(*d);
    if (h.drain) h.note = h.drain->summary();
    return h;
  }
  const std::string why = d.error().message;
  if (force) {
    h.note = "the queue at " + socket + " did not drain the GPUs (" + why +
             "); --force tests anyway, and a queued job may start on a tested GPU";
    return h;
  }
  h.refused = why + " (" + socket +
              "); run the test as root or in the queue's admin group, or --force to test anyway";
  return h;
}

}  // namespace gw::queue
