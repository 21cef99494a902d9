"""`octet import` of models that return an image of logits rather than a vector: segmentation nets (class
scores per pixel, [N, classes, H, W]). A small FCN whose classifier's scores are upsampled to the input's size
(octet ends it with an identity 1x1 conv, whose int32 accumulators are the logits), the same upsampled
bilinearly as torchvision's FCN and DeepLabV3 heads do (octet's upsample_bilinear), a small U-Net ending in its
own 1x1 conv (kept as the output layer), and both with corners aligned (align_corners=True): the U-Net's decoder
upsampled as milesial's Pytorch-UNet does, the FCN's scores as segmentation_models_pytorch's heads
(nn.UpsamplingBilinear2d), and LRASPP's head in small, its pooled branch resized to a size that is no whole factor
(3 x 4 -> 8 x 10), centres or corners aligned. PyTorch's logits are the reference; ONNX Runtime runs the file and
octet's int8 export; int8 agrees with float pixel by pixel."""

import json
import subprocess

import numpy as np
import octet
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from test_onnx_import import seeded  # noqa: E402
from unlabelled_import import assert_matches_pytorch_and_onnx_runtime, export_image_model, imported  # noqa: E402
from unlabelled_import import int8_and_export_of_images, randomise_batch_norms, varied_inputs  # noqa: E402

nn = torch.nn
IMAGE = (3, 16, 20)


def conv_bn(c_in, c_out, stride=1):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, stride, 1), nn.BatchNorm2d(c_out), nn.ReLU())


class Fcn(nn.Module):
    """Features at half the input's size, a 1x1 classifier, its scores upsampled back (nearest)."""

    def __init__(self, classes=6):
        super().__init__()
        self.features = nn.Sequential(conv_bn(3, 16), conv_bn(16, 24, 2), conv_bn(24, 24))
        self.fc = nn.Conv2d(24, classes, 1)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")

    def forward(self, x):
        return self.up(self.fc(self.features(x)))


class UNet(nn.Module):
    """One level down and back up, the encoder's features concatenated to the decoder's, a 1x1 classifier."""

    def __init__(self, classes=5):
        super().__init__()
        self.encoder, self.middle, self.decoder = conv_bn(3, 16), conv_bn(16, 32), conv_bn(48, 16)
        self.fc = nn.Conv2d(16, classes, 1)

    def forward(self, x):
        skip = self.encoder(x)
        middle = nn.functional.interpolate(self.middle(nn.functional.max_pool2d(skip, 2)), scale_factor=2.0)
        return self.fc(self.decoder(torch.cat([middle, skip], 1)))


class BilinearFcn(nn.Module):
    """torchvision's FCN and DeepLabV3 heads in small: features at a quarter of the input's size, an ASPP-like
    pooling branch (global pooling, a 1x1 conv, brought back bilinearly: a pixel repeated) concatenated to them, a
    1x1 classifier, its scores upsampled bilinearly to the input's size (align_corners=False)."""

    def __init__(self, classes=6):
        super().__init__()
        self.features = nn.Sequential(conv_bn(3, 16, 2), conv_bn(16, 24, 2), conv_bn(24, 24))
        self.pooled = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(24, 8, 1), nn.ReLU())
        self.fc = nn.Conv2d(32, classes, 1)

    def forward(self, x):
        features = self.features(x)
        pooled = nn.functional.interpolate(self.pooled(features), size=features.shape[-2:], mode="bilinear",
                                           align_corners=False)
        scores = self.fc(torch.cat([features, pooled], 1))
        return nn.functional.interpolate(scores, size=x.shape[-2:], mode="bilinear", align_corners=False)


class CornersUNet(UNet):
    """The U-Net, its decoder upsampled bilinearly with corners aligned (Pytorch-UNet's bilinear=True)."""

    def forward(self, x):
        skip = self.encoder(x)
        middle = nn.functional.interpolate(self.middle(nn.functional.max_pool2d(skip, 2)), scale_factor=2.0,
                                           mode="bilinear", align_corners=True)
        return self.fc(self.decoder(torch.cat([middle, skip], 1)))


