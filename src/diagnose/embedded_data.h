// Data files compiled into the binary (generated from data/*.tsv by embed.cmake).
#pragma once

#include <string_view>

namespace gw {

std::string_view embedded_xid_catalog_tsv();  // data/xid-catalog.tsv
std::string_view embedded_cuda_compat_tsv();  // data/cuda-driver-compat.tsv

}  // namespace gw
