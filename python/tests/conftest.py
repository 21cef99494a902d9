"""Shared fixtures: the zoo LeNet-5 on Fashion-MNIST, its test images and one
quantized model, made once per session (ctest sets PYTHONPATH, OCTET_BIN and
OCTET_SOURCE_DIR; see python/CMakeLists.txt)."""

import os
import pathlib

import pytest

import octet

SOURCE_DIR = pathlib.Path(os.environ.get("OCTET_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
FASHION_MNIST_DIR = "/usr/share/datasets/fashion-mnist"


@pytest.fixture(scope="session")
def lenet_path():
    return str(SOURCE_DIR / "models" / "zoo" / "lenet5_fmnist.octet")


@pytest.fixture(scope="session")
def lenet(lenet_path):
    return octet.load_checkpoint(lenet_path)


@pytest.fixture(scope="session")
def fmnist_test():
    return octet.load_fashion_mnist(FASHION_MNIST_DIR, split="test")


@pytest.fixture(scope="session")
def test_images(lenet, fmnist_test):
    """The first 500 test images, normalised for the model, and their labels."""
    images, labels = fmnist_test
    return octet.normalize(images[:500], lenet.mean, lenet.std), labels[:500]


@pytest.fixture(scope="session")
def quantized(lenet):
    """LeNet-5 quantized with mse amax, per-channel, nearest rounding, 256 calibration images."""
    return octet.quantize(lenet, method="mse", weight_rounding="nearest", calib_samples=256)


@pytest.fixture(scope="session")
def octet_bin():
    path = os.environ.get("OCTET_BIN")
    if not path:
        pytest.fail("OCTET_BIN is not set: run the tests through ctest, or set it to the octet binary")
    return path

