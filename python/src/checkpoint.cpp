// Float checkpoints for Python: loading, float inference, activations. Long
// calls run with the GIL released; they read only C++ data and the numpy
// buffers the caller passed in, which the caller keeps alive.
#include <pybind11/stl.h>

#include <algorithm>

#include "python/src/arrays.h"
#include "python/src/handles.h"
#include "python/src/module.h"
#include "python/src/views.h"
#include "graph/output_decode.h"

namespace octet::python {

namespace {

std::shared_ptr<PyCheckpoint> load_checkpoint_py(const std::string& path) {
  py::gil_scoped_release release;
  return std::make_shared<PyCheckpoint>(path, load_checkpoint(path));
}

// A model's one output as an array, several as a tuple of them (as PyTorch returns a model's tuple).
py::object float_predict(const PyCheckpoint& c, const py::handle& images, int64_t batch_size) {
  check_batch_size(batch_size);
  const auto x = image_batch(images, c.input());
  const int64_t n = x.shape(0), numel = c.input().numel();
  const Graph& g = c.executor().graph();
  const std::vector<ActShape>& shapes = c.executor().shapes();
  std::vector<std::vector<float>> logits;
  for (int o : g.outputs()) logits.emplace_back(static_cast<size_t>(n * shapes[o].numel()));
  {
    py::gil_scoped_release release;
    for (int64_t first = 0; first < n; first += batch_size) {
      const int64_t count = std::min(batch_size, n - first);
      const std::vector<FloatTensor> batch_logits = c.executor().run_outputs(x.data() + first * numel, count);
      for (size_t k = 0; k < logits.size(); ++k)
        std::copy(batch_logits[k].data.begin(), batch_logits[k].data.end(),
                  logits[k].begin() + first * batch_logits[k].numel() / count);
    }
  }
  decode_outputs(g, shapes, logits, n);
  return model_outputs_object(g, shapes, logits, n);
}

py::dict float_activations(const PyCheckpoint& c, const py::handle& images) {
  const auto x = image_batch(images, c.input());
  const int64_t n = x.shape(0);
  const Graph& g = c.executor().graph();
  const std::vector<ActShape>& shapes = c.executor().shapes();
  std::vector<std::vector<float>> values(g.nodes.size());
  {
    py::gil_scoped_release release;
    c.executor().run(x.data(), n, [&](int node, const FloatTensor& act) {
      values[node] = node_output_nchw(g, shapes, node, act.ptr(), n);
    });
  }
  return activations_dict(g, shapes, values, n);
}

}  // namespace

void bind_checkpoint(py::module_& m) {
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
      .def_property_readonly("outputs", [](const PyCheckpoint& c) { return graph_outputs(c.folded().graph); },
                             "The model's outputs, in order: dicts of name, shape per image ((classes,), (classes, H, "
                             "W), or a detection head's (rows, K)), nodes (its output convs) and decode "
                             "('yolov5' where predict decodes YOLOv5's boxes and scores, else None); predict "
                             "returns a tuple where there are several.")
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
      .def(
          "save",
          [](const PyCheckpoint& c, const std::string& path) {
            py::gil_scoped_release release;
            save_checkpoint(c.checkpoint(), path);
          },
          py::arg("path"), "Writes the checkpoint (.octet) to path.")
      .def("predict", &float_predict, py::arg("images"), py::arg("batch_size") = kDefaultBatch,
           "Float logits [N, classes] (a model returning an image of them: [N, classes, H, W]) of normalised "
           "float32 images [N, C, H, W]; a model of several outputs returns a tuple of them, in its order; a detection "
           "head's outputs are its rows, as PyTorch returns them ([N, rows, K]; see outputs), decoded where the model "
           "decodes them (YOLOv5's boxes and scores).")
      .def("activations", &float_activations, py::arg("images"),
           "Every node's float output for a batch of images, by node name (N x C x H x W, or N x F).")
      .def("__repr__", [](const PyCheckpoint& c) {
        return "<octet.Checkpoint " + c.checkpoint().model + " on " + c.checkpoint().dataset + " from '" + c.path() +
               "'>";
      });

  m.def("load_checkpoint", &load_checkpoint_py, py::arg("path"), "Loads a float checkpoint (.octet).");
}

}  // namespace octet::python
