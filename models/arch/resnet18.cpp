// ResNet-18, CIFAR variant (as in the course lab): 3x3 stem with 64 channels,
// no max-pool, BasicBlocks [2, 2, 2, 2], 1x1 conv + BN shortcuts where the
// shape changes, global average pool, fc 512 -> classes.
#include "models/registry.h"

namespace octet {
namespace {

int basic_block(GraphBuilder& b, const ModelOptions& o, const std::string& p, int x, int in, int out, int stride) {
  int y = b.relu(b.conv_bn(p + ".conv1", p + ".bn1", x, out, 3, stride, 1, o.batch_norm));
  y = b.conv_bn(p + ".conv2", p + ".bn2", y, out, 3, 1, 1, o.batch_norm);
  const int shortcut = (stride != 1 || in != out)
                           ? b.conv_bn(p + ".shortcut.0", p + ".shortcut.1", x, out, 1, stride, 0, o.batch_norm)
                           : x;
  return b.relu(b.add(y, shortcut));
}

Graph build_resnet18(const ModelOptions& o) {
  GraphBuilder b;
  int x = b.input(o.channels, o.height, o.width);
  x = b.relu(b.conv_bn("conv1", "bn1", x, 64, 3, 1, 1, o.batch_norm));
  int in = 64;
  const int widths[] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    for (int block = 0; block < 2; ++block) {
      const int stride = (stage > 0 && block == 0) ? 2 : 1;
      const std::string prefix = "layer" + std::to_string(stage + 1) + "." + std::to_string(block);
      x = basic_block(b, o, prefix, x, in, widths[stage], stride);
      in = widths[stage];
    }
  }
  x = b.flatten(b.global_avg_pool(x));
  b.linear("linear", x, o.num_classes);
  return b.finish();
}

}  // namespace

OCTET_REGISTER_MODEL(resnet18, "resnet18", "ResNet-18, CIFAR variant (3x3 stem, conv+BN shortcuts)", build_resnet18);

}  // namespace octet
