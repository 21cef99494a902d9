"""PyTorch weights in: octet.from_torch and `octet import` on torch models built
here with random weights (octet's and torchvision-style names), checked
against torch's own float logits, and the refusal of state_dicts that do not
match the model."""

import os
import subprocess
from collections import OrderedDict

import numpy as np
import pytest

import octet

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional


class BasicBlockA(nn.Module):
    """ResNet-20's block with option A shortcuts (akamaster's pytorch_resnet_cifar10)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.pad = (cout - cin) // 2 if stride != 1 or cin != cout else None

    def forward(self, x):
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        shortcut = x if self.pad is None else F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, self.pad, self.pad))
        return F.relu(y + shortcut)


class BasicBlockB(nn.Module):
    """ResNet-18's block with a 1x1 conv + BN projection, torchvision's names (downsample)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(y + (x if self.downsample is None else self.downsample(x)))


class CifarResNet(nn.Module):
    def __init__(self, block, widths, blocks, classifier="linear"):
        super().__init__()
        self.conv1 = nn.Conv2d(3, widths[0], 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        cin = widths[0]
        for stage, width in enumerate(widths):
            layers = []
            for index in range(blocks):
                layers.append(block(cin, width, 2 if stage > 0 and index == 0 else 1))
                cin = width
            setattr(self, f"layer{stage + 1}", nn.Sequential(*layers))
        self.classifier = classifier
        setattr(self, classifier, nn.Linear(cin, 10))
        self.stages = len(widths)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        for stage in range(self.stages):
            x = getattr(self, f"layer{stage + 1}")(x)
        return getattr(self, self.classifier)(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def resnet20(classifier="linear"):
    return CifarResNet(BasicBlockA, [16, 32, 64], 3, classifier)


def resnet18_torchvision_names():
    return CifarResNet(BasicBlockB, [64, 128, 256, 512], 2, classifier="fc")


def randomized(model, seed):
    """Random weights and batch-norm statistics, so that every tensor matters."""
    torch.manual_seed(seed)
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            if name.endswith("running_var"):
                tensor.uniform_(0.5, 2.0)
            elif name.endswith("num_batches_tracked"):
                tensor.fill_(7)
            elif name.endswith("weight") and tensor.dim() == 1:
                tensor.uniform_(0.5, 1.5)
            elif name.endswith("weight"):
                tensor.normal_(0.0, (2.0 / tensor[0].numel()) ** 0.5)
            else:
                tensor.normal_(0.0, 0.1)
    return model.eval()


def images(count, seed=1):
    return np.random.default_rng(seed).standard_normal((count, 3, 32, 32), dtype=np.float32)


def torch_logits(model, x):
    with torch.no_grad():
        return model(torch.from_numpy(x)).numpy()


def test_resnet20_from_torch_gives_torch_float_logits(tmp_path):
    model = randomized(resnet20(), seed=0)
    path = tmp_path / "r20.octet"
    checkpoint = octet.from_torch(model, model="resnet20", dataset="cifar10", path=path)
    assert checkpoint.path == str(path) and checkpoint.model == "resnet20" and checkpoint.dataset == "cifar10"
    assert checkpoint.training["imported_from"] == "torch module CifarResNet"
    x = images(16)
    expected = torch_logits(model, x)
    np.testing.assert_allclose(checkpoint.predict(x), expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    # Every stored parameter is the torch tensor, bit for bit.
    for name, tensor in model.state_dict().items():
        if not name.endswith("num_batches_tracked"):
            np.testing.assert_array_equal(checkpoint.params[name], tensor.numpy())


def test_torchvision_names_and_dataparallel_prefix_map_onto_resnet18():
    model = randomized(resnet18_torchvision_names(), seed=2)
    names = list(model.state_dict())
    assert "fc.weight" in names and "layer2.0.downsample.0.weight" in names
    state_dict = OrderedDict(("module." + name, tensor) for name, tensor in model.state_dict().items())
    checkpoint = octet.from_torch(state_dict, model="resnet18", dataset="cifar10")
    np.testing.assert_array_equal(checkpoint.params["linear.weight"], model.fc.weight.detach().numpy())
    np.testing.assert_array_equal(
        checkpoint.params["layer2.0.shortcut.1.running_var"], model.layer2[0].downsample[1].running_var.numpy()
    )
    x = images(4)
    expected = torch_logits(model, x)
    np.testing.assert_allclose(checkpoint.predict(x), expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


def test_numpy_state_dict_and_own_normalisation_need_no_module():
    state_dict = {name: tensor.numpy() for name, tensor in randomized(resnet20("fc"), seed=3).state_dict().items()}
    checkpoint = octet.from_torch(state_dict, model="resnet20", dataset="cifar10", mean=[0.5] * 3, std=[0.25] * 3)
    assert checkpoint.mean == [0.5] * 3 and checkpoint.std == [0.25] * 3


def test_unknown_missing_and_misshapen_tensors_are_named_and_nothing_is_written(tmp_path):
    state_dict = dict(randomized(resnet20(), seed=4).state_dict())
    state_dict["extra.weight"] = torch.zeros(3)
    del state_dict["layer3.2.bn2.running_mean"]
    state_dict["layer1.0.conv1.weight"] = torch.zeros(16, 16, 5, 5)
    path = tmp_path / "bad.octet"
    with pytest.raises(octet.Error) as error:
        octet.from_torch(state_dict, model="resnet20", dataset="cifar10", path=path)
    message = str(error.value)
    assert "'extra.weight'" in message
    assert "'layer3.2.bn2.running_mean'" in message
    assert "layer1.0.conv1.weight [16, 16, 5, 5] (layer1.0.conv1.weight needs [16, 16, 3, 3])" in message
    assert not path.exists() and list(tmp_path.iterdir()) == []


def test_a_model_of_another_architecture_is_refused():
    with pytest.raises(octet.Error, match="the state_dict does not match the model"):
        octet.from_torch(randomized(resnet20(), seed=5), model="resnet32", dataset="cifar10")
    with pytest.raises(octet.Error, match="unknown model 'resnet21'"):
        octet.from_torch(randomized(resnet20(), seed=5), model="resnet21", dataset="cifar10")


def test_non_float_tensors_are_refused():
    state_dict = dict(randomized(resnet20(), seed=6).state_dict())
    state_dict["conv1.weight"] = state_dict["conv1.weight"].to(torch.int32)
    with pytest.raises(TypeError, match=r"state_dict\['conv1.weight'\] must hold floating-point values"):
        octet.from_torch(state_dict, model="resnet20", dataset="cifar10")


def test_non_finite_weights_are_named_and_nothing_is_written(tmp_path, octet_bin):
    state_dict = dict(randomized(resnet20(), seed=8).state_dict())
    state_dict["layer2.1.conv2.weight"][0, 0, 1, 1] = float("nan")
    state_dict["conv1.weight"][3, 0, 0, 0] = float("inf")
    with pytest.raises(octet.Error, match=r"holding NaN or infinite values: 'conv1.weight', 'layer2.1.conv2.weight'"):
        octet.from_torch(state_dict, model="resnet20", dataset="cifar10", path=tmp_path / "nan.octet")
    torch.save(state_dict, tmp_path / "nan.pt")
    result = run_import(octet_bin, tmp_path / "nan.pt", "--model", "resnet20", "-o", tmp_path / "nan_cli.octet")
    skip_without_libtorch(result)
    assert result.returncode == 1 and "'layer2.1.conv2.weight'" in result.stderr, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nan.pt"]


def run_import(octet_bin, *args):
    return subprocess.run([octet_bin, "import", *map(str, args)], capture_output=True, text=True)


def skip_without_libtorch(result):
    if "built without it" in result.stderr:
        pytest.skip("this octet has no LibTorch: " + result.stderr.strip())


def test_octet_import_reads_a_torch_save_file(tmp_path, octet_bin):
    model = randomized(resnet20("fc"), seed=7)
    torch.save(dict(model.state_dict()), tmp_path / "r20.pt")
    result = run_import(octet_bin, tmp_path / "r20.pt", "--model", "resnet20", "-o", tmp_path / "r20.octet")
    skip_without_libtorch(result)
    assert result.returncode == 0, result.stderr
    assert "imported" in result.stdout and "r20.octet" in result.stdout
    checkpoint = octet.load_checkpoint(str(tmp_path / "r20.octet"))
    x = images(8)
    expected = torch_logits(model, x)
    np.testing.assert_allclose(checkpoint.predict(x), expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


def test_octet_import_reads_or_explains_an_ordered_dict_and_explains_a_mismatch(tmp_path, octet_bin):
    model = randomized(resnet20(), seed=8)
    torch.save(model.state_dict(), tmp_path / "ordered.pt")
    result = run_import(octet_bin, tmp_path / "ordered.pt", "--model", "resnet20", "-o", tmp_path / "ordered.octet")
    skip_without_libtorch(result)
    if result.returncode == 0:  # a LibTorch whose C++ reader rebuilds an OrderedDict (1.13's does not)
        x = images(8)
        expected = torch_logits(model, x)
        logits = octet.load_checkpoint(str(tmp_path / "ordered.octet")).predict(x)
        np.testing.assert_allclose(logits, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())
    else:
        assert "torch.save(dict(model.state_dict())" in result.stderr
        assert not (tmp_path / "ordered.octet").exists()
    torch.save(dict(model.state_dict()), tmp_path / "plain.pt")
    result = run_import(octet_bin, tmp_path / "plain.pt", "--model", "resnet18", "-o", tmp_path / "out.octet")
    assert result.returncode != 0 and "plain.pt as resnet18 on cifar10" in result.stderr
    assert "'layer2.0.shortcut.0.weight'" in result.stderr
    assert not (tmp_path / "out.octet").exists()
