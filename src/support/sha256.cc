// SHA-256 through libsodium.
#include "tirtune/support/sha256.h"

#include <sodium.h>

#include "tirtune/support/error.h"

namespace tirtune {

std::string Sha256Hex(std::string_view bytes) {
  static const bool ready = sodium_init() >= 0;
  if (!ready) throw InternalError("libsodium failed to initialize");
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  char hex[2 * crypto_hash_sha256_BYTES + 1];
  sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
  return hex;
}

}  // namespace tirtune
