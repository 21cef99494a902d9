// Reads a state_dict that PyTorch's torch.save wrote, with LibTorch's own
// pickle reader (torch::pickle_load), as float tensors by name.
#pragma once

#include <map>
#include <string>

#include "common/tensor.h"

namespace octet {

// Accepts a dict of tensors, or a dict holding one under "state_dict" or
// "model" (the usual training-checkpoint layouts); every other value fails,
// naming it. LibTorch's C++ reader cannot rebuild an OrderedDict (what
// module.state_dict() returns), so the message for one says how to save a
// plain dict instead.
std::map<std::string, FloatTensor> read_torch_state_dict(const std::string& path);

}  // namespace octet
