// `octet` does not link LibTorch: loading it costs every command about 0.35 s
// of static initialisation before main. The commands that need it (training,
// importing torch.save files, LibTorch's float baselines, the gradient count)
// are also built into `octet-torch`, next to `octet`, which this process
// becomes, with the same arguments, when it reaches one of them.
#pragma once

namespace octet {

// Kept from main for use_torch_helper.
void remember_command_line(char** argv);

// In an `octet` built beside octet-torch, replaces this process with
// octet-torch (same arguments; fails naming it if it cannot start). Returns
// in a build without LibTorch, and in octet-torch itself (which never
// reaches its callers).
void use_torch_helper();

}  // namespace octet
