// Float checkpoints, quantized models, quantization and evaluation for Python.
// Long calls (inference, calibration, quantization, evaluation, file I/O) run
// with the GIL released; they read only C++ data and the numpy buffers the
// caller passed in, which the caller keeps alive.
#include <pybind11/stl.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "common/error.h"
#include "python/src/arrays.h"
#include "python/src/module.h"
#include "quant/evaluate.h"
#include "quant/pipeline.h"
#include "runtime/engine.h"
#include "tools/options.h"

namespace octet::python {

namespace {

constexpr int64_t kDefaultBatch = 256;

void check_batch_size(int64_t batch_size) {
  if (batch_size <= 0) throw py::value_error("batch_size must be positive, got " + std::to_string(batch_size));
}

const Node& weighted_node(const Graph& g, const std::string& layer) {
  const int i = g.find(layer);
  if (i >= 0 && (g.nodes[i].op == Op::Conv2d || g.nodes[i].op == Op::Linear)) return g.nodes[i];
  std::string known;
  for (const Node& n : g.nodes)
    if (n.op == Op::Conv2d || n.op == Op::Linear) known += (known.empty() ? "" : ", ") + n.name;
  fail((i < 0 ? "no layer '" + layer + "'" : "layer '" + layer + "' has no weights") + " (layers with weights: " +
       known + ")");
}

py::tuple shape_of(const ActShape& s) { return py::make_tuple(s.c, s.h, s.w); }

// One dict per node of an inference graph: name, op, inputs, output shape.
py::list graph_layers(const Graph& g) {
  const std::vector<ActShape> shapes = g.shapes();
  py::list layers;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    py::list inputs;
    for (int in : n.inputs) inputs.append(g.nodes[in].name);
    py::dict d;
    d["name"] = n.name;
    d["op"] = op_name(n.op);
    d["inputs"] = inputs;
    d["shape"] = shape_of(shapes[i]);
    d["relu"] = n.relu;
    layers.append(d);
  }
  return layers;
}

// Every node's output of one batch, as numpy arrays by node name. `nchw[i]` is
// node i's output (empty if the run did not report it).
template <typename T>
py::dict activations_dict(const Graph& g, const std::vector<ActShape>& shapes,
                          const std::vector<std::vector<T>>& nchw, int64_t batch) {
  py::dict out;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!nchw[i].empty()) out[py::str(g.nodes[i].name)] = to_numpy(nchw[i], activation_shape(batch, shapes[i]));
  return out;
}

// Node `node`'s NHWC output -> NCHW. A flatten's output is in octet's H, W, C
// order; it is shown in torch's C, H, W order.
template <typename T>
std::vector<T> node_output_nchw(const Graph& g, const std::vector<ActShape>& shapes, int node, const T* nhwc,
                                int64_t batch) {
  const Node& n = g.nodes[node];
  return nhwc_to_nchw(nhwc, batch, n.op == Op::Flatten ? shapes[n.inputs[0]] : shapes[node]);
}

py::dict stats_dict(const TensorStats& s) {
  std::vector<double> edges(TensorStats::kBins + 1);
  for (int b = 0; b <= TensorStats::kBins; ++b) edges[b] = s.bin_width() * b;
  py::dict d;
  d["histogram"] = to_numpy(std::vector<int64_t>(s.histogram()), {TensorStats::kBins});
  d["bin_edges"] = to_numpy(std::move(edges), {TensorStats::kBins + 1});
  d["bin_width"] = s.bin_width();
  d["count"] = s.count();
  d["min"] = s.min();
  d["max"] = s.max();
  d["abs_max"] = s.abs_max();
  d["mean"] = s.mean();
  d["std"] = s.std();
  return d;
}

// ---------------------------------------------------------------- checkpoints

class PyCheckpoint {
 public:
  PyCheckpoint(std::string path, Checkpoint checkpoint)
      : path_(std::move(path)),
        checkpoint_(std::move(checkpoint)),
        folded_(fold_for_inference(checkpoint_.graph, checkpoint_.params)),
        executor_(folded_) {}

  const std::string& path() const { return path_; }
  const Checkpoint& checkpoint() const { return checkpoint_; }
  const FloatModel& folded() const { return folded_; }
  const FloatExecutor& executor() const { return executor_; }
  ActShape input() const { return executor_.shapes()[0]; }
  int64_t classes() const { return executor_.shapes().back().numel(); }

