"""PyTorch weights in: octet.from_torch writes an octet float checkpoint from a
torch.nn.Module or a state_dict of a model octet knows. torch itself is only
touched through the tensors the caller passes; a state_dict of numpy arrays
works without it."""

from collections.abc import Mapping

import numpy

from ._octet import checkpoint_from_state_dict, load_checkpoint

# A batch norm's step counter: an integer buffer octet does not use.
_COUNTER_SUFFIX = ".num_batches_tracked"


def _to_numpy(name, value):
    if hasattr(value, "detach"):  # a torch.Tensor, on any device
        value = value.detach().cpu().numpy()
    if not isinstance(value, numpy.ndarray):
        raise TypeError(f"state_dict['{name}'] must be a tensor or a numpy array, got {type(value).__name__}")
    if name.endswith(_COUNTER_SUFFIX):
        value = value.astype(numpy.float32)
    return value


def from_torch(module_or_state_dict, model, dataset="cifar10", path=None, batch_norm=True, mean=None, std=None):
    """An octet float checkpoint (octet.Checkpoint) of `model` ("lenet5",
    "resnet20", "resnet18", ...) trained on `dataset`, from a torch.nn.Module
    or its state_dict. Names may be octet's own (conv1, layer1.0.bn1,
    layer2.0.shortcut.0, linear) or torchvision-style (downsample, fc), with
    or without DataParallel's "module." prefix; every tensor must map onto one
    parameter with its shape and every parameter must be given, or octet.Error
    names the ones that do not. mean and std (per input channel) default to
    the dataset's normalisation: pass the ones the model was trained with.
    With `path`, the checkpoint is written there (atomically) and read back."""
    state_dict = module_or_state_dict
    source = "state_dict"
    if callable(getattr(module_or_state_dict, "state_dict", None)):
        state_dict = module_or_state_dict.state_dict()
        source = f"torch module {type(module_or_state_dict).__name__}"
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"from_torch needs a torch.nn.Module or a state_dict mapping, got {type(state_dict).__name__}")
    arrays = {str(name): _to_numpy(str(name), value) for name, value in state_dict.items()}
    checkpoint = checkpoint_from_state_dict(
        arrays, model, dataset, batch_norm, list(mean or []), list(std or []), source
    )
    if path is None:
        return checkpoint
    checkpoint.save(str(path))
    return load_checkpoint(str(path))
