// LeNet-5 as in the course lab: conv 6@5x5 -> ReLU -> maxpool 2 -> conv 16@5x5
// -> ReLU -> maxpool 2 -> fc 120 -> fc 84 -> fc 10. A 28x28 input (Fashion-MNIST)
// gets conv1 padding 2 so that fc1 always sees 16x5x5. LeNet-5 has no batch
// norm, so --no-bn changes nothing.
#include "common/error.h"
#include "models/registry.h"

namespace octet {
namespace {

Graph build_lenet5(const ModelOptions& o) {
  check(o.height == o.width && o.height <= 32 && (32 - o.height) % 2 == 0,
        "lenet5 needs a square input of at most 32x32 with an even margin, got " + std::to_string(o.height) + "x" +
            std::to_string(o.width));
  GraphBuilder b;
  int x = b.input(o.channels, o.height, o.width);
  x = b.relu(b.conv("conv1", x, 6, 5, 1, (32 - o.height) / 2, true));
  x = b.max_pool(x, 2, 2);
  x = b.relu(b.conv("conv2", x, 16, 5, 1, 0, true));
  x = b.max_pool(x, 2, 2);
  x = b.flatten(x);
  x = b.relu(b.linear("fc1", x, 120));
  x = b.relu(b.linear("fc2", x, 84));
  b.linear("fc3", x, o.num_classes);
  return b.finish();
}

}  // namespace

OCTET_REGISTER_MODEL(lenet5, "lenet5", "LeNet-5 (course lab): 2 conv + 3 fc, ReLU, max-pool", build_lenet5);

}  // namespace octet
