"""`octet import` of normalisations over groups of channels, octet's `group_norm`:
torch's GroupNorm as its exporter writes it (Reshape to [N, g, -1],
InstanceNormalization, Reshape back, Mul and Add of its affine), InstanceNorm2d
(InstanceNormalization of the image) and ONNX's GroupNormalization (opset 18: a
scale and bias per group; 21: per channel). PyTorch's logits are the reference;
ONNX Runtime runs the files as well."""

import subprocess

import numpy as np
import octet
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
import ort_peer  # noqa: E402
from onnx import helper, numpy_helper  # noqa: E402
from test_onnx_import import images  # noqa: E402,F401 (the fixture)
from test_onnx_import import assert_imports_as_pytorch_computes, export, int8_agreement, refused, seeded  # noqa: E402

nn = torch.nn


class GroupNormNet(nn.Module):
    """A stem with GroupNorm, a ResNet-GN basic block (GroupNorm(8) after each conv, the second
    before the residual add), an InstanceNorm2d with its affine, pooled into a linear layer."""

    def __init__(self, groups=8):
        super().__init__()
        self.stem = nn.Conv2d(3, 32, 3, padding=1)
        self.gn0 = nn.GroupNorm(groups, 32)
        self.conv1 = nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.gn1 = nn.GroupNorm(groups, 32)
        self.conv2 = nn.Conv2d(32, 32, 3, padding=1, bias=False)
        self.gn2 = nn.GroupNorm(groups, 32)
        self.instance = nn.InstanceNorm2d(32, affine=True)
        self.fc = nn.Linear(32, 10)
        for norm in (self.gn0, self.gn1, self.gn2, self.instance):  # an affine that is not 1 and 0
            norm.weight.data.uniform_(0.5, 1.5)
            norm.bias.data.uniform_(-0.3, 0.3)

    def forward(self, x):
        x = torch.relu(self.gn0(self.stem(x)))
        x = torch.relu(x + self.gn2(self.conv2(torch.relu(self.gn1(self.conv1(x))))))
        x = torch.relu(self.instance(nn.functional.max_pool2d(x, 2)))
        return self.fc(nn.functional.adaptive_avg_pool2d(x, 1).flatten(1))


def ort_matches(path, model, images):
    if ort_peer.missing():
        pytest.skip(ort_peer.missing())
    with torch.no_grad():
        expected = model(torch.from_numpy(images[:2])).numpy()
    got = np.concatenate([ort_peer.run(path, [images[i:i + 1]])[0] for i in range(2)])
    assert np.abs(got - expected).max() <= 1e-4 * np.abs(expected).max()


def test_torch_group_norm_and_instance_norm_import_and_match_pytorch_and_onnx_runtime(tmp_path, octet_bin, images):
    model = seeded(GroupNormNet, 71)
    export(model, tmp_path / "gn.onnx")
    ops = [n.op_type for n in onnx.load(str(tmp_path / "gn.onnx")).graph.node]
    assert ops.count("InstanceNormalization") == 4 and ops.count("Reshape") == 6, ops
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "gn.onnx", images)
    ort_matches(tmp_path / "gn.onnx", model, images)
    # Each affine is the group_norm's own (its Mul and Add folded in), not a depthwise conv of its own.
    summary = subprocess.run([octet_bin, "summary", "--checkpoint", str(tmp_path / "gn.octet")], capture_output=True,
                             text=True, check=True).stdout
    ops = [line.split()[1] for line in summary.splitlines()[1:] if len(line.split()) > 2]
    assert ops.count("group_norm") == 4 and ops.count("conv2d") == 3, summary


def test_group_norm_quantizes_follows_float_and_exports(tmp_path, octet_bin, images):
    assert int8_agreement(tmp_path, octet_bin, seeded(GroupNormNet, 72)) >= 0.85  # 0.89
    # The ReLUs after gn0, gn1 and the InstanceNorm are fused into them, their outputs stored unsigned.
    norms = [layer for layer in octet.load_quantized(str(tmp_path / "m.int8")).layers if layer["op"] == "group_norm"]
    assert [(n["relu"], n["zero_point"]) for n in norms] == [(True, -128), (True, -128), (False, 0), (True, -128)]
    # The quantized model's QDQ export (each group_norm as torch writes GroupNorm, between DequantizeLinear and
    # QuantizeLinear) runs in ONNX Runtime as octet's int8 does (1.4e-6 of the largest logit apart when written).
    subprocess.run([octet_bin, "export", "--quantized", str(tmp_path / "m.int8"), "--onnx", str(tmp_path / "q.onnx")],
                   capture_output=True, text=True, check=True)
    assert [n.op_type for n in onnx.load(str(tmp_path / "q.onnx")).graph.node].count("InstanceNormalization") == 4
    if ort_peer.missing():
        pytest.skip(ort_peer.missing())
    ours = octet.load_quantized(str(tmp_path / "m.int8")).predict(images[:16], dequantize=True)
    theirs = np.concatenate([ort_peer.run(tmp_path / "q.onnx", [images[i:i + 1]])[0] for i in range(16)])
    assert np.abs(ours - theirs).max() <= 1e-3 * np.abs(ours).max(), (np.abs(ours - theirs).max(), np.abs(ours).max())


