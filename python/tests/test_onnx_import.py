"""`octet import model.onnx`: CNNs that torch.onnx.export writes (random
weights, batch-norm statistics that are not the identity) come in as float
checkpoints whose logits match PyTorch's, quantize and evaluate like built-in
models; what octet cannot import is refused naming the node, and nothing is
written."""

import json
import os
import pathlib
import resource
import subprocess

import numpy as np
import pytest

import octet

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
from onnx import helper, numpy_helper  # noqa: E402
from torchscript_onnx import torchscript_export  # noqa: E402

SOURCE_DIR = pathlib.Path(os.environ.get("OCTET_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
nn = torch.nn


class Block(nn.Module):
    """A MobileNet-style block: depthwise 3x3 (stride 1) and pointwise, with a residual."""

    def __init__(self, channels):
        super().__init__()
        self.depthwise = nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False)
        self.bn1 = nn.BatchNorm2d(channels, eps=1e-3)
        self.pointwise = nn.Conv2d(channels, channels, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = torch.relu(self.bn1(self.depthwise(x)))
        return torch.relu(self.bn2(self.pointwise(y)) + x)


class SmallCnn(nn.Module):
    """Conv+BN+ReLU, depthwise 5x5 at stride 2, a grouped conv, a residual
    block, both pools, global pooling, dropout, view(N, -1), two linears and a
    softmax at the end."""

    def __init__(self, flatten_by_view=True):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 12, 3, padding=1, bias=False), nn.BatchNorm2d(12), nn.ReLU())
        self.down = nn.Conv2d(12, 12, 5, stride=2, padding=2, groups=12)
        self.grouped = nn.Conv2d(12, 24, 3, padding=1, groups=3)
        self.block = Block(24)
        self.max_pool = nn.MaxPool2d(2)
        self.avg_pool = nn.AvgPool2d(2, stride=2)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(0.2)
        self.fc1 = nn.Linear(24, 32)
        self.fc2 = nn.Linear(32, 10)
        self.flatten_by_view = flatten_by_view
        self.softmax = True

    def forward(self, x):
        x = torch.relu(self.grouped(torch.relu(self.down(self.stem(x)))))
        x = self.avg_pool(self.max_pool(self.block(x)))
        x = self.gap(x)
        x = x.view(x.size(0), -1) if self.flatten_by_view else torch.flatten(x, 1)
        x = self.fc2(torch.relu(self.fc1(self.dropout(x))))
        return torch.softmax(x, 1) if self.softmax else x


def seeded(make, seed, scale=20, last=lambda model: model.fc):
    """make() with torch's generator at `seed`, in eval mode, the weights of its `last` linear layer times `scale`:
    logits of a few units, so that 1e-4 of the largest sees what the import gets wrong."""
    torch.manual_seed(seed)
    model = make()
    last(model).weight.data *= scale
    return model.eval()


def random_model(seed, **kwargs):
    torch.manual_seed(seed)
    model = SmallCnn(**kwargs)
    for m in model.modules():  # statistics that make folding matter
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.2, 0.2)
    model.fc2.weight.data *= 20  # logits of a few units, so that 1e-4 of the largest sees a batch norm's epsilon
    return model.eval()


def export(model, path, opset=13, **kwargs):
    torchscript_export(model, torch.zeros(1, 3, 32, 32), path, opset_version=opset, input_names=["image"],
                       output_names=["probabilities"], **kwargs)


def run_import(octet_bin, onnx_path, out, *extra):
    return subprocess.run([octet_bin, "import", str(onnx_path), "--dataset", "cifar10", "-o", str(out), *extra],
                          capture_output=True, text=True)


def logits_of(model, images):
    model.softmax = False
    with torch.no_grad():
        out = model(torch.from_numpy(images)).numpy()
    model.softmax = True
    return out


def assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, onnx_path, images):
    """Imports `onnx_path` (the export of `model`) and checks the checkpoint's logits
    against PyTorch's: within 1e-4 of the largest."""
    out = tmp_path / (onnx_path.stem + ".octet")
    result = run_import(octet_bin, onnx_path, out)
    if "built without it" in result.stderr:
        pytest.skip("this octet has no ONNX library: " + result.stderr.strip())
    assert result.returncode == 0, result.stderr
    got = octet.load_checkpoint(str(out)).predict(images)
    with torch.no_grad():
        expected = model(torch.from_numpy(images)).numpy()
    largest = np.abs(expected).max()
    assert largest > 1
    assert np.abs(got - expected).max() <= 1e-4 * largest, (np.abs(got - expected).max(), largest)


@pytest.fixture(scope="module")
def images():
    return np.random.default_rng(3).normal(size=(64, 3, 32, 32)).astype(np.float32)


# torch's exporter folds each batch norm into the conv before it in eval mode;
# TrainingMode.PRESERVE keeps them, for octet to fold at their own epsilon.
@pytest.mark.parametrize("flatten_by_view, keep_batch_norms, folded", [(True, True, 3), (False, False, 0)],
                         ids=["view_reshape_batch_norms", "flatten"])
def test_imported_logits_match_pytorch(tmp_path, octet_bin, images, flatten_by_view, keep_batch_norms, folded):
    model = random_model(1, flatten_by_view=flatten_by_view)
    # The first also has a free batch size: view(x.size(0), -1) then exports as Shape, Gather, Unsqueeze, Concat.
    options = {"training": torch.onnx.TrainingMode.PRESERVE, "dynamic_axes": {"image": {0: "n"}}} if keep_batch_norms else {}
    export(model, tmp_path / "small.onnx", **options)
    kept = sum(n.op_type == "BatchNormalization" for n in onnx.load(str(tmp_path / "small.onnx")).graph.node)
    assert kept == folded
    result = run_import(octet_bin, tmp_path / "small.onnx", tmp_path / "small.octet", "--json", str(tmp_path / "i.json"))
    if "built without it" in result.stderr:
        pytest.skip("this octet has no ONNX library: " + result.stderr.strip())
    assert result.returncode == 0, result.stderr
    assert f"{folded} batch norms folded" in result.stdout, result.stdout
    checkpoint = octet.load_checkpoint(str(tmp_path / "small.octet"))
    assert checkpoint.dataset == "cifar10"
    got = checkpoint.predict(images)
    in_python = octet.import_onnx(str(tmp_path / "small.onnx"), dataset="cifar10")  # the same import, no file
    assert np.array_equal(in_python.predict(images), got)
    expected = logits_of(model, images)
    assert got.shape == expected.shape == (64, 10)
    largest = np.abs(expected).max()
    assert largest > 1
    assert np.abs(got - expected).max() <= 1e-4 * largest, (np.abs(got - expected).max(), largest)


