// SHA-256 (OpenSSL's libcrypto) of byte sequences, as lowercase hex: the
// identities octet records in its files (which float checkpoint a quantized
// model was made from).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace octet {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  Sha256& update(const void* data, size_t size);
  Sha256& update(const std::string& text) { return update(text.data(), text.size()); }
  std::string hex();  // finishes the digest; update may not be called after

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

}  // namespace octet
