// Moved to core/input_file.h (one reader of named inputs for captures, scenarios and traces);
// this header stays so code written against the old path keeps building.
#pragma once

#include "core/input_file.h"
