// The operator harness's convolutions large enough to be shared between
// threads (over 2^24 multiply-adds: shared even where idle threads sleep)
// whose output pixels do not divide into whole tasks of 256: ResNet-50's 7x7
// layers at batch 16 and the like, where each thread's share is a run of
// register blocks or of output rows that the CPU kernels compute from the task's
// index alone. A share left out or computed twice changes the outputs.
#pragma once

#include <vector>

#include "tests/ops/op_cases.h"

namespace octet {

void add_shared_task_cases(std::vector<OpCase>& cases);

}  // namespace octet
