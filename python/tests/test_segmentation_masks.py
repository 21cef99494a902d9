"""A segmentation's own test set: masks (N x H x W, a class per pixel, 255 where a pixel has no label) as
--eval-labels. octet eval reports pixel accuracy and mean IoU of float and int8, octet predict the int8 class maps
(--class-map, a .npy) and its pixel accuracy, octet.evaluate the same; each figure checked against numpy's own
count from the models' predictions. Labels that do not fit the model are refused by name."""

import json
import subprocess

import numpy as np
import octet
import pytest

pytest.importorskip("torch")
pytest.importorskip("onnx")
from conftest import SOURCE_DIR  # noqa: E402
from test_onnx_import_dense_output import IMAGE, UNet  # noqa: E402
from test_onnx_import import seeded  # noqa: E402
from unlabelled_import import export_image_model, imported, randomise_batch_norms, varied_inputs  # noqa: E402

CLASSES = 5


def pixel_scores(predicted, masks):
    """Pixel accuracy and mean IoU (percent) of class maps against masks, pixels labelled 255 left out, the mean
    over the classes labelled or predicted."""
    labelled = masks != 255
    p, m = predicted[labelled], masks[labelled]
    ious = [np.sum((p == c) & (m == c)) / np.sum((p == c) | (m == c)) for c in range(CLASSES)
            if np.any((p == c) | (m == c))]
    return 100 * np.mean(p == m), 100 * np.mean(ious)


@pytest.fixture(scope="module")
def segmenter(tmp_path_factory, octet_bin):
    """A U-Net (5 classes, 16 x 20 pixels) quantized on 32 of its 48 test images, and masks: float's own class
    maps with a fifth of the pixels given another class and a tenth no label."""
    tmp = tmp_path_factory.mktemp("segmenter")
    model = randomise_batch_norms(seeded(UNet, 311, scale=10))
    model.fc.bias.data.zero_()  # a class per pixel that follows the input, not one class everywhere
    export_image_model(model, tmp / "m.onnx", IMAGE)
    checkpoint = imported(octet_bin, tmp / "m.onnx", tmp / "m.octet")
    images = varied_inputs(71, 48, IMAGE)
    np.save(tmp / "images.npy", images)
    subprocess.run([octet_bin, "quantize", "--checkpoint", str(tmp / "m.octet"), "--calib-data",
                    str(tmp / "images.npy"), "--method", "max", "-o", str(tmp / "m.int8")],
                   capture_output=True, text=True, check=True)
    float_maps = checkpoint.predict(images).argmax(1)
    int8_maps = octet.load_quantized(str(tmp / "m.int8")).predict(images, dequantize=True).argmax(1)
    assert len(np.unique(float_maps)) == CLASSES, np.bincount(float_maps.ravel())
    rng = np.random.default_rng(72)
    masks = np.where(rng.random(float_maps.shape) < 0.2, rng.integers(0, CLASSES, float_maps.shape), float_maps)
    masks = np.where(rng.random(masks.shape) < 0.1, 255, masks).astype(np.uint8)
    np.save(tmp / "masks.npy", masks)
    return tmp, images, masks, float_maps, int8_maps


def run(octet_bin, *args):
    return subprocess.run([octet_bin, *map(str, args)], capture_output=True, text=True)


def test_eval_reports_pixel_accuracy_and_mean_iou_of_float_and_int8(octet_bin, segmenter):
    tmp, images, masks, float_maps, int8_maps = segmenter
    result = run(octet_bin, "eval", "--checkpoint", tmp / "m.octet", "--quantized", tmp / "m.int8", "--eval-data",
                 tmp / "images.npy", "--eval-labels", tmp / "masks.npy", "--json", "-")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    float_accuracy, float_iou = pixel_scores(float_maps, masks)
    int8_accuracy, int8_iou = pixel_scores(int8_maps, masks)
    assert report["labelled_pixels"] == np.sum(masks != 255)
    assert report["float_top1"] == pytest.approx(float_accuracy, abs=1e-9)
    assert report["float_mean_iou"] == pytest.approx(float_iou, abs=1e-9)
    assert report["int8_top1"] == pytest.approx(int8_accuracy, abs=1e-9)
    assert report["int8_mean_iou"] == pytest.approx(int8_iou, abs=1e-9)
    assert report["agreement"] == pytest.approx(100 * np.mean(float_maps == int8_maps), abs=1e-9)
    assert 75 < float_accuracy < 90 and float_iou < float_accuracy, (float_accuracy, float_iou)
    assert report["int8_mean_iou"] != report["float_mean_iou"]  # int8 moved some pixels: the two were counted apart

    html = run(octet_bin, "report", "--checkpoint", tmp / "m.octet", "--quantized", tmp / "m.int8", "--calib-data",
               tmp / "images.npy", "--eval-data", tmp / "images.npy", "--eval-labels", tmp / "masks.npy", "-o",
               tmp / "report.html", "--json", "-")
    assert html.returncode == 0, html.stderr
    assert json.loads(html.stdout)["int8_mean_iou"] == pytest.approx(int8_iou, abs=1e-9)
    assert "int8 mean IoU" in (tmp / "report.html").read_text()

    alone = run(octet_bin, "eval", "--checkpoint", tmp / "m.octet", "--eval-data", tmp / "images.npy",
                "--eval-labels", tmp / "masks.npy", "--limit", 20, "--json", "-")
    assert alone.returncode == 0, alone.stderr
    float_only = json.loads(alone.stdout)
    accuracy, iou = pixel_scores(float_maps[:20], masks[:20])
    assert float_only["images"] == 20 and float_only["labelled_pixels"] == np.sum(masks[:20] != 255)
    assert float_only["float_top1"] == pytest.approx(accuracy, abs=1e-9)
    assert float_only["float_mean_iou"] == pytest.approx(iou, abs=1e-9)


