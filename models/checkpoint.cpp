#include "models/checkpoint.h"

#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/json_values.h"
#include "common/safetensors.h"

namespace octet {

namespace {
void check_params(const Checkpoint& c, const std::string& where) {
  for (const Graph::Param& p : c.graph.params()) {
    auto it = c.params.find(p.name);
    check(it != c.params.end(), where + "parameter '" + p.name + "' is missing");
    const Shape expected(p.shape.begin(), p.shape.end());
    check(it->second.shape == expected, where + "parameter '" + p.name + "' has shape " +
                                            shape_string(it->second.shape) + ", the graph needs " +
                                            shape_string(expected));
  }
}
}  // namespace

const FloatTensor& Checkpoint::param(const std::string& name) const {
  auto it = params.find(name);
  check(it != params.end(), "checkpoint has no parameter '" + name + "'");
  return it->second;
}

void save_checkpoint(const Checkpoint& c, const std::string& path) {
  check_params(c, "cannot save checkpoint '" + path + "': ");
  TensorFile file;
  file.metadata = {
      {"format", kCheckpointFormat},
      {"format_version", std::to_string(kCheckpointVersion)},
      {"model", c.model},
      {"dataset", c.dataset},
      {"batch_norm", c.batch_norm ? "true" : "false"},
      {"graph", c.graph.to_json()},
      {"classes", nlohmann::json(c.classes).dump()},
      {"mean", nlohmann::json(c.mean).dump()},
      {"std", nlohmann::json(c.std).dump()},
      {"training", c.training_json},
  };
  for (const auto& [name, tensor] : c.params) file.put(name, tensor);
  file.save(path);
}

Checkpoint load_checkpoint(const std::string& path) {
  const TensorFile file = TensorFile::load(path);
  const std::string where = path + ": ";
  file.check_format(kCheckpointFormat, kCheckpointVersion, "checkpoint");
  Checkpoint c;
  try {
    c.model = file.meta("model");
    c.dataset = file.meta("dataset");
    c.batch_norm = file.meta("batch_norm") == "true";
    c.graph = Graph::from_json(file.meta("graph"));
    c.classes = nlohmann::json::parse(file.meta("classes")).get<std::vector<std::string>>();
    c.mean = json_floats(nlohmann::json::parse(file.meta("mean")), "metadata 'mean'");
    c.std = json_floats(nlohmann::json::parse(file.meta("std")), "metadata 'std'");
    c.training_json = file.meta("training");
  } catch (const nlohmann::json::exception& e) {
    fail(where + "malformed checkpoint metadata: " + e.what());
  } catch (const Error& e) {
    fail(where + e.what());
  }
  const int channels = c.graph.nodes[0].channels;
  check(static_cast<int>(c.mean.size()) == channels && static_cast<int>(c.std.size()) == channels,
        where + "normalisation has " + std::to_string(c.mean.size()) + " means and " +
            std::to_string(c.std.size()) + " stds for " + std::to_string(channels) + " input channels");
  for (const auto& entry : file.tensors()) c.params[entry.first] = file.get<float>(entry.first);
  check_params(c, where);
  check(static_cast<int>(c.classes.size()) == c.graph.shapes().back().c,
        where + "has " + std::to_string(c.classes.size()) + " class names for " +
            std::to_string(c.graph.shapes().back().c) + " outputs");
  return c;
}

}  // namespace octet
