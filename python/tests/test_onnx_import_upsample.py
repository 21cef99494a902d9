"""`octet import` of CNNs that resize images by nearest neighbours: HRNet's
fuse layers (each coarse branch brought up to the finer one by
nn.Upsample(scale_factor=2 ** k) and added to it), an FPN's top-down path
(F.interpolate to the finer feature's size: Resize's sizes from Shape
arithmetic; at an odd size, 16 x 14 pixels to 31 x 27, no whole factor, as an
FPN meets at inputs no power of two divides), a downsample by
F.interpolate(scale_factor=0.5), a 1-D one (a
Conv1d net upsampling its sequence), a stretch across only, and GhostNetV2's
DFC attention (a half-resolution gate interpolated to the output's size). PyTorch's
logits are the reference; ONNX Runtime runs the file and octet's int8 export
as well. Cubic resizing, nearest ratios that are neither repeats nor steps and
bilinear scales that are not the sizes' ratio are refused naming the node."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from test_onnx_import import seeded  # noqa: E402
from unlabelled_import import assert_int8_follows_float_and_exports, assert_matches_pytorch_and_onnx_runtime  # noqa
from unlabelled_import import export_image_model, imported, randomise_batch_norms, refused, varied_inputs  # noqa: E402

nn = torch.nn
F = torch.nn.functional


def conv_bn(c_in, c_out, stride=1, kernel=3, relu=True):
    layers = [nn.Conv2d(c_in, c_out, kernel, stride, kernel // 2, bias=False), nn.BatchNorm2d(c_out)]
    return nn.Sequential(*layers, nn.ReLU()) if relu else nn.Sequential(*layers)


class HRNetFuse(nn.Module):
    """Three branches at 1, 1/2 and 1/4 of the stem's resolution, fused as HRNet does: into the finest, the
    others by a 1x1 conv and an Upsample of 2 and 4; into the middle, the finest by a stride-2 conv and the
    coarsest by an Upsample of 2. A classifier reads the pooled branches."""

    def __init__(self):
        super().__init__()
        self.stem = conv_bn(3, 16)
        self.down1, self.down2 = conv_bn(16, 24, 2), conv_bn(24, 32, 2)
        self.to_fine = nn.ModuleList([conv_bn(24, 16, kernel=1, relu=False), conv_bn(32, 16, kernel=1, relu=False)])
        self.up = nn.ModuleList([nn.Upsample(scale_factor=2, mode="nearest"), nn.Upsample(scale_factor=4)])
        self.fine_to_middle, self.coarse_to_middle = conv_bn(16, 24, 2, relu=False), conv_bn(32, 24, 1, 1, False)
        self.fc = nn.Linear(16 + 24, 10)

    def forward(self, x):
        fine = self.stem(x)
        middle = self.down1(fine)
        coarse = self.down2(middle)
        fused_fine = F.relu(fine + self.up[0](self.to_fine[0](middle)) + self.up[1](self.to_fine[1](coarse)))
        fused_middle = F.relu(middle + self.fine_to_middle(fine) + self.up[0](self.coarse_to_middle(coarse)))
        return self.fc(torch.cat([fused_fine.mean((2, 3)), fused_middle.mean((2, 3))], 1))


class TopDown(nn.Module):
    """An FPN's top-down path (`form` "sizes": F.interpolate to the finer feature's size), or a downsample by
    half ("half"), or a stretch of the width only ("across")."""

    def __init__(self, form):
        super().__init__()
        self.form = form
        self.fine, self.coarse = conv_bn(3, 16), conv_bn(16, 16, 2)
        self.lateral = nn.Conv2d(16, 16, 1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        fine = self.fine(x)
        coarse = self.coarse(fine)
        if self.form == "sizes":
            y = self.lateral(fine) + F.interpolate(coarse, size=fine.shape[-2:], mode="nearest")
        elif self.form == "half":
            y = self.lateral(F.interpolate(fine, scale_factor=0.5, mode="nearest")) + coarse
        else:
            y = F.interpolate(self.lateral(coarse), scale_factor=(1, 2), mode="nearest") + fine[..., ::2, :]
        return self.fc(F.relu(y).mean((2, 3)))


class GhostV2(nn.Module):
    """GhostNetV2's DFC attention: a Ghost module's output gated, pixel by pixel and channel by channel, by the
    sigmoid of a half-resolution branch (a 1x1 conv, 1x5 and 5x1 depthwise convs) that F.interpolate brings up
    to the output's size."""

    def __init__(self, oup=24):
        super().__init__()
        self.oup = oup
        self.stem = conv_bn(3, 16, 2)
        self.primary, self.cheap = conv_bn(16, oup // 2, kernel=1), nn.Sequential(
            nn.Conv2d(oup // 2, oup // 2, 3, 1, 1, groups=oup // 2, bias=False), nn.BatchNorm2d(oup // 2), nn.ReLU())
        self.short = nn.Sequential(conv_bn(16, oup, kernel=1, relu=False),
                                   nn.Conv2d(oup, oup, (1, 5), 1, (0, 2), groups=oup, bias=False), nn.BatchNorm2d(oup),
                                   nn.Conv2d(oup, oup, (5, 1), 1, (2, 0), groups=oup, bias=False), nn.BatchNorm2d(oup))
        self.fc = nn.Linear(oup, 10)

    def forward(self, x):
        x = self.stem(x)
        gate = self.short(F.avg_pool2d(x, kernel_size=2, stride=2)).sigmoid()
        primary = self.primary(x)
        out = torch.cat([primary, self.cheap(primary)], 1)
        out = out[:, :self.oup] * F.interpolate(gate, size=(out.shape[-2], out.shape[-1]), mode="nearest")
        return self.fc(out.mean((2, 3)))


class Sequence(nn.Module):
    """A 1-D CNN of [N, C, L] values: a strided Conv1d's output upsampled back to its input's length."""

    def __init__(self):
        super().__init__()
        self.fine, self.coarse = nn.Conv1d(3, 16, 3, padding=1), nn.Conv1d(3, 16, 3, 2, 1)
        self.up = nn.Upsample(scale_factor=2)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc(F.relu(self.fine(x) + self.up(self.coarse(x))).mean(2))


FORMS = {"hrnet": (HRNetFuse, (3, 32, 32)), "sizes": (lambda: TopDown("sizes"), (3, 32, 32)),
         "odd_sizes": (lambda: TopDown("sizes"), (3, 31, 27)),
         "half": (lambda: TopDown("half"), (3, 32, 32)), "across": (lambda: TopDown("across"), (3, 32, 32)),
         "ghostnetv2": (GhostV2, (3, 32, 32)), "one_row": (Sequence, (3, 64))}


def inputs(form):
    return varied_inputs(31, 64, FORMS[form][1])


def exported(path, seed, form):
    make, shape = FORMS[form]
    return export_image_model(randomise_batch_norms(seeded(make, seed, scale=60)), path, shape)


@pytest.mark.parametrize("form", FORMS)
def test_nearest_resizes_import_and_match_pytorch_and_onnx_runtime(tmp_path, octet_bin, form):
    model = exported(tmp_path / "m.onnx", 141, form)
    ops = [n.op_type for n in onnx.load(str(tmp_path / "m.onnx")).graph.node]
    assert "Resize" in ops, ops
    checkpoint = imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    images = inputs(form)
    assert_matches_pytorch_and_onnx_runtime(checkpoint.predict(images), model, tmp_path / "m.onnx", images)


@pytest.mark.parametrize("form", ["hrnet", "sizes", "odd_sizes", "ghostnetv2", "one_row"])
def test_nearest_resizes_quantize_follow_float_and_export(tmp_path, octet_bin, form):
    exported(tmp_path / "m.onnx", 142, form)
    imported(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet")
    images = inputs(form)
    as_exported = images[:, :, None, :] if form == "one_row" else images  # octet's 1-D values are C x 1 x L
    assert_int8_follows_float_and_exports(tmp_path, octet_bin, tmp_path / "m.octet", images, as_exported)


def with_resize(path, **attributes):
    """The HRNet export with its first Resize's attributes set (then its name)."""
    model = onnx.load(str(path))
    resize = next(n for n in model.graph.node if n.op_type == "Resize")
    kept = [a for a in resize.attribute if a.name not in attributes]
    del resize.attribute[:]
    resize.attribute.extend(kept + [onnx.helper.make_attribute(key, value) for key, value in attributes.items()])
    onnx.save(model, str(path))
    return resize.name


def test_cubic_bilinear_of_asymmetric_pixels_and_ratios_that_are_not_whole_are_refused(tmp_path, octet_bin):
    """(Bilinear with pixel centres or corners aligned imports, to any size: test_onnx_import_dense_output.py.)
    TensorFlow 1's resize_bilinear without half_pixel_centers (asymmetric) and bilinear by a scale that is not the
    sizes' ratio are refused; nearest resizes that are neither repeats nor steps too."""
    exported(tmp_path / "m.onnx", 143, "hrnet")
    name = with_resize(tmp_path / "m.onnx", mode="cubic")
    refused(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet", name, "mode 'cubic'")
    exported(tmp_path / "m.onnx", 143, "hrnet")
    name = with_resize(tmp_path / "m.onnx", mode="linear", coordinate_transformation_mode="asymmetric")
    refused(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet", name,
            "mode 'linear' with coordinate_transformation_mode 'asymmetric'")
    exported(tmp_path / "m.onnx", 143, "half")  # 32 pixels to 15 by 0.49, not 15 / 32
    name = with_resize(tmp_path / "m.onnx", mode="linear", coordinate_transformation_mode="half_pixel")
    model = onnx.load(str(tmp_path / "m.onnx"))
    scales = next(n for n in model.graph.node if n.output[0] == next(
        r for r in model.graph.node if r.op_type == "Resize").input[2])
    scales.attribute[0].t.CopyFrom(onnx.numpy_helper.from_array(np.array([1, 1, 0.49, 0.49], np.float32)))
    onnx.save(model, str(tmp_path / "m.onnx"))
    refused(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet", name,
            "mode 'linear' resizing 32 pixels to 15 by scale 0.490000: octet places the pixels by the sizes' ratio")
    exported(tmp_path / "m.onnx", 143, "hrnet")
    name = with_resize(tmp_path / "m.onnx", coordinate_transformation_mode="align_corners")
    refused(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet", name, "align_corners",
            "neither each repeated a whole number of times", "nor pixel floor(o x in / out)")
    exported(tmp_path / "m.onnx", 143, "hrnet")
    name = with_resize(tmp_path / "m.onnx", coordinate_transformation_mode="asymmetric",
                       nearest_mode="round_prefer_ceil")
    refused(octet_bin, tmp_path / "m.onnx", tmp_path / "m.octet", name, "round_prefer_ceil")