def int8_agreement(tmp_path, octet_bin, model, onnx_path=None):
    """Imports `model` (exported to ONNX, unless `onnx_path` holds it), quantizes it on
    128 CIFAR-10 training images (max) and returns int8's top-1 agreement with float
    on 256 test images (int8's logits dequantized: per-channel weights give each
    class's int32 logit its own scale). Both top-1s are of the logits less float's
    mean over the images: random weights' biases would otherwise pick one class
    for every image (and agree whatever int8 computes); at least 3 classes must win."""
    cifar = os.environ.get("OCTET_CIFAR10_DIR", str(SOURCE_DIR / ".data" / "cifar-10-batches-bin"))
    if not os.path.exists(os.path.join(cifar, "test_batch.bin")):
        pytest.skip(f"CIFAR-10 binary files not found in {cifar} (tools/setup.sh writes them)")
    if onnx_path is None:
        onnx_path = tmp_path / "m.onnx"
        export(model, onnx_path)
    result = run_import(octet_bin, onnx_path, tmp_path / "m.octet")
    if "built without it" in result.stderr:
        pytest.skip("this octet has no ONNX library: " + result.stderr.strip())
    assert result.returncode == 0, result.stderr
    quantize = subprocess.run([octet_bin, "quantize", "--checkpoint", str(tmp_path / "m.octet"), "--data", cifar,
                               "--method", "max", "--calib-samples", "128", "-o", str(tmp_path / "m.int8")],
                              capture_output=True, text=True)
    assert quantize.returncode == 0, quantize.stderr
    checkpoint = octet.load_checkpoint(str(tmp_path / "m.octet"))
    quantized = octet.load_quantized(str(tmp_path / "m.int8"))
    images, _ = octet.load_cifar10(cifar)
    images = octet.normalize(images[:256], checkpoint.mean, checkpoint.std)
    float_logits = checkpoint.predict(images)
    centre = float_logits.mean(0)
    expected = (float_logits - centre).argmax(1)
    assert len(set(expected)) >= 3, np.bincount(expected)
    return np.mean((quantized.predict(images, dequantize=True) - centre).argmax(1) == expected)


def test_imported_model_quantizes_and_evaluates(tmp_path, octet_bin):
    agreement = int8_agreement(tmp_path, octet_bin, random_model(2))
    assert agreement >= 0.8, agreement  # random weights: int8 follows float on most images (0.84)


def refused(tmp_path, octet_bin, onnx_path, *fragments):
    out = tmp_path / "refused.octet"
    result = run_import(octet_bin, onnx_path, out)
    if "built without it" in result.stderr:
        pytest.skip("this octet has no ONNX library: " + result.stderr.strip())
    assert result.returncode == 1, (result.returncode, result.stdout)
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("refused")] == []


class WithSine(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 10, 3)

    def forward(self, x):
        return torch.sin(self.conv(x)).mean((2, 3))


def test_an_unsupported_operator_is_refused_by_node_and_type(tmp_path, octet_bin):
    export(WithSine().eval(), tmp_path / "m.onnx", opset=14)
    refused(tmp_path, octet_bin, tmp_path / "m.onnx", "Sin", "opset 14", "cannot import Sin yet")


