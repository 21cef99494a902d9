// `octet.evaluate`: float against int8 on a test set, as `octet eval`.
#include <pybind11/stl.h>

#include <optional>

#include "common/error.h"
#include "data/dataset.h"
#include "evaluate/evaluate.h"
#include "qmodel/checkpoint_identity.h"
#include "quant/pipeline.h"
#include "python/src/handles.h"
#include "python/src/module.h"
#include "python/src/user_images.h"
#include "python/src/views.h"

namespace octet::python {

namespace {

py::dict evaluate_py(const PyCheckpoint& c, PyQuantized& q, const std::optional<std::string>& data_dir,
                     const py::object& eval_data, const py::object& eval_labels, const py::object& eval_list,
                     const std::string& image_suffix, const std::string& mask_suffix, int resize, int crop,
                     int64_t limit, bool layers, int64_t batch_size, const std::string& backend) {
  check_batch_size(batch_size);
  const QuantizedModel& qm = q.model();
  check_quantized_from(qm, "the quantized model", c.checkpoint(), "'" + c.path() + "'");
  // An equalized model's layers compare with the float model it was quantized from.
  const std::optional<FloatModel> equalized = equalized_reference(c.folded(), qm);
  const std::optional<FloatExecutor> reference =
      equalized ? std::optional<FloatExecutor>(std::in_place, *equalized) : std::nullopt;
  const FloatExecutor* layer_reference = reference ? &*reference : nullptr;
  EvalReport report;
  if (!eval_data.is_none() && !is_path(eval_data)) {  // arrays of model inputs and labels
    check(resize == 0 && crop == 0, "resize and crop apply to a folder of images, not to an array of model inputs");
    check(eval_list.is_none() && image_suffix.empty() && mask_suffix.empty(),
          "eval_list, image_suffix and mask_suffix name images and masks of a folder, not of an array");
    const Dataset test = array_dataset(eval_data, eval_labels, q.input(), qm.num_classes());
    py::gil_scoped_release release;
    report = evaluate(c.executor(), q.engine(backend), test, limit, layers, batch_size, layer_reference);
  } else {
    DataOptions data(data_dir.value_or(""));
    if (!eval_data.is_none()) data.eval = image_source(eval_data, eval_labels, resize, crop, eval_list);
    set_mask_suffixes(&data.eval, image_suffix, mask_suffix);
    check(eval_labels.is_none() || !eval_data.is_none(), "eval_labels goes with eval_data");
    check(eval_list.is_none() || !eval_data.is_none(), "eval_list goes with eval_data (the folder of its images)");
    py::gil_scoped_release release;
    const Dataset test = load_evaluation_images(model_input(qm), data, limit);
    report = evaluate(c.executor(), q.engine(backend), test, limit, layers, batch_size, layer_reference);
  }
  py::list layer_list;
  for (const LayerReport& l : report.layers) {
    py::dict d;
    d["name"] = l.name;
    d["op"] = l.op;
    d["scale"] = l.scale;
    d["zero_point"] = l.zero_point;
    d["amax"] = l.amax;
    d["method"] = l.method;
    d["bits"] = l.bits;
    d["sqnr_db"] = l.sqnr_db;
    layer_list.append(d);
  }
  py::dict d;
  d["backend"] = q.engine(backend).backend();
  d["images"] = report.images;
  auto top1 = [&](double v) { return report.labelled ? py::object(py::float_(v)) : py::object(py::none()); };
  d["float_top1"] = top1(report.float_top1);
  d["int8_top1"] = top1(report.int8_top1);
  d["top1_difference"] = top1(report.int8_top1 - report.float_top1);
  d["agreement"] = report.agreement;
  auto masks = [&](auto v) { return report.labelled_pixels > 0 ? py::cast(v) : py::object(py::none()); };
  d["labelled_pixels"] = masks(report.labelled_pixels);
  d["float_mean_iou"] = masks(report.float_mean_iou);
  d["int8_mean_iou"] = masks(report.int8_mean_iou);
  d["float_seconds"] = report.float_seconds;
  d["int8_seconds"] = report.int8_seconds;
  d["layers"] = layer_list;
  return d;
}

}  // namespace

void bind_evaluate(py::module_& m) {
  m.def("evaluate", &evaluate_py, py::arg("checkpoint"), py::arg("quantized"), py::kw_only(),
        py::arg("data_dir") = py::none(), py::arg("eval_data") = py::none(), py::arg("eval_labels") = py::none(),
        py::arg("eval_list") = py::none(), py::arg("image_suffix") = "", py::arg("mask_suffix") = "",
        py::arg("resize") = 0, py::arg("crop") = 0, py::arg("limit") = 0,
        py::arg("layers") = true, py::arg("batch_size") = 250,
        py::arg("backend") = backend_names::kCpu,
        "Float vs int8 on the test set, as `octet eval`, int8 on `backend` (octet.backends()): a dict with images, "
        "float_top1, int8_top1, "
        "top1_difference, agreement (percent), float_seconds, int8_seconds and layers, the per-layer SQNR report "
        "(a list of dicts: name, op, scale, zero_point, amax, method, sqnr_db). limit: the first N test images "
        "(0: all). eval_data: "
        "your own test images instead, as `octet eval --eval-data`: a folder in torchvision's ImageFolder layout, "
        "or of images alone with eval_labels a folder of their PNG masks (eval_list: a text file naming the "
        "images to read, as --eval-list and Pascal VOC's ImageSets; image_suffix, mask_suffix as --image-suffix, "
        "--mask-suffix: Cityscapes' _leftImg8bit.png, _gtFine_labelTrainIds.png; resize, crop as --resize, --crop; "
        "normalised as the quantized model says), or a .npy path with eval_labels "
        "a .npy path, or a float32 array N x C x H x W of model inputs already normalised with eval_labels an "
        "integer array; without labels the top-1 entries are None. For a model returning an image of logits the "
        "labels may be masks (N x H x W, 255: no label): the top-1 entries are pixel accuracies, and "
        "labelled_pixels, float_mean_iou, int8_mean_iou are set (else None).");
}

}  // namespace octet::python