 private:
  std::string path_;
  Checkpoint checkpoint_;
  FloatModel folded_;  // batch norms folded: the weights calibration and quantization see
  FloatExecutor executor_;
};

std::shared_ptr<PyCheckpoint> load_checkpoint_py(const std::string& path) {
  py::gil_scoped_release release;
  return std::make_shared<PyCheckpoint>(path, load_checkpoint(path));
}

py::array_t<float> float_predict(const PyCheckpoint& c, const py::handle& images, int64_t batch_size) {
  check_batch_size(batch_size);
  const auto x = image_batch(images, c.input());
  const int64_t n = x.shape(0), numel = c.input().numel(), classes = c.classes();
  std::vector<float> logits(static_cast<size_t>(n * classes));
  {
    py::gil_scoped_release release;
    for (int64_t first = 0; first < n; first += batch_size) {
      const int64_t count = std::min(batch_size, n - first);
      const FloatTensor batch_logits = c.executor().run(x.data() + first * numel, count);
      std::copy(batch_logits.data.begin(), batch_logits.data.end(), logits.begin() + first * classes);
    }
  }
  return to_numpy(std::move(logits), {n, classes});
}

py::dict float_activations(const PyCheckpoint& c, const py::handle& images) {
  const auto x = image_batch(images, c.input());
  const int64_t n = x.shape(0);
  const Graph& g = c.executor().graph();
  const std::vector<ActShape>& shapes = c.executor().shapes();
  std::vector<std::vector<float>> values(g.nodes.size());
  {
    py::gil_scoped_release release;
    c.executor().run(x.data(), n, [&](int node, FloatTensor& act) {
      values[node] = node_output_nchw(g, shapes, node, act.ptr(), n);
    });
  }
  return activations_dict(g, shapes, values, n);
}

// ----------------------------------------------------------- quantized models

class PyQuantized {
 public:
  explicit PyQuantized(QuantizedModel model) : model_(std::move(model)), shapes_(model_.graph.shapes()) {}

  const QuantizedModel& model() const { return model_; }
  const std::vector<ActShape>& shapes() const { return shapes_; }
  ActShape input() const { return shapes_[0]; }

  // The int32 logits of `batch` images on `backend`; its engine is made on
  // first use and kept. Called without the GIL.
  std::vector<int32_t> run(const float* x, int64_t batch, int64_t batch_size, const std::string& backend) {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::unique_ptr<Engine>& engine = engines_[backend];
    if (!engine) engine = make_engine(model_, backend);
    const int64_t numel = input().numel(), classes = model_.num_classes();
    std::vector<int32_t> logits(static_cast<size_t>(batch * classes));
    for (int64_t first = 0; first < batch; first += batch_size) {
      const int64_t count = std::min(batch_size, batch - first);
      const Int32Tensor batch_logits = engine->run(x + first * numel, count);
      std::copy(batch_logits.data.begin(), batch_logits.data.end(), logits.begin() + first * classes);
    }
    return logits;
  }

  // The CPU reference engine, which reports every node's int8 output. Called without the GIL.
  const CpuEngine& cpu_engine() {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!cpu_engine_) cpu_engine_ = std::make_unique<CpuEngine>(model_);
    return *cpu_engine_;
  }

 private:
  QuantizedModel model_;
  std::vector<ActShape> shapes_;
  std::mutex mutex_;  // engines may keep per-run state (device buffers)
  std::map<std::string, std::unique_ptr<Engine>> engines_;
  std::unique_ptr<CpuEngine> cpu_engine_;
};

std::shared_ptr<PyQuantized> load_quantized_py(const std::string& path) {
  py::gil_scoped_release release;
  return std::make_shared<PyQuantized>(load_quantized_model(path));  // validated by the loader
}

// int32 logits acc * logit_scale[class]: the float logits the int8 model stands for.
std::vector<float> dequantized(const QuantizedModel& m, const int32_t* logits, int64_t count) {
  const std::vector<float>& scale = m.quant[m.output()].logit_scale.data;
  std::vector<float> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(logits[i]) * scale[i % scale.size()];
  return out;
}

