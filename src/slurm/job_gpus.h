// The GPUs of a Slurm job as its prolog/epilog see them: SLURM_JOB_GPUS, else
// CUDA_VISIBLE_DEVICES ("0,1", ranges "0-3" accepted). Pure parsing.
#pragma once

#include <set>
#include <string_view>

#include "core/result.h"

namespace gw::slurm {

// "0,1", "2", "0-3,6": indices. Errors name the element that is not an index (a UUID in
// CUDA_VISIBLE_DEVICES is one: the hooks need indices).
Result<std::set<unsigned>> parse_gpu_list(std::string_view text);

}  // namespace gw::slurm