class CornersHead(nn.Module):
    """segmentation_models_pytorch's SegmentationHead on features at a quarter of the input's size: a classifier,
    then nn.UpsamplingBilinear2d (corners aligned) x 4."""

    def __init__(self, classes=6):
        super().__init__()
        self.features = nn.Sequential(conv_bn(3, 16, 2), conv_bn(16, 24, 2), conv_bn(24, 24))
        self.fc = nn.Conv2d(24, classes, 3, padding=1)
        self.up = nn.UpsamplingBilinear2d(scale_factor=4)

    def forward(self, x):
        return self.up(self.fc(self.features(x)))


class SizesHead(nn.Module):
    """LRASPP's head in small: a pooled branch (3 x 4 pixels, a max pool with ceil_mode) brought back to the
    features' 8 x 10 (no whole factor) and concatenated, a classifier, its scores upsampled to the input's size;
    pixel centres or corners aligned."""

    def __init__(self, align_corners, classes=6):
        super().__init__()
        self.align_corners = align_corners
        self.features = nn.Sequential(conv_bn(3, 16, 2), conv_bn(16, 24))
        self.pooled = nn.Sequential(nn.MaxPool2d(3, 3, ceil_mode=True), nn.Conv2d(24, 8, 1), nn.ReLU())
        self.fc = nn.Conv2d(32, classes, 1)

    def forward(self, x):
        features = self.features(x)
        pooled = nn.functional.interpolate(self.pooled(features), size=features.shape[-2:], mode="bilinear",
                                           align_corners=self.align_corners)
        scores = self.fc(torch.cat([features, pooled], 1))
        return nn.functional.interpolate(scores, size=x.shape[-2:], mode="bilinear", align_corners=self.align_corners)


NETS = {"fcn": Fcn, "unet": UNet, "bilinear": BilinearFcn, "corners_unet": CornersUNet, "corners_head": CornersHead,
        "sizes_centres": lambda: SizesHead(False), "sizes_corners": lambda: SizesHead(True)}
# Each net's nearest and bilinear upsamplings in octet's graph.
UPSAMPLES = {"fcn": (1, 0), "unet": (1, 0), "bilinear": (1, 1), "corners_unet": (0, 1), "corners_head": (0, 1),
             "sizes_centres": (0, 2), "sizes_corners": (0, 2)}


@pytest.fixture(scope="module")
def images():
    return varied_inputs(60, 64, IMAGE)


def exported(path, seed, net):
    return export_image_model(randomise_batch_norms(seeded(NETS[net], seed, scale=10)), path, IMAGE)


@pytest.mark.parametrize("net", NETS)
def test_an_image_of_logits_imports_and_matches_pytorch(tmp_path, octet_bin, images, net):
    model = exported(tmp_path / "m.onnx", 301, net)
    checkpoint = imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    got = checkpoint.predict(images)
    own_classifier = net in ("unet", "corners_unet")
    assert got.shape == (64, 5 if own_classifier else 6, 16, 20)
    last = checkpoint.layers[-1]
    assert last["op"] == "conv2d" and last["name"] == ("fc" if own_classifier else "identity_logits"), last
    ops = [layer["op"] for layer in checkpoint.layers]
    # the nearest ones (the bilinear net's of a 1 x 1 image too), the bilinear ones
    assert (ops.count("upsample"), ops.count("upsample_bilinear")) == UPSAMPLES[net], ops
    assert_matches_pytorch_and_onnx_runtime(got, model, tmp_path / "m.onnx", images)


