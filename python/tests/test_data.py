"""Datasets as numpy arrays: Fashion-MNIST (IDX) and CIFAR-10 (binary layout),
and the normalisation the models expect."""

import os
import pathlib

import numpy as np
import pytest

import octet


def test_datasets_and_their_info():
    assert {"cifar10", "fashion-mnist"} <= set(octet.datasets())
    info = octet.dataset_info("cifar10")
    assert info["shape"] == (3, 32, 32) and len(info["classes"]) == 10 and info["classes"][0] == "airplane"
    assert len(info["mean"]) == 3 and len(info["std"]) == 3
    assert info["default_dir"] is None
    assert octet.dataset_info("fashion-mnist")["default_dir"] == "/usr/share/datasets/fashion-mnist"
    with pytest.raises(octet.Error, match="unknown dataset 'imagenet'.*cifar10"):
        octet.dataset_info("imagenet")


def test_fashion_mnist_test_split(fmnist_test):
    images, labels = fmnist_test
    assert images.dtype == np.uint8 and images.shape == (10000, 1, 28, 28)
    assert labels.dtype == np.uint8 and labels.shape == (10000,)
    assert np.bincount(labels, minlength=10).tolist() == [1000] * 10
    assert images.max() == 255 and images.min() == 0


def test_fashion_mnist_train_split_from_the_default_folder():
    images, labels = octet.load_fashion_mnist(split="train")
    assert images.shape == (60000, 1, 28, 28) and labels.shape == (60000,)
    assert np.bincount(labels, minlength=10).tolist() == [6000] * 10


def write_cifar10_records(path, labels, pixels):
    with open(path, "wb") as f:
        for label, image in zip(labels, pixels):
            f.write(bytes([label]))
            f.write(image.astype(np.uint8).tobytes())


def test_cifar10_binary_layout(tmp_path):
    rng = np.random.default_rng(7)
    pixels = rng.integers(0, 256, size=(5, 3, 32, 32), dtype=np.uint8)
    labels = [3, 0, 9, 1, 7]
    write_cifar10_records(tmp_path / "test_batch.bin", labels, pixels)
    images, loaded_labels = octet.load_cifar10(str(tmp_path))
    assert images.dtype == np.uint8 and images.shape == (5, 3, 32, 32)
    np.testing.assert_array_equal(images, pixels)
    assert loaded_labels.tolist() == labels


def test_cifar10_train_split_reads_five_batches(tmp_path):
    rng = np.random.default_rng(8)
    for i in range(1, 6):
        write_cifar10_records(tmp_path / f"data_batch_{i}.bin", [i] * 2, rng.integers(0, 256, (2, 3, 32, 32)))
    images, labels = octet.load_cifar10(str(tmp_path), split="train")
    assert images.shape == (10, 3, 32, 32)
    assert labels.tolist() == [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]


def test_cifar10_errors_name_the_file(tmp_path):
    with pytest.raises(octet.Error, match="test_batch.bin"):
        octet.load_cifar10(str(tmp_path))
    (tmp_path / "test_batch.bin").write_bytes(b"\x01" * 100)  # not a whole record
    with pytest.raises(octet.Error, match="test_batch.bin"):
        octet.load_cifar10(str(tmp_path))
    with pytest.raises(octet.Error, match="split must be 'train' or 'test'"):
        octet.load_cifar10(str(tmp_path), split="validation")
    with pytest.raises(octet.Error, match="--data DIR is required"):
        octet.load_dataset("cifar10")


def test_real_cifar10_when_provided():
    folder = os.environ.get("OCTET_CIFAR10_DIR", "")
    if not folder or not (pathlib.Path(folder) / "test_batch.bin").exists():
        pytest.skip("CIFAR-10 binary files not provided (tools/setup.sh writes them to .data/)")
    images, labels = octet.load_cifar10(folder)
    assert images.shape == (10000, 3, 32, 32) and labels.shape == (10000,)
    assert np.bincount(labels, minlength=10).tolist() == [1000] * 10


def test_normalize_matches_the_formula(fmnist_test):
    images, _ = fmnist_test
    x = octet.normalize(images[:50], [0.2860], [0.3530])
    assert x.dtype == np.float32 and x.shape == (50, 1, 28, 28)
    expected = (images[:50].astype(np.float32) / 255 - np.float32(0.2860)) / np.float32(0.3530)
    np.testing.assert_allclose(x, expected, rtol=1e-6, atol=1e-6)
    rgb = np.full((2, 3, 4, 4), 255, dtype=np.uint8)
    y = octet.normalize(rgb, [0.5, 0.0, 1.0], [0.5, 1.0, 2.0])
    np.testing.assert_allclose(y[:, :, 0, 0], [[1.0, 1.0, 0.0]] * 2, atol=1e-6)


def test_normalize_refuses_bad_inputs(fmnist_test):
    images, _ = fmnist_test
    with pytest.raises(TypeError, match="uint8"):
        octet.normalize(images[:2].astype(np.float32), [0.286], [0.353])
    with pytest.raises(ValueError, match="N x C x H x W"):
        octet.normalize(images[0], [0.286], [0.353])
    with pytest.raises(ValueError, match="1 channels but mean has 3 values"):
        octet.normalize(images[:2], [0.1, 0.2, 0.3], [1, 1, 1])
    with pytest.raises(ValueError, match="std values must be positive"):
        octet.normalize(images[:2], [0.286], [0.0])
