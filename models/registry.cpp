#include "models/registry.h"

#include <algorithm>
#include <map>

#include "common/error.h"
#include "data/dataset.h"

namespace octet {

namespace {
std::map<std::string, ModelEntry>& registry() {
  static std::map<std::string, ModelEntry> models;
  return models;
}
}  // namespace

void register_model(ModelEntry entry) { registry()[entry.name] = std::move(entry); }

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& entry : registry()) names.push_back(entry.first);
  return names;
}

const ModelEntry& find_model(const std::string& name) {
  auto it = registry().find(name);
  if (it == registry().end()) {
    std::string known;
    for (const auto& n : model_names()) known += (known.empty() ? "" : ", ") + n;
    fail("unknown model '" + name + "' (known: " + known + ")");
  }
  return it->second;
}

Graph build_model(const std::string& name, const ModelOptions& options) { return find_model(name).build(options); }

ModelOptions model_options_for(const std::string& dataset, bool batch_norm) {
  const DatasetInfo& info = dataset_info(dataset);
  ModelOptions o;
  o.channels = info.channels;
  o.height = info.height;
  o.width = info.width;
  o.num_classes = static_cast<int>(info.classes.size());
  o.batch_norm = batch_norm;
  return o;
}

}  // namespace octet
