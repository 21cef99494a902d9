// ResNet-20/32/44/56 of He et al. 2016 for CIFAR: 3 stages of n BasicBlocks
// with 16/32/64 channels (depth = 6n + 2) and option A shortcuts (stride-2
// subsample + zero channel padding, no parameters), as in the Optimus lab.
#include "models/registry.h"

namespace octet {
namespace {

Graph build_resnet_cifar(const ModelOptions& o, int depth) {
  const int blocks_per_stage = (depth - 2) / 6;
  GraphBuilder b;
  int x = b.input(o.channels, o.height, o.width);
  x = b.relu(b.conv_bn("conv1", "bn1", x, 16, 3, 1, 1, o.batch_norm));
  int in = 16;
  for (int stage = 0; stage < 3; ++stage) {
    const int out = 16 << stage;
    for (int block = 0; block < blocks_per_stage; ++block) {
      const int stride = (stage > 0 && block == 0) ? 2 : 1;
      const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(block);
      int y = b.relu(b.conv_bn(p + ".conv1", p + ".bn1", x, out, 3, stride, 1, o.batch_norm));
      y = b.conv_bn(p + ".conv2", p + ".bn2", y, out, 3, 1, 1, o.batch_norm);
      const int shortcut = (stride != 1 || in != out) ? b.shortcut_a(x, out / 4) : x;
      x = b.relu(b.add(y, shortcut));
      in = out;
    }
  }
  x = b.flatten(b.global_avg_pool(x));
  b.linear("linear", x, o.num_classes);
  return b.finish();
}

Graph build_resnet20(const ModelOptions& o) { return build_resnet_cifar(o, 20); }
Graph build_resnet32(const ModelOptions& o) { return build_resnet_cifar(o, 32); }
Graph build_resnet44(const ModelOptions& o) { return build_resnet_cifar(o, 44); }
Graph build_resnet56(const ModelOptions& o) { return build_resnet_cifar(o, 56); }

}  // namespace

OCTET_REGISTER_MODEL(resnet20, "resnet20", "ResNet-20 (He et al. 2016, CIFAR, option A shortcuts)", build_resnet20);
OCTET_REGISTER_MODEL(resnet32, "resnet32", "ResNet-32 (He et al. 2016, CIFAR, option A shortcuts)", build_resnet32);
OCTET_REGISTER_MODEL(resnet44, "resnet44", "ResNet-44 (He et al. 2016, CIFAR, option A shortcuts)", build_resnet44);
OCTET_REGISTER_MODEL(resnet56, "resnet56", "ResNet-56 (He et al. 2016, CIFAR, option A shortcuts)", build_resnet56);

}  // namespace octet