class SqueezeExcite(nn.Module):
    def __init__(self, channels, gate):
        super().__init__()
        self.reduce = nn.Conv2d(channels, channels // 2, 1)
        self.expand = nn.Conv2d(channels // 2, channels, 1)
        self.gate = gate

    def forward(self, x):
        s = self.gate(self.expand(torch.relu(self.reduce(nn.functional.adaptive_avg_pool2d(x, 1)))))
        return s * x  # the gate first, as torchvision writes it


class ImageNetOps(nn.Module):
    """The operators of torchvision's ImageNet CNNs on a CIFAR-sized image:
    ReLU6 (Clip), a padded 3x3/2 max pool, a constant per-channel gain and
    offset, HardSwish, squeeze-and-excitation
    with HardSigmoid and Sigmoid gates, an inception-style concat with a
    ceil_mode pool, ShuffleNet's chunk and channel shuffle, SiLU, LeakyReLU,
    a padded average pool counting its padding and a ceil_mode one."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU6())
        self.pool = nn.MaxPool2d(3, stride=2, padding=1)
        self.depthwise = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.se1 = SqueezeExcite(16, nn.Hardsigmoid())
        self.branch_a = nn.Conv2d(16, 8, 1)
        self.branch_b = nn.Conv2d(16, 12, 3, padding=1)
        self.branch_pool = nn.MaxPool2d(3, stride=1, padding=1, ceil_mode=True)
        self.shuffled = nn.Conv2d(18, 18, 3, padding=1, groups=18)
        self.se2 = SqueezeExcite(36, nn.Sigmoid())
        self.avg_counting = nn.AvgPool2d(3, stride=1, padding=1)
        self.ceil_pool = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.fc = nn.Linear(36, 10)
        self.register_buffer("gain", torch.linspace(0.5, 1.5, 16).reshape(16, 1, 1))

    def forward(self, x):
        x = self.pool(self.stem(x)) * self.gain + 0.25  # constants per channel and for all: a 1x1 depthwise conv
        x = nn.functional.hardswish(self.depthwise(x))
        x = self.se1(x)
        x = torch.cat([self.branch_a(x), self.branch_b(x), self.branch_pool(x)], 1)  # 8 + 12 + 16
        left, right = x.chunk(2, dim=1)
        right = nn.functional.silu(self.shuffled(right))
        x = torch.cat([left, right], 1)
        n, c, h, w = x.size()
        x = x.view(n, 2, c // 2, h, w).transpose(1, 2).contiguous().view(n, -1, h, w)
        x = nn.functional.leaky_relu(self.se2(x), 0.1)
        x = self.ceil_pool(self.avg_counting(x))
        x = nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


def imagenet_ops_model(seed):
    torch.manual_seed(seed)
    model = ImageNetOps()
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 2.0)
    model.fc.weight.data *= 20
    return model.eval()


def test_imagenet_operators_import_and_match_pytorch(tmp_path, octet_bin, images):
    model = imagenet_ops_model(7)
    export(model, tmp_path / "ops.onnx", training=torch.onnx.TrainingMode.PRESERVE, dynamic_axes={"image": {0: "n"}})
    types = {n.op_type for n in onnx.load(str(tmp_path / "ops.onnx")).graph.node}
    assert {"Clip", "HardSigmoid", "Sigmoid", "Mul", "Concat", "Transpose", "LeakyRelu", "MaxPool", "AveragePool",
            "Pad"} <= types and types & {"Split", "Slice"}, types
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "ops.onnx", images)


def test_imagenet_operators_quantize_and_follow_float(tmp_path, octet_bin):
    agreement = int8_agreement(tmp_path, octet_bin, imagenet_ops_model(8))
    assert agreement >= 0.8, agreement  # random weights: int8 follows float on most images


class TensorFlowPadding(nn.Module):
    """TensorFlow's "SAME" padding as tf2onnx writes it: a stride-2 conv padding
    only its bottom and right (its own pads, below), a depthwise one after a Pad,
    a Pad before a max pool (zeros that count), a Pad of one side before the Pad
    of an average pool that counts its padding."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, stride=2)
        self.depthwise = nn.Conv2d(8, 8, 3, stride=2, groups=8)
        self.pool = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=True)
        self.fc = nn.Linear(8 * 4 * 5, 10)

    def forward(self, x):
        x = torch.relu(self.stem(nn.functional.pad(x, (0, 1, 0, 1))))
        x = torch.relu(self.depthwise(nn.functional.pad(x, (1, 1, 0, 1))))
        x = nn.functional.max_pool2d(nn.functional.pad(x, (0, 1, 1, 0)), 2)
        x = self.pool(nn.functional.pad(x, (1, 0, 0, 0)))
        return self.fc(x.flatten(1))


def tensorflow_padding_onnx(path, seed):
    """The model, exported, with the stem's Pad made the stem conv's own pads."""
    torch.manual_seed(seed)
    model = TensorFlowPadding().eval()
    model.fc.weight.data *= 20
    export(model, path)
    graph = onnx.load(str(path))
    conv = next(n for n in graph.graph.node if n.op_type == "Conv")
    pad = next(n for n in graph.graph.node if n.op_type == "Pad" and n.output[0] == conv.input[0])
    conv.input[0] = pad.input[0]
    next(a for a in conv.attribute if a.name == "pads").ints[:] = [0, 0, 1, 1]  # F.pad's (0, 1, 0, 1)
    graph.graph.node.remove(pad)
    while True:  # the nodes that computed its pads, now read by none
        read = {name for n in graph.graph.node for name in n.input} | {o.name for o in graph.graph.output}
        dead = [n for n in graph.graph.node if not set(n.output) & read]
        if not dead:
            break
        for n in dead:
            graph.graph.node.remove(n)
    onnx.checker.check_model(graph)
    onnx.save(graph, str(path))
    return model


def test_padding_of_each_side_apart_imports_and_matches_pytorch(tmp_path, octet_bin, images):
    model = tensorflow_padding_onnx(tmp_path / "tf.onnx", 11)
    graph = onnx.load(str(tmp_path / "tf.onnx")).graph
    assert [a.ints for n in graph.node if n.op_type == "Conv" for a in n.attribute if a.name == "pads"][0] == [0, 0, 1, 1]
    assert sum(n.op_type == "Pad" for n in graph.node) == 4  # torch writes the average pool's padding as one
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "tf.onnx", images)


