// `octet bench train SCENARIO`'s runs (LibTorch): every run of the plan is an
// `octet train`, in this process or through `octet launch` for scaling; the
// scenario's table is printed and written with a CSV, an SVG plot and a JSON
// summary into the options' `out` folder.
#pragma once

#include "bench/train_plan.h"

namespace octet {

void run_train_scenario(BenchTrainOptions options);

}  // namespace octet