def as_group_normalization(path, opset):
    """The exported file with each of torch's GroupNorm chains (Reshape, InstanceNormalization, Reshape, Mul,
    Add) made one GroupNormalization of that opset: its scale and bias per group at 18 (the model's affine is
    the same within each group), per channel from 21."""
    written = onnx.load(str(path))
    nodes = written.graph.node
    by_input = {}
    for n in nodes:
        for i in n.input:
            by_input.setdefault(i, []).append(n)
    by_output = {o: n for n in nodes for o in n.output}
    weights = {t.name: numpy_helper.to_array(t) for t in written.graph.initializer}
    for norm in [n for n in nodes if n.op_type == "InstanceNormalization"]:
        view = by_output[norm.input[0]]
        if view.op_type != "Reshape":
            continue
        back = by_input[norm.output[0]][0]
        mul = by_input[back.output[0]][0]
        add = by_input[mul.output[0]][0]
        groups = int(numpy_helper.to_array(next(a.t for a in by_output[view.input[1]].attribute))[1])
        scale, shift = weights[mul.input[1]].reshape(-1), weights[add.input[1]].reshape(-1)
        if opset < 21:
            scale, shift = scale.reshape(groups, -1)[:, 0], shift.reshape(groups, -1)[:, 0]
        name = norm.name + "_group"
        written.graph.initializer.extend([numpy_helper.from_array(scale, name + ".scale"),
                                          numpy_helper.from_array(shift, name + ".bias")])
        epsilon = next(a.f for a in norm.attribute if a.name == "epsilon")
        nodes.insert(list(nodes).index(add), helper.make_node(
            "GroupNormalization", [view.input[0], name + ".scale", name + ".bias"], list(add.output), name=name,
            num_groups=groups, epsilon=epsilon))
        for step in (view, norm, back, mul, add, by_output[back.input[1]]):
            nodes.remove(step)
    written.opset_import[0].version = opset
    onnx.save(written, str(path))


class GroupedAffine(GroupNormNet):
    """GroupNormNet with each GroupNorm's scale and bias the same within a group (GroupNormalization-18's)."""

    def __init__(self):
        super().__init__()
        for norm in (self.gn0, self.gn1, self.gn2):
            norm.weight.data = norm.weight.data.view(8, -1)[:, :1].expand(8, 4).reshape(-1).clone()
            norm.bias.data = norm.bias.data.view(8, -1)[:, :1].expand(8, 4).reshape(-1).clone()


@pytest.mark.parametrize("opset", [18, 21])
def test_group_normalization_imports_and_matches_pytorch(tmp_path, octet_bin, images, opset):
    model = seeded(GroupedAffine, 73)
    export(model, tmp_path / "gn.onnx")
    as_group_normalization(tmp_path / "gn.onnx", opset)
    ops = [n.op_type for n in onnx.load(str(tmp_path / "gn.onnx")).graph.node]
    assert ops.count("GroupNormalization") == 3 and ops.count("InstanceNormalization") == 1, ops
    assert_imports_as_pytorch_computes(tmp_path, octet_bin, model, tmp_path / "gn.onnx", images)
    ort_matches(tmp_path / "gn.onnx", model, images)


def test_groups_that_do_not_divide_the_channels_are_refused(tmp_path, octet_bin):
    export(seeded(GroupedAffine, 74), tmp_path / "gn.onnx")
    as_group_normalization(tmp_path / "gn.onnx", 21)
    written = onnx.load(str(tmp_path / "gn.onnx"))
    first = next(n for n in written.graph.node if n.op_type == "GroupNormalization")
    next(a for a in first.attribute if a.name == "num_groups").i = 5
    onnx.save(written, str(tmp_path / "gn.onnx"))
    refused(tmp_path, octet_bin, tmp_path / "gn.onnx", first.name, "5 groups of the 32 channels")
