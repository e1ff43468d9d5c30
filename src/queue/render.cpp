#include "queue/render.h"

#include <fmt/format.h>

#include "core/text_safety.h"

namespace gw::queue {
namespace {

std::string command_line(const nlohmann::json& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a.get<std::string>();
  return terminal_safe(s.size() > 40 ? s.substr(0, 37) + "..." : s);
}

std::string gpu_list(const nlohmann::json& g) {
  std::string s;
  for (const auto& i : g) s += (s.empty() ? "" : ",") + std::to_string(i.get<unsigned>());
  return s.empty() ? "-" : s;
}

}  // namespace

std::string render_queue(const nlohmann::json& reply) {
  std::string out = fmt::format("{:>6}  {:<10} {:<10} {:>4}  {:<8} {}\n", "ID", "USER", "STATE",
                                "GPUS", "ON", "COMMAND / WHY IT WAITS");
  for (const auto& j : reply.at("jobs")) {
    out +=
        fmt::format("{:>6}  {:<10} {:<10} {:>4}  {:<8} {}\n", j["id"].get<int64_t>(),
                    terminal_safe(j["user"].get<std::string>()), j["state"].get<std::string>(),
                    j["gpus"].get<unsigned>(), gpu_list(j["gpu_indices"]), command_line(j["argv"]));
    if (j.contains("wait_reason"))
      out += fmt::format("{:>8}{}\n", "", terminal_safe(j["wait_reason"].get<std::string>()));
    else if (!j["reason"].get<std::string>().empty())
      out += fmt::format("{:>8}{}\n", "", terminal_safe(j["reason"].get<std::string>()));
  }
  if (reply.at("jobs").empty()) out += "(no jobs)\n";
  return out;
}

std::string render_gpus(const nlohmann::json& reply) {
  std::string out = fmt::format("{:>3}  {:<9} {:<12} {}\n", "GPU", "STATE", "BY", "REASON / JOBS");
  for (const auto& g : reply.at("gpus")) {
    std::string why = terminal_safe(g["reason"].get<std::string>());
    if (!g["jobs"].empty()) why += (why.empty() ? "job " : "; job ") + gpu_list(g["jobs"]);
    out +=
        fmt::format("{:>3}  {:<9} {:<12} {}\n", g["index"].get<unsigned>(),
                    g["state"].get<std::string>(), terminal_safe(g["by"].get<std::string>()), why);
  }
  return out;
}

std::string render_job(const nlohmann::json& j) {
  std::string out =
      fmt::format("Job {} ({}) of {}: {}\n", j["id"].get<int64_t>(),
                  terminal_safe(j["name"].get<std::string>()),
                  terminal_safe(j["user"].get<std::string>()), j["state"].get<std::string>());
  out += "  command: " + command_line(j["argv"]) + "\n";
  out += "  cwd:     " + terminal_safe(j["cwd"].get<std::string>()) + "\n";
  out += fmt::format("  GPUs:    {} asked, on {}", j["gpus"].get<unsigned>(),
                     gpu_list(j["gpu_indices"]));
  for (const auto& u : j["gpu_uuids"]) out += " " + terminal_safe(u.get<std::string>());
  out += "\n";
  if (!j["reason"].get<std::string>().empty())
    out += "  reason:  " + terminal_safe(j["reason"].get<std::string>()) + "\n";
  if (!j["exit_code"].is_null()) out += fmt::format("  exit code {}\n", j["exit_code"].get<int>());
  if (!j["signal"].is_null()) out += fmt::format("  killed by signal {}\n", j["signal"].get<int>());
  out += "  stdout:  " + terminal_safe(j["stdout"].get<std::string>()) + "\n";
  out += "  stderr:  " + terminal_safe(j["stderr"].get<std::string>()) + "\n";
  out += fmt::format("  attempts: {}\n", j["attempts"].get<unsigned>());
  return out;
}

}  // namespace gw::queue