py::array int8_predict(PyQuantized& q, const py::handle& images, const std::string& backend, int64_t batch_size,
                       bool dequantize) {
  check_batch_size(batch_size);
  const auto x = image_batch(images, q.input());
  const int64_t n = x.shape(0), classes = q.model().num_classes();
  std::vector<int32_t> logits;
  {
    py::gil_scoped_release release;
    logits = q.run(x.data(), n, batch_size, backend);
  }
  if (dequantize) return to_numpy(dequantized(q.model(), logits.data(), n * classes), {n, classes});
  return to_numpy(std::move(logits), {n, classes});
}

py::dict int8_activations(PyQuantized& q, const py::handle& images) {
  const auto x = image_batch(images, q.input());
  const int64_t n = x.shape(0);
  const Graph& g = q.model().graph;
  std::vector<std::vector<int8_t>> values(g.nodes.size());
  {
    py::gil_scoped_release release;
    q.cpu_engine().run(x.data(), n, [&](int node, const int8_t* v, int64_t) {
      values[node] = node_output_nchw(g, q.shapes(), node, v, n);
    });
  }
  return activations_dict(g, q.shapes(), values, n);
}

py::array_t<float> dequantize_logits(const PyQuantized& q, const py::handle& logits) {
  const int64_t classes = q.model().num_classes();
  const auto l = logit_batch(logits, classes);
  return to_numpy(dequantized(q.model(), l.data(), l.size()), {l.shape(0), classes});
}

py::list quantized_layers(const PyQuantized& q) {
  py::list layers = graph_layers(q.model().graph);
  for (size_t i = 0; i < q.model().quant.size(); ++i) {
    const NodeQuant& nq = q.model().quant[i];
    py::dict d = layers[i];
    d["scale"] = nq.scale;
    d["amax"] = nq.amax;
    d["method"] = nq.method;
  }
  return layers;
}

const NodeQuant& weighted_quant(const PyQuantized& q, const std::string& layer) {
  const Node& n = weighted_node(q.model().graph, layer);
  return q.model().quant[q.model().graph.find(n.name)];
}

py::array_t<float> dequantized_weight(const PyQuantized& q, const std::string& layer) {
  const NodeQuant& nq = weighted_quant(q, layer);
  const int64_t per_channel = nq.weight.numel() / nq.weight.dim(0);
  std::vector<float> w(nq.weight.data.size());
  for (size_t k = 0; k < w.size(); ++k) w[k] = nq.weight.data[k] / nq.weight_scale.data[k / per_channel];
  return to_numpy(std::move(w), std::vector<py::ssize_t>(nq.weight.shape.begin(), nq.weight.shape.end()));
}

// ---------------------------------------------------------------- quantization

struct PyQuantizeResult {
  std::shared_ptr<PyQuantized> model;
  Calibration calibration;  // statistics per node of `float_graph`
  Graph float_graph;        // the folded float inference graph
};

std::shared_ptr<PyQuantizeResult> quantize_py(const PyCheckpoint& c, const std::optional<std::string>& data_dir,
                                              const std::string& method, const std::string& granularity,
                                              const std::string& scheme, const std::string& weight_rounding,
                                              double percentile, int64_t calib_samples) {
  // The same mapping as the command line's options (tools/options.h).
  QuantizeCliOptions cli;
  cli.method = method;
  cli.granularity = granularity;
  cli.scheme = scheme;
  cli.weight_rounding = weight_rounding;
  cli.percentile = percentile;
  cli.calibration_samples = calib_samples;
  py::gil_scoped_release release;
  QuantizeResult r = quantize_checkpoint(c.checkpoint(), data_dir.value_or(""), cli.options(), cli.calibration_samples);
  auto result = std::make_shared<PyQuantizeResult>();
  result->model = std::make_shared<PyQuantized>(std::move(r.model));
  result->calibration = std::move(r.calibration);
  result->calibration.images = {};  // only `auto` needs them, and it has run
  result->float_graph = std::move(r.folded.graph);
  return result;
}