def test_padding_of_each_side_apart_quantizes_and_follows_float(tmp_path, octet_bin):
    tensorflow_padding_onnx(tmp_path / "tf.onnx", 12)
    assert int8_agreement(tmp_path, octet_bin, None, tmp_path / "tf.onnx") >= 0.9


class Atrous(nn.Module):
    """DeepLab's atrous convolutions: a dense one at dilation 2, a depthwise one at
    dilation 3, a stride-2 one at dilation 2 that pads more on one side."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 12, 3, padding=2, dilation=2)
        self.depthwise = nn.Conv2d(12, 12, 3, padding=3, dilation=3, groups=12)
        self.down = nn.Conv2d(12, 16, 3, stride=2, dilation=2)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.depthwise(torch.relu(self.stem(x))))
        x = torch.relu(self.down(nn.functional.pad(x, (1, 2, 1, 2))))
        return self.fc(nn.functional.adaptive_avg_pool2d(x, 1).flatten(1))


def conv_attributes(path, name):
    return [list(a.ints) for n in onnx.load(str(path)).graph.node if n.op_type == "Conv" for a in n.attribute
            if a.name == name]


def test_dilated_convolutions_import_and_match_pytorch(tmp_path, octet_bin, images):
    model = seeded(Atrous, 13)
    export(model, tmp_path / "atrous.onnx")
    dilations = conv_attributes(tmp_path / "atrous.onnx", "dilations")
    assert dilations == [[2, 2], [3, 3], [2, 2]], dilations
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "atrous.onnx", images)


def test_dilated_convolutions_quantize_and_follow_float(tmp_path, octet_bin):
    assert int8_agreement(tmp_path, octet_bin, seeded(Atrous, 14)) >= 0.9


class Factorised(nn.Module):
    """Inception-v3's non-square kernels: 1x7 then 7x1 (padded 3 along the long side),
    a 1x3 and a 3x1 side by side and concatenated, and a strided 3x5 with dilation 2."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 12, 3, padding=1)
        self.wide = nn.Conv2d(12, 10, (1, 7), padding=(0, 3))
        self.tall = nn.Conv2d(10, 12, (7, 1), padding=(3, 0))
        self.left = nn.Conv2d(12, 8, (1, 3), padding=(0, 1))
        self.right = nn.Conv2d(12, 8, (3, 1), padding=(1, 0))
        self.down = nn.Conv2d(16, 16, (3, 5), stride=2, padding=2, dilation=2)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.tall(torch.relu(self.wide(torch.relu(self.stem(x))))))
        x = torch.cat([torch.relu(self.left(x)), torch.relu(self.right(x))], 1)
        x = torch.relu(self.down(x))
        return self.fc(nn.functional.adaptive_avg_pool2d(x, 1).flatten(1))


def test_non_square_kernels_import_and_match_pytorch(tmp_path, octet_bin, images):
    model = seeded(Factorised, 15)
    export(model, tmp_path / "factorised.onnx")
    kernels = conv_attributes(tmp_path / "factorised.onnx", "kernel_shape")
    assert kernels == [[3, 3], [1, 7], [7, 1], [1, 3], [3, 1], [3, 5]], kernels
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "factorised.onnx", images)


