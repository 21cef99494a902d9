// A float checkpoint from PyTorch weights: a state_dict (name -> tensor) of a
// model octet knows, under octet's own names ("layer1.0.shortcut.0.weight",
// "linear.weight") or the usual torchvision-style ones ("downsample" for
// "shortcut", "fc" for "linear"), with DataParallel's "module." prefix or not.
// Every tensor must map onto exactly one parameter of the model's graph with
// its shape, and every parameter must be given; batch norms' counters
// ("num_batches_tracked") are dropped. Reading the file that holds the
// state_dict is the caller's job (Python: octet.from_torch; CLI: octet import).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "models/checkpoint.h"

namespace octet {

struct TorchImportOptions {
  std::string model;    // registry name: "lenet5", "resnet20", "resnet18", ...
  std::string dataset;  // gives the input shape, the classes and the default normalisation
  bool batch_norm = true;
  std::vector<float> mean, std;  // input normalisation; empty: the dataset's
  std::string source;            // where the weights came from, for messages and the training record
};

// The checkpoint parameter each state_dict name maps to, checked as a whole:
// fails naming every unknown, missing, duplicated or misshapen tensor.
std::map<std::string, FloatTensor> map_torch_state_dict(const Graph& graph,
                                                        const std::map<std::string, FloatTensor>& state_dict,
                                                        const std::string& where);

Checkpoint checkpoint_from_torch(const std::map<std::string, FloatTensor>& state_dict,
                                 const TorchImportOptions& options);

}  // namespace octet
