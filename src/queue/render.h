// Text for the queue's replies (the CLI prints these; --json prints the reply itself).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gw::queue {

std::string render_queue(const nlohmann::json& reply);
std::string render_gpus(const nlohmann::json& reply);
std::string render_job(const nlohmann::json& job);

}  // namespace gw::queue
