// dcgm-exporter's HPC job mapping: a directory with one file per GPU index ("3", or "3.1" for a
// MIG instance) holding the ids of the jobs on that GPU, one per line. Written by
// `gpuwarden slurm prolog` (and the queue); read on every /metrics render so a job's GPUs
// carry hpc_job="<id>" while it runs. A missing directory means no jobs.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gw::serve {

// GPU key ("3", "3.1") -> job ids, in file order. Names that are not <digits>[.<digits>] and
// anything not a regular file are skipped; empty lines are skipped.
using JobMap = std::map<std::string, std::vector<std::string>>;

JobMap read_job_mapping(const std::string& dir);

// Pure: one file's text to job ids (CRLF tolerated, empty lines skipped, at most 64 ids of at
// most 128 bytes each: a stray big file must not blow up every series).
std::vector<std::string> parse_job_file(std::string_view text);

}  // namespace gw::serve