// One dict per quantization point (a tensor with a scale of its own), in graph
// order: its name, op, chosen amax, scale and method, and the calibration
// statistics of the float tensor it quantizes.
py::list quantization_points(const PyQuantizeResult& r) {
  const QuantizedModel& qm = r.model->model();
  const std::vector<int> counterpart = float_counterparts(r.float_graph, qm.graph);
  py::list points;
  for (size_t i = 0; i < qm.graph.nodes.size(); ++i) {
    const NodeQuant& q = qm.quant[i];
    if (q.method.empty() || q.method == "inherited") continue;
    const int f = counterpart[i];
    check(f >= 0, "quantization point '" + qm.graph.nodes[i].name + "' has no float tensor in the calibration");
    py::dict d = stats_dict(r.calibration.stats[f]);
    d["name"] = qm.graph.nodes[i].name;
    d["op"] = op_name(qm.graph.nodes[i].op);
    d["float_node"] = r.float_graph.nodes[f].name;
    d["amax"] = q.amax;
    d["scale"] = q.scale;
    d["method"] = q.method;
    points.append(d);
  }
  return points;
}

py::dict node_stats(const PyQuantizeResult& r, const std::string& name) {
  const int f = r.float_graph.find(name);
  if (f < 0) {
    std::string known;
    for (const Node& n : r.float_graph.nodes) known += (known.empty() ? "" : ", ") + n.name;
    fail("no node '" + name + "' in the float inference graph (nodes: " + known + ")");
  }
  return stats_dict(r.calibration.stats[f]);
}

// ------------------------------------------------------------------ evaluation

py::dict evaluate_py(const PyCheckpoint& c, PyQuantized& q, const std::optional<std::string>& data_dir,
                     int64_t limit, bool layers, int64_t batch_size) {
  check_batch_size(batch_size);
  const QuantizedModel& qm = q.model();
  check(c.checkpoint().dataset == qm.dataset && c.checkpoint().model == qm.model,
        "the checkpoint is " + c.checkpoint().model + " on " + c.checkpoint().dataset + " but the quantized model is " +
            qm.model + " on " + qm.dataset);
  EvalReport report;
  {
    py::gil_scoped_release release;
    const Dataset test = load_dataset(qm.dataset, resolve_data_dir(qm.dataset, data_dir.value_or("")), Split::Test);
    report = evaluate(c.executor(), q.cpu_engine(), test, limit, layers, batch_size);
  }
  py::list layer_list;
  for (const LayerReport& l : report.layers) {
    py::dict d;
    d["name"] = l.name;
    d["op"] = l.op;
    d["scale"] = l.scale;
    d["amax"] = l.amax;
    d["method"] = l.method;
    d["sqnr_db"] = l.sqnr_db;
    layer_list.append(d);
  }
  py::dict d;
  d["images"] = report.images;
  d["float_top1"] = report.float_top1;
  d["int8_top1"] = report.int8_top1;
  d["top1_difference"] = report.int8_top1 - report.float_top1;
  d["agreement"] = report.agreement;
  d["float_seconds"] = report.float_seconds;
  d["int8_seconds"] = report.int8_seconds;
  d["layers"] = layer_list;
  return d;
}

}  // namespace

