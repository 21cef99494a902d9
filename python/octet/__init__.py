"""octet from Python: float and int8 inference, calibration and quantization,
calibration statistics and the per-layer error report, as numpy arrays.

    import octet
    checkpoint = octet.load_checkpoint("models/zoo/lenet5_fmnist.octet")
    images, labels = octet.load_fashion_mnist()             # uint8 N x 1 x 28 x 28
    x = octet.normalize(images[:100], checkpoint.mean, checkpoint.std)
    result = octet.quantize(checkpoint, method="entropy", calib_samples=512)
    int32_logits = result.model.predict(x)                  # backend="cpu" by default
    logits = result.model.predict(x, dequantize=True)       # float32: int32 * logit_scale
    report = octet.evaluate(checkpoint, result.model)       # accuracy and per-layer SQNR
    mine = octet.quantize(checkpoint, calib_data="photos/train")              # your own images: a folder,
    octet.evaluate(checkpoint, mine.model, eval_data=x, eval_labels=y)        # a .npy, or arrays
    imported = octet.from_torch(torch_model, model="resnet20", path="r20.octet")  # PyTorch weights in
    mobilenet = octet.import_onnx("mobilenet_v2.onnx")                         # any CNN from ONNX

Every failure octet reports raises octet.Error (a RuntimeError) with octet's
message; input arrays of the wrong dtype raise TypeError, of the wrong shape
ValueError. Long calls release the GIL.
"""

from ._octet import (
    Checkpoint,
    Error,
    QuantizedModel,
    QuantizeResult,
    __version__,
    backends,
    dataset_info,
    datasets,
    evaluate,
    import_onnx,
    load_checkpoint,
    load_dataset,
    load_image_folder,
    load_quantized,
    normalize,
    quantize,
    sensitivity,
)
from .reports import accuracy_table, plot_histogram, plot_sqnr, sensitivity_table
from .torch_weights import from_torch

# Shown as octet.X in messages and tracebacks rather than octet._octet.X.
for _public in (Checkpoint, Error, QuantizedModel, QuantizeResult):
    _public.__module__ = __name__
del _public


def load_cifar10(data_dir, split="test"):
    """CIFAR-10 from its binary files (data_batch_1..5.bin, test_batch.bin in
    data_dir) as (uint8 images N x 3 x 32 x 32, uint8 labels N)."""
    return load_dataset("cifar10", data_dir, split)


def load_fashion_mnist(data_dir=None, split="test"):
    """Fashion-MNIST from its IDX files (gzip or not; default: Debian's
    /usr/share/datasets/fashion-mnist) as (uint8 images N x 1 x 28 x 28,
    uint8 labels N)."""
    return load_dataset("fashion-mnist", data_dir, split)


def top1(logits, labels):
    """Top-1 accuracy in percent of float logits [N, classes] against labels [N]."""
    import numpy

    logits = numpy.asarray(logits)
    labels = numpy.asarray(labels)
    if logits.dtype.kind in "iu":
        raise TypeError(
            "top1 needs float logits: int32 logits have one scale per class; "
            "use model.predict(images, dequantize=True) or model.dequantize_logits(logits)"
        )
    if logits.ndim != 2 or labels.shape != (logits.shape[0],):
        raise ValueError(f"logits {logits.shape} and labels {labels.shape} do not match: expected (N, classes) and (N,)")
    return 100.0 * float(numpy.mean(logits.argmax(axis=1) == labels))


__all__ = [
    "Checkpoint",
    "Error",
    "QuantizedModel",
    "QuantizeResult",
    "accuracy_table",
    "backends",
    "dataset_info",
    "datasets",
    "evaluate",
    "from_torch",
    "import_onnx",
    "load_checkpoint",
    "load_cifar10",
    "load_dataset",
    "load_image_folder",
    "load_fashion_mnist",
    "load_quantized",
    "normalize",
    "plot_histogram",
    "plot_sqnr",
    "quantize",
    "sensitivity",
    "sensitivity_table",
    "top1",
]
