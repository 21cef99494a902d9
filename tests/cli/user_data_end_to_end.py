"""Your own model and your own data, end to end on the command line (README,
"Your own data"): the zoo's CIFAR-10 LeNet-5 as an ONNX file (built here with
the onnx package from its weights) imported without a dataset, and the first
300 CIFAR-10 test images as a folder of PNG files (ImageFolder layout, written
here with zlib, not libpng) and as .npy files of model inputs (octet.normalize)
and labels. `octet import`, `quantize`, `eval`, `report` and `predict` run on
both forms: the folder and the .npy give the same calibration (byte-identical
quantized models) and the same figures, which are the built-in CIFAR-10
route's for the same images; without labels, eval reports the agreement with
float only, in a JSON of the same shape; bad data is refused (status 1, the
file named, nothing written).

usage: user_data_end_to_end.py OCTET_BINARY SOURCE_DIR CIFAR10_DIR
(PYTHONPATH: the built octet module). Exit 77 (skip) without CIFAR-10, the
onnx package, an octet with the ONNX library, or JPEG/PNG support."""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np

SKIP = 77
N = 300
CIFAR_MEAN = ["0.4914", "0.4822", "0.4465"]
CIFAR_STD = ["0.2470", "0.2435", "0.2616"]
failures = []


def skip(why):
    print("SKIP: " + why)
    sys.exit(SKIP)


def run(*args, expect=0):
    r = subprocess.run([OCTET, *map(str, args)], capture_output=True, text=True)
    if r.returncode != expect:
        failures.append(f"status {r.returncode} (expected {expect}): {' '.join(map(str, args))}\n{r.stderr[-2000:]}")
    return r


def run_json(*args):
    return json.loads(run(*args, "--json", "-").stdout or "null")


def expect(ok, what):
    if not ok:
        failures.append(what)


def refused(fragments, *args):
    """Status 1, 'octet: error:' with every fragment, no out* file left."""
    r = run(*args, expect=1)
    for fragment in fragments:
        expect(fragment in r.stderr, f"{' '.join(map(str, args))}: no '{fragment}' in: {r.stderr.strip()}")
    expect("octet: error:" in r.stderr, f"no 'octet: error:' in {r.stderr.strip()}")
    left = [f for f in os.listdir(TMP) if f.startswith("out")]
    expect(not left, f"{' '.join(map(str, args))} left {left}")