def test_non_square_kernels_quantize_and_follow_float(tmp_path, octet_bin):
    assert int8_agreement(tmp_path, octet_bin, seeded(Factorised, 16)) >= 0.9


def import_sized(octet_bin, onnx_path, out, *options):
    return subprocess.run([octet_bin, "import", str(onnx_path), "-o", str(out), *options], capture_output=True,
                          text=True)


def test_dynamic_height_and_width_take_input_size_or_the_dataset(tmp_path, octet_bin):
    model = random_model(4, flatten_by_view=False)
    export(model, tmp_path / "m.onnx", dynamic_axes={"image": {0: "n", 2: "h", 3: "w"}})
    plain = import_sized(octet_bin, tmp_path / "m.onnx", tmp_path / "plain.octet")
    if "built without it" in plain.stderr:
        pytest.skip("this octet has no ONNX library: " + plain.stderr.strip())
    assert plain.returncode == 1, plain.stdout
    assert "input 'image': its height (dimension 2) is dynamic ('h')" in plain.stderr, plain.stderr
    assert "--input-size H W" in plain.stderr, plain.stderr
    assert not (tmp_path / "plain.octet").exists()

    result = import_sized(octet_bin, tmp_path / "m.onnx", tmp_path / "sized.octet", "--input-size", "40", "48",
                          "--json", str(tmp_path / "sized.json"))
    assert result.returncode == 0, result.stderr
    assert "3x40x48 images, sized by --input-size" in result.stdout, result.stdout
    described = json.loads((tmp_path / "sized.json").read_text())
    assert described["input"] == [3, 40, 48] and described["input_sized_by_options"], described
    images = np.random.default_rng(8).normal(size=(16, 3, 40, 48)).astype(np.float32)
    got = octet.load_checkpoint(str(tmp_path / "sized.octet")).predict(images)
    expected = logits_of(model, images)
    assert np.abs(got - expected).max() <= 1e-4 * np.abs(expected).max(), np.abs(got - expected).max()
    in_python = octet.import_onnx(str(tmp_path / "m.onnx"), input_size=(40, 48))
    assert np.array_equal(in_python.predict(images), got)
    square = octet.import_onnx(str(tmp_path / "m.onnx"), input_size=40)
    assert square.predict(images[:, :, :, :40]).shape == (16, 10)
    assert np.array_equal(octet.import_onnx(str(tmp_path / "m.onnx"), input_size=np.array([40, 48])).predict(images),
                          got)
    for wrong in [(40, 48, 3), "ab", 40.5]:
        with pytest.raises(Exception, match="input_size must be None, an int or"):
            octet.import_onnx(str(tmp_path / "m.onnx"), input_size=wrong)

    result = run_import(octet_bin, tmp_path / "m.onnx", tmp_path / "cifar.octet")  # --dataset cifar10: 32x32
    assert result.returncode == 0, result.stderr
    assert "3x32x32 images, sized by the dataset" in result.stdout, result.stdout
    images = np.random.default_rng(9).normal(size=(16, 3, 32, 32)).astype(np.float32)
    got = octet.load_checkpoint(str(tmp_path / "cifar.octet")).predict(images)
    expected = logits_of(model, images)
    assert np.abs(got - expected).max() <= 1e-4 * np.abs(expected).max(), np.abs(got - expected).max()


