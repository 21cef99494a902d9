// Quantized models for Python: loading, int8 inference on any backend,
// activations, weights and scales. Long calls run with the GIL released.
#include <pybind11/stl.h>

#include <algorithm>

#include "python/src/arrays.h"
#include "qmodel/output_floats.h"
#include "qmodel/precision.h"
#include "python/src/handles.h"
#include "python/src/module.h"
#include "python/src/views.h"
#include "graph/output_decode.h"

namespace octet::python {

namespace {

std::shared_ptr<PyQuantized> load_quantized_py(const std::string& path) {
  py::gil_scoped_release release;
  return std::make_shared<PyQuantized>(load_quantized_model(path));  // validated by the loader
}

// int32 logits acc * scale[class] (an output's logit_scale): the float logits the int8 model stands for.
std::vector<float> dequantized(const std::vector<float>& scale, const int32_t* logits, int64_t count) {
  std::vector<float> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(logits[i]) * scale[i % scale.size()];
  return out;
}

// A model's one output as an array, several as a tuple of them (as PyTorch returns a model's tuple).
py::object int8_predict(PyQuantized& q, const py::handle& images, const std::string& backend, int64_t batch_size,
                        bool dequantize) {
  check_batch_size(batch_size);
  const auto x = image_batch(images, q.input());
  const int64_t n = x.shape(0);
  std::vector<std::vector<int32_t>> logits;
  {
    py::gil_scoped_release release;
    logits = q.run(x.data(), n, batch_size, backend);
  }
  const Graph& g = q.model().graph;
  if (!dequantize) {
    if (has_decoded_outputs(g))
      fail("the model's outputs are decoded as " + decode_title(decode_name(g)) +
           " (boxes in pixels, sigmoids), in float: predict(images, dequantize=True)");
    return model_outputs_object(g, q.shapes(), logits, n);
  }
  return model_outputs_object(g, q.shapes(), output_floats(q.model(), q.shapes(), logits, n), n);
}

py::dict int8_activations(PyQuantized& q, const py::handle& images, const std::string& backend) {
  const auto x = image_batch(images, q.input());
  const int64_t n = x.shape(0);
  const Graph& g = q.model().graph;
  std::vector<std::vector<int8_t>> values(g.nodes.size());
  {
    py::gil_scoped_release release;
    q.engine(backend).run(x.data(), n, [&](int node, const int8_t* v, int64_t) {
      values[node] = node_output_nchw(g, q.shapes(), node, v, n);
    });
  }
  return activations_dict(g, q.shapes(), values, n);
}

// The one output's logit scale; a model of several outputs has one per output, which predict applies.
const FloatTensor& logit_scale(const QuantizedModel& m) {
  const std::string predict = ": predict(images, dequantize=True) returns every output dequantized";
  check(!has_output_views(m.graph), "the model returns a detection head's rows, not logits of classes" + predict);
  check(m.graph.output_count == 1,
        "the model has " + std::to_string(m.graph.output_count) + " outputs, each its own logit scale" + predict);
  return m.quant[m.output()].logit_scale;
}

py::array_t<float> dequantize_logits(const PyQuantized& q, const py::handle& logits) {
  const std::vector<float>& scale = logit_scale(q.model()).data;
  const int64_t classes = q.model().num_classes();
  const auto l = logit_batch(logits, classes);
  return to_numpy(dequantized(scale, l.data(), l.size()), {l.shape(0), classes});
}

py::list quantized_layers(const PyQuantized& q) {
  py::list layers = graph_layers(q.model().graph);
  for (size_t i = 0; i < q.model().quant.size(); ++i) {
    const NodeQuant& nq = q.model().quant[i];
    py::dict d = layers[i];
    d["scale"] = nq.scale;
    d["amax"] = nq.amax;
    d["zero_point"] = nq.zero_point;
    d["bits"] = nq.bits;
    d["method"] = nq.method;
  }
  return layers;
}

const NodeQuant& weighted_quant(const PyQuantized& q, const std::string& layer) {
  const Node& n = weighted_node(q.model().graph, layer);
  const NodeQuant& nq = q.model().quant[q.model().graph.find(n.name)];
  check(!nq.in_float, "layer '" + n.name + "' runs in float (float_nodes): it has no int8 weight, bias or scales");
  return nq;
}

py::array_t<float> dequantized_weight(const PyQuantized& q, const std::string& layer) {
  const NodeQuant& nq = weighted_quant(q, layer);
  const int64_t per_channel = nq.weight.numel() / nq.weight.dim(0);
  std::vector<float> w(nq.weight.data.size());
  for (size_t k = 0; k < w.size(); ++k) w[k] = nq.weight.data[k] / nq.weight_scale.data[k / per_channel];
  return to_numpy(std::move(w), std::vector<py::ssize_t>(nq.weight.shape.begin(), nq.weight.shape.end()));
}

}  // namespace

void bind_quantized(py::module_& m) {
  m.def("backends", &engine_backend_names, "The int8 inference backends this build has: 'cpu', and the CUDA ones when built with CUDA.");

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
      .def_property_readonly("equalized", [](const PyQuantized& q) { return q.model().equalized; },
                             "Quantized after cross-layer equalization (quantize(equalize=True), --equalize)")
      .def_property_readonly("bias_corrected", [](const PyQuantized& q) { return q.model().bias_corrected; },
                             "Quantized with bias correction (quantize(bias_correction=True), --bias-correction)")
      .def_property_readonly(
          "float_nodes",
          [](const PyQuantized& q) {
            std::vector<std::string> names;
            for (const PrecisionSummary::FloatNode& n : precision_summary(q.model()).float_nodes) names.push_back(n.name);
            return names;
          },
          "Names of the nodes kept in float (mixed precision); empty when every node is int8.")
      .def_property_readonly(
          "int8_mac_share", [](const PyQuantized& q) { return precision_summary(q.model()).int8_mac_share; },
          "Share of the model's multiply-adds its int8 nodes compute (1.0: all int8).")
      .def_property_readonly(
          "source_checkpoint",
          [](const PyQuantized& q) {
            const CheckpointIdentity& s = q.model().source;
            py::dict d;
            d["model"] = s.model;
            d["params_sha256"] = s.params_sha256;
            d["graph_sha256"] = s.graph_sha256;
            return d;
          },
          "The float checkpoint it was quantized from: model name, SHA-256 of the parameters and of the graph.")
      .def_property_readonly("input_shape", [](const PyQuantized& q) { return shape_of(q.input()); })
      .def_property_readonly("num_classes", [](const PyQuantized& q) { return q.model().num_classes(); })
      .def_property_readonly("outputs", [](const PyQuantized& q) { return graph_outputs(q.model().graph); },
                             "The model's outputs, in order: dicts of name, shape per image ((classes,), (classes, H, "
                             "W), or a detection head's (rows, K)), nodes (its output convs) and decode "
                             "('yolov5' or 'yolov8' where predict decodes YOLO's boxes and scores, else None); predict "
                             "returns a tuple where there are several.")
      .def_property_readonly("layers", &quantized_layers,
                             "One dict per node (name, op, inputs, shape, relu, scale, amax, zero_point, method).")
      .def_property_readonly(
          "logit_scale",
          [](const PyQuantized& q) { return to_numpy(logit_scale(q.model())); },
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
      .def("predict", &int8_predict, py::arg("images"), py::arg("backend") = backend_names::kCpu,
           py::arg("batch_size") = kDefaultBatch, py::arg("dequantize") = false,
           "int32 logits [N, classes] ([N, classes, H, W] from a model returning an image of them; a tuple of "
           "them, in order, from a model of several outputs; a detection head's rows [N, rows, K], see outputs; "
           "YOLO's decoded boxes and scores need dequantize=True) of "
           "normalised "
           "float32 images [N, C, H, W] on a backend "
           "('cpu', 'cuda' for the GPU's default, 'cuda-imma', 'cuda-dp4a', 'cuda-cublaslt'; see octet.backends()). "
           "Each class's int32 logit has its own "
           "scale (per-channel weights): take the argmax of dequantize=True's float32 logits (int32 * logit_scale).")
      .def("dequantize_logits", &dequantize_logits, py::arg("logits"),
           "int32 logits [N, classes] -> float32 logits (times logit_scale).")
      .def("activations", &int8_activations, py::arg("images"), py::kw_only(), py::arg("backend") = backend_names::kCpu,
           "Every node's int8 output on `backend` (octet.backends()), by node name (N x C x H x W, or N x F); "
           "not the logits.")
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
}

}  // namespace octet::python
