"""`octet import` of transposed convolutions and pixel shuffles: a U-Net's up-convolutions
(nn.ConvTranspose2d of kernel 2 stride 2, of kernel 4 stride 2 padding 1, of kernel 3 stride 2 padding 1
output_padding 1; grouped, and depthwise as CenterNet's), each a sub-pixel conv (grouped as the transposed
conv) and octet's depth_to_space; ESPCN's super-resolution (a conv to
3 r^2 channels, then nn.PixelShuffle, ONNX's DepthToSpace in mode CRD; mode DCR as tf2onnx writes it). PyTorch's
outputs are the reference (ONNX Runtime's for DCR); ONNX Runtime runs the file and octet's int8 export."""

import subprocess

import numpy as np
import octet
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
import ort_peer  # noqa: E402
from test_onnx_import import seeded  # noqa: E402
from unlabelled_import import assert_matches_pytorch_and_onnx_runtime, export_image_model, imported  # noqa: E402
from unlabelled_import import int8_and_export_of_images, randomise_batch_norms, refused, varied_inputs  # noqa: E402

nn = torch.nn
IMAGE = (3, 16, 20)
UP_CONVS = {"k2s2": dict(kernel_size=2, stride=2), "k4s2p1": dict(kernel_size=4, stride=2, padding=1),
            "k3s2p1o1": dict(kernel_size=3, stride=2, padding=1, output_padding=1),
            "k3s3": dict(kernel_size=(3, 5), stride=3, padding=(0, 1)),
            "k2s2g4": dict(kernel_size=2, stride=2, groups=4),
            "k4s2p1dw": dict(kernel_size=4, stride=2, padding=1, groups=32)}


def conv_bn(c_in, c_out, stride=1):
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, stride, 1), nn.BatchNorm2d(c_out), nn.ReLU())


class UNet(nn.Module):
    """One level down (a strided conv) and back up by a transposed conv (depthwise: one per channel, 32 of them)
    and a batch norm (folded into the sub-pixel conv), the encoder's features concatenated."""

    def __init__(self, up, stride, classes=5):
        super().__init__()
        up_channels = UP_CONVS[up].get("groups") if up.endswith("dw") else 16
        self.encoder, self.down = conv_bn(3, 16), conv_bn(16, 32, stride)
        self.up = nn.ConvTranspose2d(32, up_channels, **UP_CONVS[up])
        self.up_bn = nn.BatchNorm2d(up_channels)
        self.decoder, self.fc = conv_bn(up_channels + 16, 16), nn.Conv2d(16, classes, 1)

    def forward(self, x):
        skip = self.encoder(x)
        return self.fc(self.decoder(torch.cat([torch.relu(self.up_bn(self.up(self.down(skip)))), skip], 1)))


class Espcn(nn.Module):
    """ESPCN (Shi et al., 2016): features at the input's size, a conv to 3 r^2 channels, PixelShuffle(r)."""

    def __init__(self, r=3):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 32, 5, padding=2), nn.Tanh(), nn.Conv2d(32, 16, 3, padding=1),
                                      nn.Tanh())
        self.fc = nn.Conv2d(16, 3 * r * r, 3, padding=1)
        self.shuffle = nn.PixelShuffle(r)

    def forward(self, x):
        return self.shuffle(self.fc(self.features(x)))


@pytest.fixture(scope="module")
def images():
    return varied_inputs(80, 64, IMAGE)


def unet(path, seed, up):
    stride = 3 if up == "k3s3" else 2
    model = seeded(lambda: UNet(up, stride), seed, scale=10)
    return export_image_model(randomise_batch_norms(model), path, (3, 15, 21) if stride == 3 else IMAGE)


@pytest.mark.parametrize("up", UP_CONVS)
def test_transposed_convs_import_and_match_pytorch(tmp_path, octet_bin, up):
    model = unet(tmp_path / "m.onnx", 401, up)
    ops = [n.op_type for n in onnx.load(str(tmp_path / "m.onnx")).graph.node]
    assert "ConvTranspose" in ops and ops.count("BatchNormalization") == 1, ops
    checkpoint = imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    layers = [layer["op"] for layer in checkpoint.layers]
    # The norm folded into the sub-pixel conv, the ReLU after the depth_to_space (and crop) into its epilogue.
    assert layers.count("depth_to_space") == 1 and layers.count("conv2d") == 5 and "relu" not in layers, layers
    shape = (3, 15, 21) if up == "k3s3" else IMAGE
    inputs = varied_inputs(81, 16, shape)
    got = checkpoint.predict(inputs)
    assert got.shape == (16, 5) + shape[1:]
    assert_matches_pytorch_and_onnx_runtime(got, model, tmp_path / "m.onnx", inputs)