void bind_models(py::module_& m) {
  m.def("backends", &engine_backends, "The int8 inference backends this build has: 'cpu', and the CUDA ones when built with CUDA.");

  py::class_<PyCheckpoint, std::shared_ptr<PyCheckpoint>>(
      m, "Checkpoint", "A float checkpoint (octet train, or the zoo) and its float inference model (batch norms folded).")
      .def_property_readonly("path", &PyCheckpoint::path)
      .def_property_readonly("model", [](const PyCheckpoint& c) { return c.checkpoint().model; })
      .def_property_readonly("dataset", [](const PyCheckpoint& c) { return c.checkpoint().dataset; })
      .def_property_readonly("classes", [](const PyCheckpoint& c) { return c.checkpoint().classes; })
      .def_property_readonly("mean", [](const PyCheckpoint& c) { return c.checkpoint().mean; })
      .def_property_readonly("std", [](const PyCheckpoint& c) { return c.checkpoint().std; })
      .def_property_readonly("batch_norm", [](const PyCheckpoint& c) { return c.checkpoint().batch_norm; })
      .def_property_readonly(
          "training",
          [](const PyCheckpoint& c) { return py::module_::import("json").attr("loads")(c.checkpoint().training_json); },
          "How the checkpoint was trained (options, results), as a dict.")
      .def_property_readonly("input_shape", [](const PyCheckpoint& c) { return shape_of(c.input()); },
                             "(C, H, W) of one input image.")
      .def_property_readonly("num_classes", &PyCheckpoint::classes)
      .def_property_readonly("layers", [](const PyCheckpoint& c) { return graph_layers(c.folded().graph); },
                             "The float inference graph: one dict per node (name, op, inputs, shape, relu).")
      .def_property_readonly(
          "params",
          [](const PyCheckpoint& c) {
            py::dict params;
            for (const auto& [name, tensor] : c.checkpoint().params) params[py::str(name)] = to_numpy(tensor);
            return params;
          },
          "The checkpoint's parameters as stored (torch layouts, batch norms not folded), by name.")
      .def(
          "weight",
          [](const PyCheckpoint& c, const std::string& layer) {
            return to_numpy(c.folded().weight(weighted_node(c.folded().graph, layer)));
          },
          py::arg("layer"),
          "Float weight of a conv or linear layer as quantization sees it (batch norm folded; conv O x I x KH x KW, "
          "linear O x I).")
      .def(
          "bias",
          [](const PyCheckpoint& c, const std::string& layer) {
            return to_numpy(c.folded().bias(weighted_node(c.folded().graph, layer)));
          },
          py::arg("layer"), "Float bias of a conv or linear layer (batch norm folded).")
      .def("predict", &float_predict, py::arg("images"), py::arg("batch_size") = kDefaultBatch,
           "Float logits [N, classes] of normalised float32 images [N, C, H, W].")
      .def("activations", &float_activations, py::arg("images"),
           "Every node's float output for a batch of images, by node name (N x C x H x W, or N x F).")
      .def("__repr__", [](const PyCheckpoint& c) {
        return "<octet.Checkpoint " + c.checkpoint().model + " on " + c.checkpoint().dataset + " from '" + c.path() +
               "'>";
      });

  m.def("load_checkpoint", &load_checkpoint_py, py::arg("path"), "Loads a float checkpoint (.octet).");

  py::class_<PyQuantized, std::shared_ptr<PyQuantized>>(
      m, "QuantizedModel", "An int8 model: int8 weights, int32 biases, one scale per activation tensor.")
      .def_property_readonly("model", [](const PyQuantized& q) { return q.model().model; })
      .def_property_readonly("dataset", [](const PyQuantized& q) { return q.model().dataset; })
      .def_property_readonly("classes", [](const PyQuantized& q) { return q.model().classes; })
      .def_property_readonly("mean", [](const PyQuantized& q) { return q.model().mean; })
      .def_property_readonly("std", [](const PyQuantized& q) { return q.model().std; })
      .def_property_readonly("method", [](const PyQuantized& q) { return q.model().method; })
      .def_property_readonly("granularity", [](const PyQuantized& q) { return q.model().granularity; })
      .def_property_readonly("scheme", [](const PyQuantized& q) { return q.model().scheme; })
      .def_property_readonly("weight_rounding", [](const PyQuantized& q) { return q.model().weight_rounding; })
      .def_property_readonly("calibration_samples", [](const PyQuantized& q) { return q.model().calibration_samples; })
      .def_property_readonly("input_shape", [](const PyQuantized& q) { return shape_of(q.input()); })
      .def_property_readonly("num_classes", [](const PyQuantized& q) { return q.model().num_classes(); })
      .def_property_readonly("layers", &quantized_layers,
                             "One dict per node (name, op, inputs, shape, relu, scale, amax, method).")
      .def_property_readonly(
          "logit_scale",
          [](const PyQuantized& q) { return to_numpy(q.model().quant[q.model().output()].logit_scale); },
          "Per class: float logit = int32 logit * logit_scale.")
      .def(
          "weight", [](const PyQuantized& q, const std::string& layer) { return to_numpy(weighted_quant(q, layer).weight); },
          py::arg("layer"), "int8 weight of a conv or linear layer (torch layout: conv O x I x KH x KW, linear O x I).")
      .def(
          "weight_scale",
          [](const PyQuantized& q, const std::string& layer) { return to_numpy(weighted_quant(q, layer).weight_scale); },
          py::arg("layer"), "Per output channel: int8 weight = round(float weight * weight_scale).")
      .def(
          "bias", [](const PyQuantized& q, const std::string& layer) { return to_numpy(weighted_quant(q, layer).bias); },
          py::arg("layer"), "int32 bias of a conv or linear layer (at scale input scale * weight scale).")
      .def("dequantized_weight", &dequantized_weight, py::arg("layer"),
           "The float values the int8 weight stands for: weight / weight_scale per output channel.")
      .def("predict", &int8_predict, py::arg("images"), py::arg("backend") = "cpu",
           py::arg("batch_size") = kDefaultBatch, py::arg("dequantize") = false,
           "int32 logits [N, classes] of normalised float32 images [N, C, H, W] on a backend "
           "('cpu', 'cuda' for the GPU's default, 'cuda-imma', 'cuda-dp4a', 'cuda-cublaslt'; see octet.backends()). Each class's int32 logit has its own "
           "scale (per-channel weights): take the argmax of dequantize=True's float32 logits (int32 * logit_scale).")
      .def("dequantize_logits", &dequantize_logits, py::arg("logits"),
           "int32 logits [N, classes] -> float32 logits (times logit_scale).")
      .def("activations", &int8_activations, py::arg("images"),
           "Every node's int8 output on the CPU runtime, by node name (N x C x H x W, or N x F); not the logits.")
      .def(
          "save",
          [](const PyQuantized& q, const std::string& path) {
            py::gil_scoped_release release;
            save_quantized_model(q.model(), path);
          },
          py::arg("path"), "Writes the quantized model file (atomically).")
      .def("__repr__", [](const PyQuantized& q) {
        const QuantizedModel& m = q.model();
        return "<octet.QuantizedModel " + m.model + " on " + m.dataset + ", " + m.method + ", " + m.granularity + ", " +
               m.scheme + " scheme, " + m.weight_rounding + " weight rounding>";
      });

  m.def("load_quantized", &load_quantized_py, py::arg("path"), "Loads a quantized model file (octet quantize).");

  py::class_<PyQuantizeResult, std::shared_ptr<PyQuantizeResult>>(
      m, "QuantizeResult", "A quantized model with the calibration statistics its scales were chosen from.")
      .def_property_readonly("model", [](const PyQuantizeResult& r) { return r.model; })
      .def_property_readonly("calibration_samples", [](const PyQuantizeResult& r) { return r.calibration.samples; })
      .def_property_readonly("points", &quantization_points,
                             "One dict per quantization point: name, op, float_node, amax, scale, method, and the "
                             "calibration statistics (histogram of |x|, bin_edges, bin_width, count, min, max, "
                             "abs_max, mean, std).")
      .def("stats", &node_stats, py::arg("node"),
           "Calibration statistics of any node of the float inference graph (same keys as a point's).")
      .def("__repr__", [](const PyQuantizeResult& r) {
        return "<octet.QuantizeResult " + r.model->model().model + ", " + r.model->model().method + ", " +
               std::to_string(r.calibration.samples) + " calibration images>";
      });

  m.def("quantize", &quantize_py, py::arg("checkpoint"), py::kw_only(), py::arg("data_dir") = py::none(),
        py::arg("method") = "auto", py::arg("granularity") = "per-channel", py::arg("scheme") = "octet",
        py::arg("weight_rounding") = "gptq", py::arg("percentile") = 99.99, py::arg("calib_samples") = 1024,
        "Calibrates on training images and quantizes, with the options of `octet quantize`: method (max, sigma3, "
        "percentile, entropy, mse, auto), granularity (per-channel, per-tensor), scheme (octet, lab), "
        "weight_rounding (gptq, nearest), percentile, calib_samples. data_dir: the folder holding the dataset "
        "(default: the dataset's Debian folder).");

  m.def("evaluate", &evaluate_py, py::arg("checkpoint"), py::arg("quantized"), py::kw_only(),
        py::arg("data_dir") = py::none(), py::arg("limit") = 0, py::arg("layers") = true, py::arg("batch_size") = 250,
        "Float vs int8 (CPU) on the test set, as `octet eval`: a dict with images, float_top1, int8_top1, "
        "top1_difference, agreement (percent), float_seconds, int8_seconds and layers, the per-layer SQNR report "
        "(a list of dicts: name, op, scale, amax, method, sqnr_db). limit: the first N test images (0: all).");
}

}  // namespace octet::python
