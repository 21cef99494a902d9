// `--method auto-global`: one method for every quantization point, mse or
// percentile, whichever's int8 model is closer to float by auto's score (the
// KL of the logits on the scored calibration images, scored_images.h). Two
// int8 runs of the whole model instead of auto's race at every point: the
// method of networks too large for auto (quant/pipeline.h). Neither method
// is better everywhere: with nearest rounding, the test set agreed with float
// on 99.25% (mse) and 99.15% (percentile) for the zoo ResNet-20, but 96.71%
// and 97.24% for a one-epoch CIFAR ResNet-18.
#pragma once

#include <string>
#include <vector>

#include "quant/auto_amax.h"

namespace octet {

// Sets `amax` and `methods` (by float node) at every point to the winner's:
// the method of the lower summed KL, mse on a tie. A method whose model
// cannot be built (its scales out of the runtime's range) is left out,
// unless it is mse.
void choose_global_amax(const AutoSearchPoints& points, const Int8ModelBuilder& build, const Calibration& calibration,
                        const FloatTensor& target, double percentile, std::vector<double>* amax,
                        std::vector<std::string>* methods);

}  // namespace octet