def png_bytes(rgb):
    """An 8-bit RGB PNG, written with zlib: H x W x 3 uint8."""
    h, w, _ = rgb.shape

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + rgb[y].tobytes() for y in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def lenet_onnx(params, path):
    """LeNet-5 (conv 5x5, ReLU, max pool 2, twice; three linear layers) as torch.onnx.export writes it."""
    from onnx import TensorProto, checker, helper, numpy_helper

    inits = [numpy_helper.from_array(np.asarray(v, dtype=np.float32), k) for k, v in params.items()]
    nodes = [
        helper.make_node("Conv", ["image", "conv1.weight", "conv1.bias"], ["c1"], kernel_shape=[5, 5]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.weight", "conv2.bias"], ["c2"], kernel_shape=[5, 5]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("MaxPool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p2"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "fc1.weight", "fc1.bias"], ["g1"], transB=1),
        helper.make_node("Relu", ["g1"], ["h1"]),
        helper.make_node("Gemm", ["h1", "fc2.weight", "fc2.bias"], ["g2"], transB=1),
        helper.make_node("Relu", ["g2"], ["h2"]),
        helper.make_node("Gemm", ["h2", "fc3.weight", "fc3.bias"], ["logits"], transB=1),
    ]
    graph = helper.make_graph(nodes, "lenet5", [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 32, 32])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    checker.check_model(model)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def figures(report):
    """An eval JSON without its timings."""
    return {k: v for k, v in report.items() if not k.endswith("seconds")}


def main():
    global OCTET, TMP
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    OCTET, source, cifar = sys.argv[1:]
    if not os.path.exists(os.path.join(cifar, "test_batch.bin")):
        skip(f"CIFAR-10 binary files not found in '{cifar}'")
    try:
        import onnx  # noqa: F401

        import octet
    except ImportError as e:
        skip(f"{e} (python3-onnx, and the octet module on PYTHONPATH)")
    TMP = tempfile.mkdtemp(prefix="octet-user-data-")
    try:
        os.chdir(TMP)
        check(octet, source, cifar)
    finally:
        os.chdir("/")
        shutil.rmtree(TMP)
    if failures:
        print(f"{len(failures)} failure(s):\n" + "\n".join(failures))
        sys.exit(1)
    print("user data end to end: ok")


def check(octet, source, cifar):

    # The images: the first N test records, as a PNG folder (classes sorted, files by index) and as .npy files in
    # the folder's order (ImageFolder's), the inputs normalised as octet normalises them.
    records = np.fromfile(os.path.join(cifar, "test_batch.bin"), np.uint8, N * 3073).reshape(N, 3073)
    labels, pixels = records[:, 0].astype(np.int64), records[:, 1:].reshape(N, 3, 32, 32)
    classes = octet.dataset_info("cifar10")["classes"]
    for i in range(N):
        os.makedirs(f"png/{classes[labels[i]]}", exist_ok=True)
        with open(f"png/{classes[labels[i]]}/{i:05d}.png", "wb") as f:
            f.write(png_bytes(pixels[i].transpose(1, 2, 0)))
    order = np.array(sorted(range(N), key=lambda i: (classes[labels[i]], i)))
    zoo = octet.load_checkpoint(os.path.join(source, "models/zoo/lenet5_cifar10.octet"))
    np.save("x.npy", octet.normalize(pixels[order], zoo.mean, zoo.std))
    np.save("y.npy", labels[order])

    # PNG is lossless: the folder decodes to the pixels written.
    try:
        decoded, folder_labels, folder_classes = octet.load_image_folder("png")
    except octet.Error as e:
        skip(str(e)) if "built without libpng" in str(e) else failures.append(str(e))
        decoded, folder_labels, folder_classes = pixels[order], labels[order], sorted(set(classes))
    expect(np.array_equal(decoded, pixels[order]), "the PNG folder does not decode to the CIFAR-10 pixels")
    expect(np.array_equal(folder_labels, labels[order]) and folder_classes == classes, "folder labels or classes")

    # The model: the zoo's weights, imported without a dataset (its normalisation given).
    lenet_onnx(zoo.params, "lenet.onnx")
    imported = run("import", "lenet.onnx", "-o", "mine.octet", "--mean", *CIFAR_MEAN, "--std", *CIFAR_STD, "--json",
                   "import.json")
    if "built without it" in imported.stderr:
        skip("this octet has no ONNX library: " + imported.stderr.strip())
    expect(json.load(open("import.json"))["dataset"] == "none", "the import should have no dataset")

    # Float: the built-in route on the zoo checkpoint, the folder and the .npy on the imported one.
    builtin = run_json("eval", "--checkpoint", zoo.path, "--data", cifar, "--limit", N)
    folder = run_json("eval", "--checkpoint", "mine.octet", "--eval-data", "png")
    npy = run_json("eval", "--checkpoint", "mine.octet", "--eval-data", "x.npy", "--eval-labels", "y.npy")
    print(f"float top-1 on {N} CIFAR-10 test images: built-in {builtin['float_top1']:.2f}%, folder "
          f"{folder['float_top1']:.2f}%, npy {npy['float_top1']:.2f}%")
    expect(builtin == folder == npy, f"float figures differ: {builtin} {folder} {npy}")

    # Calibration on the same images in the same order: byte-identical quantized models.
    q = ["--method", "max", "--weight-rounding", "nearest", "--calib-samples", 128]
    qjson = run_json("quantize", "--checkpoint", "mine.octet", "--calib-data", "png", "-o", "q_png.octet", *q)
    run("quantize", "--checkpoint", "mine.octet", "--calib-data", "x.npy", "-o", "q_npy.octet", *q)
    expect(open("q_png.octet", "rb").read() == open("q_npy.octet", "rb").read(), "the folder and the .npy calibrate apart")
    expect(qjson and qjson["calibration_samples"] == 128 and set(qjson) == {
        "output", "method", "granularity", "scheme", "calibration_samples", "points", "phases", "seconds", "cpu_seconds",
        "peak_mb", "precision", "accuracy_target", "equalized_pairs", "bias_correction", "weight_rounding",
        "large_network_defaults"} and qjson["weight_rounding"] == "nearest" and not qjson["large_network_defaults"],
        f"quantize JSON: {qjson}")

    # Int8 against float, both forms; the report; predict.
    e_png = run_json("eval", "--checkpoint", "mine.octet", "--quantized", "q_png.octet", "--eval-data", "png")
    e_npy = run_json("eval", "--checkpoint", "mine.octet", "--quantized", "q_png.octet", "--eval-data", "x.npy",
                     "--eval-labels", "y.npy")
    print(f"int8: float top-1 {e_png['float_top1']:.2f}%, int8 top-1 {e_png['int8_top1']:.2f}%, agreement "
          f"{e_png['agreement']:.2f}%")
    expect(figures(e_png) == figures(e_npy), "int8 figures differ between the folder and the .npy")
    expect(e_png["float_top1"] == builtin["float_top1"] and e_png["agreement"] > 90, f"eval: {figures(e_png)}")
    report = run("report", "--checkpoint", "mine.octet", "--quantized", "q_png.octet", "--calib-data", "png",
                 "--eval-data", "x.npy", "--eval-labels", "y.npy", "-o", "report.html", "--json", "report.json")
    if report.returncode == 0:
        r = json.load(open("report.json"))
        expect(r["int8_top1"] == e_png["int8_top1"] and r["agreement"] == e_png["agreement"] and r["dataset"] == "none",
               f"report: {r['int8_top1']} {r['agreement']}")
        expect("png" in open("report.html").read(), "the report does not name the calibration folder")
    predicted = run_json("predict", "--quantized", "q_png.octet", "--eval-data", "png", "--limit", 8)
    expect(predicted and predicted["labels"] == labels[order][:8].tolist(), f"predict labels: {predicted}")

    # Without labels: agreement only, the JSON of the same shape; float alone refuses.
    np.save("x_only.npy", np.load("x.npy")[:100])
    unlabelled = run_json("eval", "--checkpoint", "mine.octet", "--quantized", "q_png.octet", "--eval-data",
                          "x_only.npy")
    expect(set(unlabelled) == set(e_png) and unlabelled["float_top1"] is None and unlabelled["int8_top1"] is None
           and unlabelled["agreement"] > 90, f"eval without labels: {figures(unlabelled)}")
    refused(["x_only.npy", "without labels"], "eval", "--checkpoint", "mine.octet", "--eval-data", "x_only.npy")

    # Bad data: named, status 1, nothing written.
    np.save("wrong_shape.npy", np.zeros((4, 3, 28, 28), np.float32))
    np.save("float64.npy", np.zeros((4, 3, 32, 32)))
    with open("not.npy", "w") as f:
        f.write("hello")
    data = open("x.npy", "rb").read()
    with open("short.npy", "wb") as f:
        f.write(data[: len(data) - 1000])
    os.makedirs("empty")
    os.makedirs("mixed/a")
    os.makedirs("mixed/b")
    with open("mixed/a/1.png", "wb") as f:
        f.write(png_bytes(pixels[0].transpose(1, 2, 0)))
    with open("mixed/b/2.png", "wb") as f:
        f.write(png_bytes(np.zeros((40, 36, 3), np.uint8)))
    quantize = ["quantize", "--checkpoint", "mine.octet", "-o", "out.octet", "--calib-samples", 16]
    refused(["no dataset of its own", "--calib-data"], *quantize)
    refused(["wrong_shape.npy", "3x28x28", "the model takes 3x32x32"], *quantize, "--calib-data", "wrong_shape.npy")
    refused(["float64.npy", "float64"], *quantize, "--calib-data", "float64.npy")
    refused(["not.npy", "not a .npy file"], *quantize, "--calib-data", "not.npy")
    refused(["short.npy", "truncated"], *quantize, "--calib-data", "short.npy")
    refused(["empty", "no class folders"], *quantize, "--calib-data", "empty")
    refused(["mixed/b/2.png", "3x40x36", "the model takes 3x32x32", "differ in size"], *quantize, "--calib-data",
            "mixed")
    run(*quantize, "--calib-data", "mixed", "--resize", 32, "--crop", 32)  # they fit once resized and cropped
    os.remove("out.octet")
    refused(["--mean", "--std", "mean [0.4914"], *quantize, "--calib-data", "png", "--preprocess", "imagenet")
    refused(["--resize", "folder"], *quantize, "--calib-data", "x.npy", "--resize", 32)


if __name__ == "__main__":
    main()
