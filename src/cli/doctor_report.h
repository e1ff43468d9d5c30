// The human and JSON renderings of a doctor run.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/doctor_run.h"

namespace gw::cli {

// Grouped by severity with a one-line verdict per GPU; colour only when `color`. When `demo`
// is given (no driver on this machine), its report follows this machine's host checks.
void render_doctor_text(std::ostream& out, const DoctorRun& run, const DoctorRun* demo, bool color);

// Versioned JSON (schema "gpuwarden.doctor/v1", documented in docs/doctor.md).
nlohmann::json doctor_json(const DoctorRun& run, const DoctorRun* demo);

// doctor --stress: the measured figures (doctor_active_view.cpp); nothing / null without it.
void active_block(std::ostream& out, const DoctorRun& run);
nlohmann::json active_json(const DoctorRun& run);

// `--list-checks`: the registry as a plain table, or Markdown (docs/checks.md).
std::string list_checks_text();

}  // namespace gw::cli