def test_an_input_size_the_file_or_dataset_contradicts_is_refused(tmp_path, octet_bin):
    export(random_model(4), tmp_path / "fixed.onnx")  # 3 x 32 x 32
    export(random_model(4), tmp_path / "free.onnx", dynamic_axes={"image": {0: "n", 2: "h", 3: "w"}})
    cases = [("fixed.onnx", ["--input-size", "28"], "its height (dimension 2) is 32 in the file, and --input-size "
              "says 28"),
             ("fixed.onnx", ["--input-size", "32", "30"], "its width (dimension 3) is 32 in the file, and --input-size "
              "says 30"),
             ("free.onnx", ["--input-size", "0", "32"], "must be a height and width of 1 to 65535"),
             ("free.onnx", ["--input-size", "28", "--dataset", "cifar10"], "cifar10's are 3x32x32"),
             ("free.onnx", ["--input-size", "1", "2", "3"], "--input-size"),
             ("model.pt", ["--model", "resnet20", "--input-size", "32"], "--input-size is for ONNX files")]
    for name, options, fragment in cases:
        out = tmp_path / "refused.octet"
        result = import_sized(octet_bin, tmp_path / name, out, *options)
        if "built without it" in result.stderr:
            pytest.skip("this octet has no ONNX library: " + result.stderr.strip())
        assert result.returncode != 0 and fragment in result.stderr, (options, result.stderr)
        assert not out.exists()
    fixed = import_sized(octet_bin, tmp_path / "fixed.onnx", tmp_path / "fixed.octet", "--input-size", "32")
    assert fixed.returncode == 0 and "3x32x32 images)" in fixed.stdout, fixed.stdout + fixed.stderr


def test_wrong_dataset_shape_and_old_opsets_are_refused(tmp_path, octet_bin):
    export(random_model(5), tmp_path / "m.onnx")
    result = subprocess.run([octet_bin, "import", str(tmp_path / "m.onnx"), "--dataset", "fashion-mnist", "-o",
                             str(tmp_path / "x.octet")], capture_output=True, text=True)
    if "built without it" in result.stderr:
        pytest.skip("this octet has no ONNX library")
    assert result.returncode == 1 and "3x32x32" in result.stderr and "1x28x28" in result.stderr, result.stderr
    export(random_model(5), tmp_path / "old.onnx", opset=9)
    model = onnx.load(str(tmp_path / "old.onnx"))
    model.opset_import[0].version = 6  # older than ONNX's version converter is asked to take
    onnx.save(model, str(tmp_path / "older.onnx"))
    refused(tmp_path, octet_bin, tmp_path / "older.onnx", "opset 6 is outside the opsets octet imports (7 to 27")


def test_truncated_non_finite_and_cyclic_files_are_refused(tmp_path, octet_bin):
    export(random_model(6), tmp_path / "m.onnx")
    data = (tmp_path / "m.onnx").read_bytes()
    (tmp_path / "truncated.onnx").write_bytes(data[: len(data) // 2])
    refused(tmp_path, octet_bin, tmp_path / "truncated.onnx", "truncated.onnx")

    model = onnx.load(str(tmp_path / "m.onnx"))
    weight = next(t for t in model.graph.initializer if t.name == "fc1.weight")
    values = numpy_helper.to_array(weight).copy()
    values[3, 5] = np.nan
    weight.CopyFrom(numpy_helper.from_array(values, "fc1.weight"))
    onnx.save(model, str(tmp_path / "nan.onnx"))
    refused(tmp_path, octet_bin, tmp_path / "nan.onnx", "fc1.weight", "NaN")

    model = onnx.load(str(tmp_path / "m.onnx"))
    nodes = list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(nodes[1:] + nodes[:1])  # the first node last: its consumers read before it writes
    onnx.save(model, str(tmp_path / "cycle.onnx"))
    refused(tmp_path, octet_bin, tmp_path / "cycle.onnx", nodes[1].name, "before any node writes it")


def test_a_graph_built_by_hand_with_a_concat_of_rows_names_the_node(tmp_path, octet_bin):
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 3, 32, 32])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 3, 64, 32])
    graph = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["y"], name="join", axis=2)], "g", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(tmp_path / "concat.onnx"))
    refused(tmp_path, octet_bin, tmp_path / "concat.onnx", "node 'join' (Concat, opset 13)", "axis 2")


