// Models are built by name. Each architecture file registers itself with
// OCTET_REGISTER_MODEL, so adding a model is adding one file to models/arch/.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"

namespace octet {

struct ModelOptions {
  int channels = 3, height = 32, width = 32;  // input image
  int num_classes = 10;
  bool batch_norm = true;  // --no-bn removes every batch norm
};

using ModelBuildFn = Graph (*)(const ModelOptions&);

struct ModelEntry {
  std::string name;
  std::string description;
  ModelBuildFn build;
};

void register_model(ModelEntry entry);
const ModelEntry& find_model(const std::string& name);  // fails listing the known names
std::vector<std::string> model_names();
Graph build_model(const std::string& name, const ModelOptions& options);
// Model options for a dataset's images and classes (data/dataset.h names them).
ModelOptions model_options_for(const std::string& dataset, bool batch_norm);

struct ModelRegistration {
  ModelRegistration(const char* name, const char* description, ModelBuildFn build) {
    register_model({name, description, build});
  }
};

#define OCTET_REGISTER_MODEL(id, name, description, fn) \
  static const ::octet::ModelRegistration octet_model_registration_##id(name, description, fn)

}  // namespace octet
