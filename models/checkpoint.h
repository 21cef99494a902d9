// A float checkpoint: one safetensors file holding the weights and everything
// needed to rebuild and evaluate the model without the registry or LibTorch:
// the graph, the dataset and its classes, the input normalisation and the
// batch-norm flag. Tensors are named after graph nodes ("layer1.0.conv1.weight").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/tensor.h"
#include "graph/graph.h"

namespace octet {

struct Checkpoint {
  std::string model;    // registry name, e.g. "resnet20"
  std::string dataset;  // "cifar10", "fashion-mnist", ...
  bool batch_norm = true;
  Graph graph;  // training-time graph (batch norms unfolded)
  std::vector<std::string> classes;
  std::vector<float> mean, std;  // input normalisation per channel
  std::string training_json = "{}";  // how it was trained (options, results), free-form
  std::map<std::string, FloatTensor> params;

  const FloatTensor& param(const std::string& name) const;
};

constexpr const char* kCheckpointFormat = "octet-checkpoint";
constexpr int kCheckpointVersion = 1;

void save_checkpoint(const Checkpoint& checkpoint, const std::string& path);
// Validates the format tag, the graph and that every parameter the graph needs
// is present with the right shape; fails naming the file and the problem.
Checkpoint load_checkpoint(const std::string& path);

}  // namespace octet