@pytest.mark.parametrize("net", NETS)
def test_int8_follows_float_pixel_by_pixel_and_exports(tmp_path, octet_bin, images, net):
    """Centred top-1 per pixel (int8_top1_agreement over 64 x 320 pixels): fcn 0.974, unet 0.980, bilinear 0.966,
    corners_unet 0.981, corners_head 0.963, sizes_centres 0.972, sizes_corners 0.975
    (octet eval's plain agreement 99.5-99.6%, logits SQNR 38-40 dB). The QDQ export in
    ONNX Runtime gives the same logits but where ORT's float arithmetic between a QDQ pair rounds a level of the
    output conv's input the other way: then that pixel's logits move by the level times a weight, with no pooling
    after to average it out (a classifier's tests allow 5e-3 of the largest logit anywhere)."""
    exported(tmp_path / "m.onnx", 302, net)
    imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    agreement, ours, theirs = int8_and_export_of_images(tmp_path, octet_bin, tmp_path / "m.octet", images)
    assert agreement >= 0.9, agreement
    off = np.abs(ours[:16] - theirs) / np.abs(ours).max()
    if net not in ("bilinear", "sizes_centres"):
        assert (off > 1e-4).mean() <= 0.01 and off.max() <= 0.02, ((off > 1e-4).mean(), off.max())
        return
    # The scores upsampled bilinearly (x 4: weights in 64ths) then read by the identity output conv: a weighted
    # sum half-way between two levels rounds up in octet (common/requantize.h) and, as ORT computes it, down
    # now and then. Measured: 2.5% of values exactly one level below, the rest equal. With corners aligned
    # (corners_head: weights in 15ths down and 19ths across, an odd sum) no mean is half-way: every value equal.
    # sizes_centres also resizes its pooled branch 3 x 4 -> 8 x 10, by the float scale 8 / 3 in the export: ORT's
    # weights are then a little off octet's exact ones, and a level moved there moves the scores by up to two
    # levels: measured 6.2% of values, at most 2 levels.
    level = 1 / [layer for layer in octet.load_quantized(str(tmp_path / "m.int8")).layers
                 if layer["op"] == "upsample_bilinear"][-1]["scale"]
    levels = (theirs - ours[:16]) / level
    most, share = (1.01, 0.05) if net == "bilinear" else (2.01, 0.1)
    assert np.abs(levels - np.round(levels)).max() < 1e-2 and np.abs(levels).max() < most, np.unique(levels.round(3))
    assert (np.abs(levels) > 0.5).mean() <= share


def test_auto_calibration_and_eval_compare_every_pixel(tmp_path, octet_bin, images):
    """octet quantize's default method (auto: each image scored by its pixels' KL from float's, summed), then
    octet eval's agreement over 64 x 320 pixels."""
    exported(tmp_path / "m.onnx", 303, "unet")
    imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    np.save(tmp_path / "images.npy", images)
    subprocess.run([octet_bin, "quantize", "--checkpoint", str(tmp_path / "m.octet"), "--calib-data",
                    str(tmp_path / "images.npy"), "-o", str(tmp_path / "m.int8")],
                   capture_output=True, text=True, check=True)
    result = subprocess.run([octet_bin, "eval", "--checkpoint", str(tmp_path / "m.octet"), "--quantized",
                             str(tmp_path / "m.int8"), "--eval-data", str(tmp_path / "images.npy"), "--json", "-"],
                            capture_output=True, text=True, check=True)
    report = json.loads(result.stdout)
    assert report["images"] == 64 and report["predictions_per_image"] == 16 * 20, report
    assert 90 <= report["agreement"] < 100 and report["float_top1"] is None, report
    assert report["layers"][-1]["name"] == "logits" and report["layers"][-1]["sqnr_db"] > 20, report["layers"][-1]


def test_what_needs_a_class_per_image_is_refused(tmp_path, octet_bin):
    export_image_model(seeded(Fcn, 304, scale=4), tmp_path / "cifar.onnx", (3, 32, 32))
    labelled = subprocess.run([octet_bin, "import", str(tmp_path / "cifar.onnx"), "--dataset", "cifar10", "-o",
                               str(tmp_path / "c.octet")], capture_output=True, text=True)
    assert labelled.returncode == 1, labelled.stdout
    assert "returns an image of 6x32x32 values, and cifar10's labels name a class per image" in labelled.stderr
    assert not (tmp_path / "c.octet").exists()
    # octet eval and predict take masks (a class per pixel) and refuse a class per image:
    # test_segmentation_masks.py.
