#include "common/digest.h"

#include <openssl/evp.h>

#include "common/error.h"

namespace octet {

struct Sha256::Context {
  EVP_MD_CTX* md = nullptr;
  ~Context() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  context_->md = EVP_MD_CTX_new();
  check(context_->md != nullptr && EVP_DigestInit_ex(context_->md, EVP_sha256(), nullptr) == 1,
        "OpenSSL could not start a SHA-256 digest");
}

Sha256::~Sha256() = default;

Sha256& Sha256::update(const void* data, size_t size) {
  check(EVP_DigestUpdate(context_->md, data, size) == 1, "OpenSSL SHA-256 update failed");
  return *this;
}

std::string Sha256::hex() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  check(EVP_DigestFinal_ex(context_->md, digest, &length) == 1, "OpenSSL SHA-256 final failed");
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < length; ++i) {
    out += kDigits[digest[i] >> 4];
    out += kDigits[digest[i] & 15];
  }
  return out;
}

}  // namespace octet