def test_predict_writes_class_maps(octet_bin, segmenter):
    tmp, images, masks, float_maps, int8_maps = segmenter
    result = run(octet_bin, "predict", "--quantized", tmp / "m.int8", "--checkpoint", tmp / "m.octet", "--eval-data",
                 tmp / "images.npy", "--eval-labels", tmp / "masks.npy", "--class-map", tmp / "maps.npy", "--json", "-")
    assert result.returncode == 0, result.stderr
    maps = np.load(tmp / "maps.npy")
    assert maps.dtype == np.int64 and np.array_equal(maps, int8_maps)
    predictions = json.loads(result.stdout)
    assert predictions["predictions_per_image"] == IMAGE[1] * IMAGE[2] and predictions["int8_logits"] is None
    assert np.array_equal(predictions["int8_predictions"], int8_maps)
    assert np.array_equal(predictions["float_predictions"], float_maps)
    assert predictions["int8_top1"] == pytest.approx(pixel_scores(int8_maps, masks)[0], abs=1e-9)
    assert predictions["float_top1"] == pytest.approx(pixel_scores(float_maps, masks)[0], abs=1e-9)


def test_the_python_module_scores_masks_as_the_cli(octet_bin, segmenter):
    tmp, images, masks, float_maps, int8_maps = segmenter
    report = octet.evaluate(octet.load_checkpoint(str(tmp / "m.octet")), octet.load_quantized(str(tmp / "m.int8")),
                            eval_data=images, eval_labels=masks, layers=False)
    assert report["int8_mean_iou"] == pytest.approx(pixel_scores(int8_maps, masks)[1], abs=1e-9)
    assert report["float_top1"] == pytest.approx(pixel_scores(float_maps, masks)[0], abs=1e-9)
    from_files = octet.evaluate(octet.load_checkpoint(str(tmp / "m.octet")), octet.load_quantized(str(tmp / "m.int8")),
                                eval_data=str(tmp / "images.npy"), eval_labels=str(tmp / "masks.npy"), layers=False)
    assert from_files["labelled_pixels"] == report["labelled_pixels"] > 0
    with pytest.raises(ValueError, match=r"label 7 is 9, outside 0..4 \(255: a pixel without a label\)"):
        bad = masks.copy()
        bad.flat[7] = 9
        octet.evaluate(octet.load_checkpoint(str(tmp / "m.octet")), octet.load_quantized(str(tmp / "m.int8")),
                       eval_data=images, eval_labels=bad)


def test_labels_that_do_not_fit_are_refused(octet_bin, segmenter, tmp_path):
    tmp, images, masks, _, _ = segmenter
    cases = {
        "per_image.npy": (np.zeros(48, np.int64), "its labels name a class per image, and '%s' returns an image of "
                          "5x16x20 logits: give a mask per image (N x 16 x 20, 255 where a pixel has no label)"),
        "transposed.npy": (masks.transpose(0, 2, 1).copy(), "its masks are 20 x 16 pixels, and '%s' predicts "
                           "16 x 20 per image"),
        "out_of_range.npy": (np.where(np.arange(masks.size).reshape(masks.shape) == 25, 5, masks).astype(np.uint8),
                             "label (image 0, row 1, column 5) is 5 (the model has classes 0..4; 255 marks a pixel "
                             "without a label)"),
        "too_few.npy": (masks[:40], "40 masks for the 48 images of"),
    }
    for name, (labels, message) in cases.items():
        np.save(tmp_path / name, labels)
        for command in (["eval", "--checkpoint", tmp / "m.octet", "--quantized", tmp / "m.int8"],
                        ["predict", "--quantized", tmp / "m.int8", "--class-map", tmp_path / "maps.npy"]):
            result = run(octet_bin, *command, "--eval-data", tmp / "images.npy", "--eval-labels", tmp_path / name)
            model = tmp / ("m.octet" if command[0] == "eval" else "m.int8")
            assert result.returncode == 1, (name, result.stderr)
            assert message.replace("%s", str(model)) in result.stderr, (name, result.stderr)
            assert not (tmp_path / "maps.npy").exists()
    lenet = SOURCE_DIR / "tests" / "fuzz" / "corpus" / "quantized" / "tiny_lenet.nearest.int8.octet"
    classifier = run(octet_bin, "predict", "--quantized", lenet, "--eval-data", tmp / "images.npy", "--class-map",
                     tmp_path / "maps.npy")
    assert classifier.returncode == 1 and "--class-map: '%s' predicts a class per image" % lenet in classifier.stderr
    assert not (tmp_path / "maps.npy").exists()
