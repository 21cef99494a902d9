// Models of opsets 7 to 10 (the ONNX Model Zoo's older files, torch.onnx.export
// at an old opset_version) as the importer's oldest opset: rewritten by ONNX's
// own version converter, after ONNX's checker has passed the file (the
// converter trusts its input).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

namespace octet::onnx_import {

constexpr int64_t kOldestUpgradedOpset = 7;

// The opset of ONNX's default domain that `model` imports (0: none).
int64_t default_opset(const onnx::ModelProto& model);

// `model` converted to opset `target`; fails naming `where` where ONNX's
// checker or converter refuses it.
onnx::ModelProto upgraded_model(const onnx::ModelProto& model, int64_t target, const std::string& where);

}  // namespace octet::onnx_import