def test_a_node_with_too_few_or_too_many_inputs_is_refused_by_its_schema(tmp_path, octet_bin):
    # Found by the fuzzer: an Identity without an input was read at input 0.
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 3, 32, 32])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 3, 32, 32])
    for name, node, count in (("bare", helper.make_node("Identity", [], ["y"], name="bare"), "inputs: 0 (ONNX says 1)"),
                              ("wide", helper.make_node("Relu", ["x", "x"], ["y"], name="wide"), "inputs: 2 (ONNX says 1)"),
                              ("add1", helper.make_node("Add", ["x"], ["y"], name="add1"), "inputs: 1 (ONNX says 2)")):
        graph = helper.make_graph([node], "g", [x], [y])
        path = tmp_path / f"{name}.onnx"
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
        refused(tmp_path, octet_bin, path, f"node '{name}' (", count)


def test_shape_arithmetic_that_would_not_end_is_refused_by_node(tmp_path, octet_bin):
    # Found by the fuzzer: a reshape of no values to [-1, 2^57] gave a transpose 2^57 columns to walk.
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 3, 32, 32])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 3, 32, 32])
    nothing = numpy_helper.from_array(np.zeros(0, np.int64), "nothing")
    huge = numpy_helper.from_array(np.array([-1, 2 ** 57], np.int64), "huge")
    nodes = [helper.make_node("Reshape", ["nothing", "huge"], ["rows"], name="wide_rows"),
             helper.make_node("Transpose", ["rows"], ["columns"], perm=[1, 0]), helper.make_node("Relu", ["x"], ["y"])]
    graph = helper.make_graph(nodes, "g", [x], [y], [nothing, huge])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(tmp_path / "wide.onnx"))
    refused(tmp_path, octet_bin, tmp_path / "wide.onnx", "node 'wide_rows' (Reshape", "to [-1,144115188075855872]")
    # A shape doubled by each of 13 Concats: 4 x 2^13 values.
    nodes = [helper.make_node("Shape", ["x"], ["s0"])]
    nodes += [helper.make_node("Concat", [f"s{k}", f"s{k}"], [f"s{k + 1}"], name=f"double{k}", axis=0)
              for k in range(13)]
    nodes.append(helper.make_node("Relu", ["x"], ["y"]))
    graph = helper.make_graph(nodes, "g", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(tmp_path / "doubled.onnx"))
    refused(tmp_path, octet_bin, tmp_path / "doubled.onnx", "node 'double10'", "a shape computation of 8192 values")


def test_a_tensor_whose_dimensions_promise_more_than_it_holds_is_refused_before_allocating(tmp_path, octet_bin):
    # Found by the fuzzer: a weight's dimensions made 2 GB of floats before its 64 bytes were counted.
    export(random_model(7), tmp_path / "m.onnx")
    model = onnx.load(str(tmp_path / "m.onnx"))
    weight = next(t for t in model.graph.initializer if t.name == "fc1.weight")
    weight.dims[:] = [2 ** 15, 2 ** 15]
    onnx.save(model, str(tmp_path / "inflated.onnx"))
    # This child's own peak (os.wait4), not RUSAGE_CHILDREN's, the largest of every child so far. Linux starts a
    # child's peak at its parent's (what the vfork'ed child shared until exec), so it is held under 1 GB or
    # pytest's own peak: the CI's pytest passes 1 GB, and its children with it.
    out = tmp_path / "inflated.octet"
    child = subprocess.Popen([octet_bin, "import", str(tmp_path / "inflated.onnx"), "--dataset", "cifar10", "-o",
                              str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stderr = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if "built without it" in stderr:
        pytest.skip("this octet has no ONNX library: " + stderr.strip())
    assert child.returncode == 1 and "fc1.weight" in stderr and "for 1073741824 floats" in stderr, stderr
    assert not out.exists()
    assert usage.ru_maxrss <= max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, 1 << 20), usage.ru_maxrss  # KB
