#include "models/state_dict_mapping.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/error.h"
#include "common/strings.h"
#include "data/dataset.h"
#include "models/registry.h"

namespace octet {

namespace {

// Wrappers that prefix every name: nn.DataParallel / DistributedDataParallel
// and torch.compile.
const char* const kWrapperPrefixes[] = {"module.", "_orig_mod."};

// torchvision-style module names and octet's: ResNet's projection shortcut
// and the classifier.
const std::pair<const char*, const char*> kSegmentAliases[] = {{"downsample", "shortcut"}, {"fc", "linear"}};

std::string strip_wrappers(std::string name) {
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (const char* prefix : kWrapperPrefixes) {
      const std::string p(prefix);
      if (name.compare(0, p.size(), p) == 0) {
        name = name.substr(p.size());
        stripped = true;
      }
    }
  }
  return name;
}

// The name with every dot-separated segment that has an octet alias replaced.
std::string octet_spelling(const std::string& name) {
  std::string out, segment;
  std::istringstream in(name);
  while (std::getline(in, segment, '.')) {
    for (const auto& [torch_name, octet_name] : kSegmentAliases)
      if (segment == torch_name) segment = octet_name;
    out += (out.empty() ? "" : ".") + segment;
  }
  return out;
}

// "a, b, c (and 7 more)".
std::string name_list(const std::vector<std::string>& names) {
  constexpr size_t kShown = 8;
  std::string out;
  for (size_t i = 0; i < names.size() && i < kShown; ++i) out += (i ? ", " : "") + ("'" + names[i] + "'");
  if (names.size() > kShown) out += " (and " + std::to_string(names.size() - kShown) + " more)";
  return out;
}

}  // namespace

std::map<std::string, FloatTensor> map_torch_state_dict(const Graph& graph,
                                                        const std::map<std::string, FloatTensor>& state_dict,
                                                        const std::string& where) {
  std::map<std::string, Shape> wanted;
  for (const Graph::Param& p : graph.params()) wanted[p.name] = Shape(p.shape.begin(), p.shape.end());
  std::set<std::string> batch_norms;
  for (const Node& n : graph.nodes)
    if (n.op == Op::BatchNorm2d) batch_norms.insert(n.name);

  std::map<std::string, FloatTensor> params;
  std::map<std::string, std::string> source_of;  // octet name -> state_dict name
  std::vector<std::string> unknown, duplicated, misshapen, non_finite;
  for (const auto& [torch_name, tensor] : state_dict) {
    const std::string bare = strip_wrappers(torch_name);
    std::string name = wanted.count(bare) ? bare : octet_spelling(bare);
    const std::string counter = ".num_batches_tracked";
    if (ends_with(name, counter) && batch_norms.count(name.substr(0, name.size() - counter.size()))) continue;
    auto it = wanted.find(name);
    if (it == wanted.end()) {
      unknown.push_back(torch_name);
      continue;
    }
    if (source_of.count(name)) {
      duplicated.push_back("'" + source_of[name] + "' and '" + torch_name + "' are both " + name);
      continue;
    }
    source_of[name] = torch_name;
    if (tensor.shape != it->second) {
      misshapen.push_back(torch_name + " " + shape_string(tensor.shape) + " (" + name + " needs " +
                          shape_string(it->second) + ")");
      continue;
    }
    if (!std::all_of(tensor.data.begin(), tensor.data.end(), [](float v) { return std::isfinite(v); }))
      non_finite.push_back(torch_name);
    params[name] = tensor;
  }
  std::vector<std::string> missing;
  for (const auto& entry : wanted)
    if (!source_of.count(entry.first)) missing.push_back(entry.first);

  std::string problems;
  auto report = [&](const std::vector<std::string>& names, const std::string& what) {
    if (!names.empty()) problems += "\n  " + what + ": " + name_list(names);
  };
  report(unknown, "tensors the model does not have");
  report(missing, "parameters the state_dict lacks");
  report(duplicated, "tensors given twice");
  report(misshapen, "tensors of the wrong shape");
  report(non_finite, "tensors holding NaN or infinite values");
  check(problems.empty(), where + "the state_dict does not match the model:" + problems);
  return params;
}

Checkpoint checkpoint_from_torch(const std::map<std::string, FloatTensor>& state_dict,
                                 const TorchImportOptions& o) {
  const std::string where = (o.source.empty() ? std::string("state_dict") : o.source) + " as " + o.model + " on " +
                            o.dataset + ": ";
  const DatasetInfo& info = dataset_info(o.dataset);
  Checkpoint c;
  c.model = o.model;
  c.dataset = o.dataset;
  c.batch_norm = o.batch_norm;
  c.graph = build_model(o.model, model_options_for(o.dataset, o.batch_norm));
  c.classes = info.classes;
  c.mean = o.mean.empty() ? info.mean : o.mean;
  c.std = o.std.empty() ? info.std : o.std;
  const size_t channels = static_cast<size_t>(info.channels);
  check(c.mean.size() == channels && c.std.size() == channels,
        where + "the normalisation needs " + std::to_string(channels) + " means and stds, got " +
            std::to_string(c.mean.size()) + " and " + std::to_string(c.std.size()));
  for (float s : c.std) check(s > 0, where + "every normalisation std must be positive");
  c.params = map_torch_state_dict(c.graph, state_dict, where);
  c.training_json = nlohmann::json{{"imported_from", o.source.empty() ? "state_dict" : o.source}}.dump();
  return c;
}

}  // namespace octet
