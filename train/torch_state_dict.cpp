#include "train/torch_state_dict.h"

#include <torch/torch.h>

#include "common/error.h"
#include "common/file_io.h"
#include "common/strings.h"

namespace octet {

namespace {

// What LibTorch 1.13's unpickler leaves where the file had an OrderedDict: it
// rebuilds collections.OrderedDict as None, and then fails filling it.
bool is_ordered_dict_failure(const std::string& what) {
  return what.find("Expected GenericDict but got None") != std::string::npos;
}

// A batch norm's integer step counter, which the name mapping drops.
bool is_step_counter(const std::string& name) {
  return ends_with(name, "num_batches_tracked");
}

FloatTensor to_float_tensor(const torch::Tensor& t) {
  const torch::Tensor contiguous = t.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  FloatTensor out(Shape(contiguous.sizes().begin(), contiguous.sizes().end()));
  std::copy(contiguous.data_ptr<float>(), contiguous.data_ptr<float>() + contiguous.numel(), out.data.begin());
  return out;
}

}  // namespace

std::map<std::string, FloatTensor> read_torch_state_dict(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  const std::vector<char> data(bytes.begin(), bytes.end());
  const std::string where = path + ": ";
  c10::IValue value;
  try {
    value = torch::pickle_load(data);
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    if (is_ordered_dict_failure(what))
      fail(where + "LibTorch's C++ reader cannot read an OrderedDict (what module.state_dict() returns): save a "
                   "plain dict, torch.save(dict(model.state_dict()), '" + path +
           "'), or use octet.from_torch(model, ...) in Python");
    fail(where + "not a file torch.save wrote in its zip format (torch 1.6 or later), or not readable without "
                 "Python: " + what.substr(0, what.find('\n')));
  }
  check(value.isGenericDict(), where + "holds a " + value.tagKind() + ", not a dict of tensors (a state_dict)");
  c10::impl::GenericDict dict = value.toGenericDict();
  for (const char* key : {"state_dict", "model"}) {
    auto it = dict.find(c10::IValue(std::string(key)));
    if (it != dict.end() && it->value().isGenericDict()) dict = it->value().toGenericDict();
  }
  std::map<std::string, FloatTensor> tensors;
  for (const auto& entry : dict) {
    check(entry.key().isString(), where + "has a key that is not a string: a state_dict maps names to tensors");
    const std::string& name = entry.key().toStringRef();
    check(entry.value().isTensor(), where + "'" + name + "' is a " + entry.value().tagKind() + ", not a tensor");
    const torch::Tensor& t = entry.value().toTensor();
    check(t.is_floating_point() || is_step_counter(name),
          where + "'" + name + "' holds " + std::string(c10::toString(t.scalar_type())) +
              " values, not floating-point weights");
    tensors[name] = to_float_tensor(t);
  }
  return tensors;
}

}  // namespace octet
