"""Your own images from Python: a folder in torchvision's ImageFolder layout
read as torchvision reads it (decoding, Resize, CenterCrop: pixel for pixel
against torchvision and PIL themselves), and octet.quantize / octet.evaluate
on a folder, a .npy or arrays of model inputs, which calibrate and evaluate
exactly as the built-in dataset route does on the same images."""

import numpy as np
import pytest

import octet


def figures(report):
    return {k: v for k, v in report.items() if not k.endswith("seconds")}


@pytest.fixture(scope="module")
def pil():
    return pytest.importorskip("PIL.Image")


def write_folder(root, pil):
    """Images of several sizes, modes and formats, in class folders (one nested),
    with a file torchvision skips; returns the folder."""
    rng = np.random.default_rng(5)
    specs = [("cat", "a.png", "RGB", (37, 50)), ("cat", "B.JPG", "RGB", (64, 41)), ("cat", "sub/c.png", "L", (33, 33)),
             ("dog", "d.jpeg", "L", (40, 70)), ("dog", "e.png", "RGBA", (52, 39)), ("emu", "f.png", "P", (48, 48))]
    for cls, name, mode, (h, w) in specs:
        (root / cls / name).parent.mkdir(parents=True, exist_ok=True)
        # Smooth pictures with some noise: resampling and JPEG both have work to do.
        y, x = np.mgrid[0:h, 0:w]
        base = np.stack([x * 255 // w, y * 255 // h, (x + y) * 127 // (w + h)], axis=2)
        rgb = np.clip(base + rng.integers(-20, 20, size=(h, w, 3)), 0, 255).astype(np.uint8)
        image = pil.fromarray(rgb, "RGB").convert(mode)
        image.save(root / cls / name, "JPEG" if name.lower().endswith(("jpg", "jpeg")) else "PNG")
    (root / "dog" / "notes.txt").write_text("torchvision skips this")
    return root


@pytest.mark.parametrize("channels, resize, crop", [(3, 32, 28), (3, 48, 48), (1, 24, 30), (3, 0, 0)])
def test_folders_read_as_torchvision_reads_them(tmp_path, pil, channels, resize, crop):
    datasets = pytest.importorskip("torchvision.datasets")
    transforms = pytest.importorskip("torchvision.transforms")
    root = write_folder(tmp_path / "images", pil)
    if resize == 0:  # as they are: only images of one size
        for path in root.rglob("*.*"):
            if path.suffix != ".txt":
                pil.open(path).convert("RGB").resize((20, 16)).save(path.with_suffix(".png"))
                if path.suffix != ".png":
                    path.unlink()
    steps = [transforms.Grayscale()] if channels == 1 else []
    steps += [transforms.Resize(resize), transforms.CenterCrop(crop)] if resize else []
    reference = datasets.ImageFolder(str(root), transform=transforms.Compose(steps + [transforms.PILToTensor()]))
    try:
        images, labels, classes = octet.load_image_folder(str(root), channels=channels, resize=resize, crop=crop)
    except octet.Error as e:
        if "built without libpng" in str(e):
            pytest.skip(str(e))
        raise
    assert classes == reference.classes
    assert labels.tolist() == [label for _, label in reference.samples]
    expected = np.stack([reference[i][0].numpy() for i in range(len(reference))])
    assert images.dtype == np.uint8 and images.shape == expected.shape
    np.testing.assert_array_equal(images, expected)


def test_folder_refusals_name_the_file(tmp_path, pil):
    root = write_folder(tmp_path / "images", pil)
    # Mixed sizes: the first image in ImageFolder's order ("B.JPG" sorts before "a.png") sets the size.
    with pytest.raises(octet.Error, match=r"images/cat/a.png: an image of 3x37x50 .*the model takes 3x64x41"):
        octet.load_image_folder(str(root))
    (root / "emu" / "g.webp").write_bytes(b"RIFF")
    with pytest.raises(octet.Error, match=r"emu/g.webp: octet reads JPEG and PNG images only"):
        octet.load_image_folder(str(root), resize=32, crop=32)


@pytest.fixture(scope="module")
def calibration_inputs(lenet):
    """The 256 training images the built-in route calibrates on (evenly spaced), as model inputs."""
    images, _ = octet.load_fashion_mnist(split="train")
    picked = [i * len(images) // 256 for i in range(256)]
    return octet.normalize(images[picked], lenet.mean, lenet.std)


def test_quantize_on_arrays_and_npy_as_on_the_dataset(lenet, calibration_inputs, tmp_path):
    options = dict(method="max", weight_rounding="nearest", calib_samples=256)
    builtin = octet.quantize(lenet, **options)
    np.save(tmp_path / "x.npy", calibration_inputs)
    for given in (calibration_inputs, str(tmp_path / "x.npy"), tmp_path / "x.npy"):
        mine = octet.quantize(lenet, calib_data=given, **options)
        assert mine.calibration_samples == 256
        assert [(p["name"], p["amax"], p["scale"]) for p in mine.points] == \
            [(p["name"], p["amax"], p["scale"]) for p in builtin.points]
    with pytest.raises(octet.Error, match="resize and crop apply to a folder"):
        octet.quantize(lenet, calib_data=calibration_inputs, resize=32)
    with pytest.raises(ValueError, match=r"the model takes \(N, 1, 28, 28\)"):
        octet.quantize(lenet, calib_data=np.zeros((4, 3, 28, 28), np.float32))


def test_evaluate_on_arrays_and_npy_as_on_the_dataset(lenet, quantized, test_images, tmp_path):
    x, labels = test_images
    quantized = quantized.model
    builtin = octet.evaluate(lenet, quantized, limit=500)
    on_arrays = octet.evaluate(lenet, quantized, eval_data=x, eval_labels=labels)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", labels.astype(np.int64))
    on_npy = octet.evaluate(lenet, quantized, eval_data=tmp_path / "x.npy", eval_labels=tmp_path / "y.npy")
    assert figures(on_arrays) == figures(builtin) == figures(on_npy)
    unlabelled = octet.evaluate(lenet, quantized, eval_data=x)
    assert unlabelled["float_top1"] is None and unlabelled["int8_top1"] is None
    assert unlabelled["agreement"] == builtin["agreement"]
    with pytest.raises(ValueError, match=r"labels have shape \(499,\), expected \(500,\)"):
        octet.evaluate(lenet, quantized, eval_data=x, eval_labels=labels[:499])
    with pytest.raises(ValueError, match="label 3 is 10"):
        bad = labels.astype(np.int64)
        bad[3] = 10
        octet.evaluate(lenet, quantized, eval_data=x, eval_labels=bad)
    with pytest.raises(TypeError, match=r"labels are a path \(or None\): a .npy with a .npy of images"):
        octet.evaluate(lenet, quantized, eval_data=tmp_path / "x.npy", eval_labels=labels)
    with pytest.raises(octet.Error, match="y.npy: .* labels for the 500 images"):
        np.save(tmp_path / "y.npy", labels[:10].astype(np.int64))
        octet.evaluate(lenet, quantized, eval_data=tmp_path / "x.npy", eval_labels=tmp_path / "y.npy")
