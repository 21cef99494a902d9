// Quantization for Python: `octet.quantize` with the command line's options,
// and the calibration statistics the scales were chosen from.
#include <pybind11/stl.h>

#include <optional>

#include "common/error.h"
#include "evaluate/evaluate.h"
#include "python/src/arrays.h"
#include "python/src/handles.h"
#include "python/src/module.h"
#include "python/src/user_images.h"
#include "python/src/views.h"
#include "qmodel/checkpoint_identity.h"
#include "quant/accuracy_target.h"
#include "quant/equalize.h"
#include "quant/pipeline.h"

namespace octet::python {

namespace {

struct PyQuantizeResult {
  std::shared_ptr<PyQuantized> model;
  Calibration calibration;  // statistics per node of `float_graph`
  Graph float_graph;        // the folded float inference graph
  py::object accuracy_target = py::none();  // the accuracy target's search, as a dict
};

// Where the calibration images (and --min-agreement's validation split) come
// from: an array of model inputs already normalised, or files as `files`
// says (the dataset's, or a calib_data folder or .npy).
struct CalibrationSource {
  std::optional<Dataset> array;
  DataOptions files;
};

CalibrationSource calibration_source(const PyCheckpoint& c, const std::optional<std::string>& data_dir,
                                     const py::object& calib_data, const py::object& calib_list, int resize,
                                     int crop) {
  CalibrationSource source{std::nullopt, DataOptions(data_dir.value_or(""))};
  if (!calib_data.is_none() && !is_path(calib_data)) {
    check(resize == 0 && crop == 0, "resize and crop apply to a folder of images, not to an array of model inputs");
    check(calib_list.is_none(), "calib_list names images of a folder, not of an array of model inputs");
    source.array = array_dataset(calib_data, py::none(), c.input(), static_cast<int>(c.classes()));
  } else if (!calib_data.is_none()) {
    source.files.calib = image_source(calib_data, py::none(), resize, crop, calib_list);
  }
  check(calib_list.is_none() || !calib_data.is_none(), "calib_list goes with calib_data (the folder of its images)");
  return source;
}

// The split --min-agreement scores on: val_samples training images half-way
// between the calib_samples calibration ones. Needs no GIL.
Dataset validation_images(const PyCheckpoint& c, const CalibrationSource& source, int64_t calib_samples,
                          int64_t val_samples) {
  const auto split = [&](int64_t size) { return validation_indices(size, val_samples, calib_samples); };
  if (!source.array) return load_validation_images(model_input(c.checkpoint()), source.files, split);
  Dataset validation = *source.array;
  validation.inputs = normalized_images(*source.array, {}, {}, split(source.array->size()));
  return validation;
}

std::shared_ptr<PyQuantizeResult> quantize_py(const PyCheckpoint& c, const std::optional<std::string>& data_dir,
                                              const py::object& calib_data, const py::object& calib_list,
                                              int resize, int crop, const std::optional<std::string>& method,
                                              const std::string& granularity, const std::string& scheme,
                                              const std::optional<std::string>& weight_rounding,
                                              double percentile, int64_t calib_samples,
                                              const std::vector<std::string>& float_nodes,
                                              std::optional<double> min_agreement, std::optional<double> max_drop,
                                              int64_t val_samples, bool equalize, bool bias_correction,
                                              const std::string& activations, int wide_bits) {
  NamedQuantizeOptions named;  // the same names as the command line's options
  named.method = method.value_or("");  // None: the network's default (NamedQuantizeOptions)
  named.granularity = granularity;
  named.scheme = scheme;
  named.weight_rounding = weight_rounding.value_or("");
  named.percentile = percentile;
  named.calibration_samples = calib_samples;
  named.float_nodes = float_nodes;
  named.equalize = equalize;
  named.bias_correction = bias_correction;
  named.activations = activations;
  named.wide_bits = wide_bits;
  const QuantizeOptions options = named.options(c.checkpoint());
  AccuracyTarget target;
  target.min_agreement = min_agreement.value_or(-1);
  target.max_drop = max_drop.value_or(-1);
  const CalibrationSource source = calibration_source(c, data_dir, calib_data, calib_list, resize, crop);
  QuantizeResult r;
  std::optional<TargetResult> reached;
  {
    py::gil_scoped_release release;
    if (source.array)  // an array of model inputs: evenly spaced ones, as from files
      r = quantize_checkpoint_on(c.checkpoint(),
                                 normalized_images(*source.array, {}, {},
                                                   calibration_indices(source.array->size(), calib_samples)),
                                 options);
    else
      r = quantize_checkpoint(c.checkpoint(), source.files, options, calib_samples);
    if (target.set())
      reached = quantize_to_target(r.model, r.folded, validation_images(c, source, calib_samples, val_samples), target);
  }
  auto result = std::make_shared<PyQuantizeResult>();
  if (reached) {
    r.model = std::move(reached->model);
    result->accuracy_target = py::module_::import("json").attr("loads")(target_json(*reached, target).dump());
  }
  result->model = std::make_shared<PyQuantized>(std::move(r.model));
  result->calibration = std::move(r.calibration);
  result->calibration.images = {};  // only `auto` needs them, and it has run
  result->float_graph = std::move(r.folded.graph);
  return result;
}

// Each weighted layer's sensitivity on the validation split that
// quantize(min_agreement=...) scores on: one dict per layer, as
// accuracy_target["sensitivity"] has them.
py::object sensitivity_py(const PyCheckpoint& c, const PyQuantized& q, const std::optional<std::string>& data_dir,
                        const py::object& calib_data, const py::object& calib_list, int resize, int crop,
                        int64_t calib_samples,
                        int64_t val_samples) {
  const QuantizedModel& qm = q.model();
  check_quantized_from(qm, "the quantized model", c.checkpoint(), "'" + c.path() + "'");
  const std::optional<FloatModel> equalized = equalized_reference(c.folded(), qm);
  const FloatModel& folded = equalized ? *equalized : c.folded();
  const CalibrationSource source = calibration_source(c, data_dir, calib_data, calib_list, resize, crop);
  std::vector<LayerSensitivity> layers;
  {
    py::gil_scoped_release release;
    layers = layer_sensitivity(qm, folded, validation_images(c, source, calib_samples, val_samples));
  }
  return py::module_::import("json").attr("loads")(sensitivity_json(layers).dump());
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

}  // namespace

void bind_quantize(py::module_& m) {
  py::class_<PyQuantizeResult, std::shared_ptr<PyQuantizeResult>>(
      m, "QuantizeResult", "A quantized model with the calibration statistics its scales were chosen from.")
      .def_property_readonly("model", [](const PyQuantizeResult& r) { return r.model; })
      .def_property_readonly("calibration_samples", [](const PyQuantizeResult& r) { return r.calibration.samples; })
      .def_property_readonly("accuracy_target", [](const PyQuantizeResult& r) { return r.accuracy_target; },
                             "With min_agreement or max_drop: the search as `octet quantize --json` gives it (met, "
                             "all_int8, chosen, float_layers, and the per-layer sensitivity list: agreement with "
                             "the layer alone in float and alone in int8); else None.")
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

  m.def("sensitivity", &sensitivity_py, py::arg("checkpoint"), py::arg("quantized"), py::kw_only(),
        py::arg("data_dir") = py::none(), py::arg("calib_data") = py::none(), py::arg("calib_list") = py::none(),
        py::arg("resize") = 0, py::arg("crop") = 0, py::arg("calib_samples") = 1024, py::arg("val_samples") = 1000,
        "Each weighted layer's cost in int8 (all but the output, in graph order): a list of dicts with name, op, "
        "mac_share, agreement_only_it_float (percent of validation images where the model with only this layer in "
        "float agrees with float) and agreement_only_it_int8 (only this layer in int8, every other weighted layer in "
        "float). The validation images are those quantize(min_agreement=...) scores on: val_samples training images "
        "half-way between the calib_samples calibration ones (never the test set), from data_dir or calib_data as "
        "quantize() takes them. octet.sensitivity_table() prints it.");
  m.def("quantize", &quantize_py, py::arg("checkpoint"), py::kw_only(), py::arg("data_dir") = py::none(),
        py::arg("calib_data") = py::none(), py::arg("calib_list") = py::none(), py::arg("resize") = 0,
        py::arg("crop") = 0, py::arg("method") = py::none(),
        py::arg("granularity") = "per-channel", py::arg("scheme") = "octet",
        py::arg("weight_rounding") = py::none(), py::arg("percentile") = 99.99, py::arg("calib_samples") = 1024,
        py::arg("float_nodes") = std::vector<std::string>(), py::arg("min_agreement") = py::none(),
        py::arg("max_drop") = py::none(), py::arg("val_samples") = 1000, py::arg("equalize") = false,
        py::arg("bias_correction") = false, py::arg("activations") = NamedQuantizeOptions{}.activations,
        py::arg("wide_bits") = NamedQuantizeOptions{}.wide_bits,
        "Calibrates on training images and quantizes, with the options of `octet quantize`: method (max, sigma3, "
        "percentile, entropy, mse, auto, auto-global), granularity (per-channel, per-tensor), scheme (octet, lab), "
        "weight_rounding (gptq, nearest; method and weight_rounding None: auto and gptq, or auto-global and nearest "
        "where "
        "the calibration pass exceeds 200 G multiply-adds, as the command line's defaults), percentile, "
        "calib_samples, float_nodes (names of nodes to keep in float, as --float-nodes: mixed precision, run by the "
        "cpu backend), min_agreement, max_drop and val_samples (an accuracy "
        "target, as --min-agreement: the result's accuracy_target tells whether it was met), equalize and "
        "bias_correction (as --equalize and --bias-correction), activations (unsigned: a tensor that cannot be "
        "negative stored as uint8, or signed; as --activations; default '': unsigned, signed with scheme lab; an "
        "unsigned model runs on the cpu backend), wide_bits (as --wide-bits: up to this many bits, stored as int16, "
        "for signed conv outputs read only by dense convs; 8: none; 0: the default, 16, or 8 with scheme lab; run "
        "by the cpu backend). data_dir: the folder "
        "holding the dataset (default: the dataset's Debian folder). calib_data: your own calibration images "
        "instead, as `octet quantize --calib-data`: a folder in torchvision's ImageFolder layout (JPEG/PNG; resize "
        "and crop as --resize and --crop, normalised as the checkpoint says) or a .npy path, or a float32 array N x "
        "C x H x W of model inputs already normalised; calib_samples of them, evenly spaced. calib_list: a text "
        "file naming the images of the calib_data folder to read, as --calib-list.");
}

}  // namespace octet::python
