// `octet summary`: the layer table and the totals the course lab asked for
// (trainable parameters, gradients, conv layers, input of the last linear),
// of a built-in model or of a checkpoint's graph (one trained, or imported
// from ONNX).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "common/file_io.h"
#include "data/dataset.h"
#include "graph/output_decode.h"
#include "models/checkpoint.h"
#include "models/registry.h"
#include "tools/commands.h"
#include "tools/options.h"
#include "tools/torch_helper.h"
#ifdef OCTET_HAVE_TORCH
#include "train/graph_net.h"
#endif

namespace octet {

namespace {
struct SummaryOptions {
  std::string model = "resnet18";
  std::string dataset = "cifar10";
  std::string checkpoint;
  bool batch_norm = true;
  bool list = false;
  std::string json;
};

void run_summary(const SummaryOptions& o) {
  if (o.list) {
    for (const auto& name : model_names()) std::printf("%-10s %s\n", name.c_str(), find_model(name).description.c_str());
    return;
  }
#ifndef OCTET_HAVE_TORCH
  use_torch_helper();  // the gradient count runs a backward pass
#endif
  std::FILE* out = report_stream(o.json);
  Checkpoint c;
  if (!o.checkpoint.empty()) c = load_checkpoint(o.checkpoint);
  const Graph g = o.checkpoint.empty() ? build_model(o.model, model_options_for(o.dataset, o.batch_norm)) : c.graph;
  const std::vector<ActShape> shapes = g.shapes();
  int64_t trainable = 0;
  for (const Graph::Param& p : g.params())
    if (p.trainable) trainable += shape_numel(Shape(p.shape.begin(), p.shape.end()));
#ifdef OCTET_HAVE_TORCH
  // Gradients are counted from a real backward pass, as the lab did.
  GraphNet net(g);
  torch::manual_seed(0);
  torch::Tensor total = torch::zeros({});
  for (const torch::Tensor& y : net->forward_outputs(torch::randn({2, shapes[0].c, shapes[0].h, shapes[0].w})))
    total = total + y.sum();
  total.backward();
  int64_t gradients = 0;
  for (const auto& p : net->parameters())
    if (p.grad().defined()) gradients += p.grad().numel();
#endif
  int conv_layers = 0, last_linear_in = 0;
  nlohmann::json layers = nlohmann::json::array();
  size_t width = 22;  // imported layers carry their ONNX node's name, often longer
  for (const Node& n : g.nodes) width = std::max(width, n.name.size());
  const int name_width = static_cast<int>(width);
  std::fprintf(out, "%-*s %-16s %-14s %12s\n", name_width, "layer", "op", "output", "parameters");
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    int64_t params = 0;
    for (const Graph::Param& p : g.params())
      if (p.trainable && p.name.rfind(n.name + ".", 0) == 0) params += shape_numel(Shape(p.shape.begin(), p.shape.end()));
    if (n.op == Op::Conv2d) ++conv_layers;
    if (n.op == Op::Linear) last_linear_in = shapes[n.inputs[0]].c;
    std::fprintf(out, "%-*s %-16s %-14s %12lld\n", name_width, n.name.c_str(), op_name(n.op),
                 to_string(shapes[i]).c_str(), static_cast<long long>(params));
    layers.push_back({{"name", n.name}, {"op", op_name(n.op)}, {"output", {shapes[i].c, shapes[i].h, shapes[i].w}},
                      {"parameters", params}});
  }
  const std::string model = o.checkpoint.empty() ? o.model : c.model;
  const std::string dataset = o.checkpoint.empty() ? o.dataset : c.dataset.empty() ? "none" : c.dataset;
  const bool batch_norm = o.checkpoint.empty() ? o.batch_norm : c.batch_norm;
  if (!o.checkpoint.empty()) std::fprintf(out, "\ncheckpoint %s", o.checkpoint.c_str());
  std::fprintf(out, "\nmodel %s on %s input %s, batch norm %s\n", model.c_str(), dataset.c_str(),
              to_string(shapes[0]).c_str(), batch_norm ? "on" : "off");
  std::fprintf(out, "trainable parameters      %lld\n", static_cast<long long>(trainable));
#ifdef OCTET_HAVE_TORCH
  std::fprintf(out, "gradients                 %lld\n", static_cast<long long>(gradients));
#else
  std::fprintf(out, "gradients                 (counted by a backward pass, which needs LibTorch)\n");
#endif
  nlohmann::json outputs = nlohmann::json::array();
  std::string listed;
  for (const ModelOutput& m : model_outputs(g, shapes)) {
    const int o = m.nodes[0];
    listed += listed.empty() ? "" : ", ";
    if (m.name.empty()) {
      outputs.push_back({{"name", g.nodes[o].name}, {"shape", {shapes[o].c, shapes[o].h, shapes[o].w}}});
      listed += g.nodes[o].name + " " + to_string(shapes[o]);
      continue;
    }
    nlohmann::json nodes = nlohmann::json::array();
    std::string dims;
    for (int node : m.nodes) nodes.push_back(g.nodes[node].name);
    for (int64_t d : m.dims) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    const std::string decode = decode_name(g, m);
    // Rows (N, rows, K) but for YOLOv8's placed parts (4 + classes, positions) and images (a SiLU's K, H, W).
    const bool rows = g.nodes[m.nodes[0]].view.at.empty() && m.dims.size() == 2;
    outputs.push_back({{"name", m.name}, {"shape", m.dims}, {"nodes", nodes}});
    if (!decode.empty()) outputs.back()["decode"] = decode;
    listed += m.name + " " + dims + (rows ? " (rows of " : " (of ") + std::to_string(m.nodes.size()) +
              " output conv" + (m.nodes.size() == 1 ? "" : "s") +
              (decode.empty() ? ")" : ", " + decode_title(decode) + " decode)");
  }
  std::fprintf(out, "outputs                   %s\n", listed.c_str());
  std::fprintf(out, "conv layers               %d\n", conv_layers);
  std::fprintf(out, "last linear input size    %d\n", last_linear_in);
  if (!o.json.empty()) {
    nlohmann::json j = {{"model", model},
                        {"dataset", dataset},
                        {"batch_norm", batch_norm},
                        {"trainable_parameters", trainable},
                        {"conv_layers", conv_layers},
                        {"outputs", outputs},
                        {"last_linear_input", last_linear_in},
                        {"layers", layers}};
#ifdef OCTET_HAVE_TORCH
    j["gradients"] = gradients;
#endif
    if (!o.checkpoint.empty()) j["checkpoint"] = o.checkpoint;
    write_text_output(o.json, j.dump(2) + "\n");
  }
}
}  // namespace

void add_summary_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("summary", "Layer table and parameter counts of a model");
  auto o = std::make_shared<SummaryOptions>();
  auto* model = cmd->add_option("--model", o->model, "Model name")->capture_default_str();
  auto* dataset = cmd->add_option("--dataset", o->dataset, "Dataset whose input shape to use")->capture_default_str();
  auto* no_bn = cmd->add_flag("!--no-bn", o->batch_norm, "Remove batch norm");
  cmd->add_option("--checkpoint", o->checkpoint,
                  "Float checkpoint (trained, or from `octet import`) whose graph to summarise, in place of --model")
      ->check(CLI::ExistingFile)
      ->excludes(model, dataset, no_bn);
  cmd->add_flag("--list", o->list, "List the known models");
  add_json_option(cmd, o->json, "the summary");
  cmd->callback([o] { run_summary(*o); });
}

}  // namespace octet