@pytest.mark.parametrize("up", ["k2s2", "k4s2p1", "k2s2g4", "k4s2p1dw"])
def test_transposed_convs_quantize_follow_float_and_export(tmp_path, octet_bin, images, up):
    """Centred top-1 per pixel: 0.978 (k2s2), 0.982 (k4s2p1, k2s2g4), 0.981 (k4s2p1dw); the QDQ export in ORT
    equal (all but k4s2p1: within 1.6e-7 of the largest logit) or equal but for 0.2% of values (k4s2p1, at most
    3.2e-3 of the largest logit)."""
    unet(tmp_path / "m.onnx", 402, up)
    imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    agreement, ours, theirs = int8_and_export_of_images(tmp_path, octet_bin, tmp_path / "m.octet", images)
    assert agreement >= 0.9, agreement
    off = np.abs(ours[:16] - theirs) / np.abs(ours).max()
    assert (off > 1e-4).mean() <= 0.01 and off.max() <= 0.02, ((off > 1e-4).mean(), off.max())


def test_super_resolution_by_pixel_shuffle(tmp_path, octet_bin, images):
    """ESPCN x3: an image of 3 x 48 x 60 values per input; int8's SQNR against float at least 28 dB (measured
    31.0 with max calibration, 32.2 with auto)."""
    model = export_image_model(seeded(Espcn, 403, last=lambda m: m.fc), tmp_path / "m.onnx", IMAGE)
    assert "DepthToSpace" in [n.op_type for n in onnx.load(str(tmp_path / "m.onnx")).graph.node]
    checkpoint = imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    got = checkpoint.predict(images[:16])
    assert got.shape == (16, 3, 48, 60)
    assert_matches_pytorch_and_onnx_runtime(got, model, tmp_path / "m.onnx", images[:16])
    np.save(tmp_path / "calibration.npy", images[:32])
    subprocess.run([octet_bin, "quantize", "--checkpoint", str(tmp_path / "m.octet"), "--calib-data",
                    str(tmp_path / "calibration.npy"), "--method", "max", "-o", str(tmp_path / "m.int8")],
                   capture_output=True, text=True, check=True)
    ours = octet.load_quantized(str(tmp_path / "m.int8")).predict(images, dequantize=True)
    expected = checkpoint.predict(images)
    sqnr = 10 * np.log10((expected ** 2).sum() / ((ours - expected) ** 2).sum())
    assert sqnr >= 28, sqnr


def test_depth_to_space_of_tf2onnx_order(tmp_path, octet_bin, images):
    """Mode DCR (channels offset-major, as tf2onnx writes TensorFlow's depth_to_space): a channel shuffle, then
    pixel_shuffle's order. ONNX Runtime is the reference."""
    export_image_model(seeded(Espcn, 404, last=lambda m: m.fc), tmp_path / "m.onnx", IMAGE)
    model = onnx.load(str(tmp_path / "m.onnx"))
    node = next(n for n in model.graph.node if n.op_type == "DepthToSpace")
    mode = next(a for a in node.attribute if a.name == "mode")
    mode.s = b"DCR"
    onnx.save(model, str(tmp_path / "m.onnx"))
    checkpoint = imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    if ort_peer.missing():
        pytest.skip(ort_peer.missing())
    theirs = ort_peer.run(str(tmp_path / "m.onnx"), [images[:8]])[0]
    got = checkpoint.predict(images[:8])
    assert np.abs(got - theirs).max() <= 1e-4 * np.abs(theirs).max()


def test_what_a_transposed_conv_cannot_be_is_refused(tmp_path, octet_bin):
    for attribute, value, fragment in [("group", 3, "group 3 for 32 input channels"),
                                       ("dilations", [2, 2], "dilations [2,2]"),
                                       ("output_shape", [32, 40], "auto_pad or output_shape")]:
        unet(tmp_path / "m.onnx", 405, "k2s2")
        model = onnx.load(str(tmp_path / "m.onnx"))
        node = next(n for n in model.graph.node if n.op_type == "ConvTranspose")
        kept = [a for a in node.attribute if a.name != attribute]
        del node.attribute[:]
        node.attribute.extend(kept + [onnx.helper.make_attribute(attribute, value)])
        onnx.save(model, str(tmp_path / "m.onnx"))
        refused(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet", node.name, fragment)
