// SHA-256 (libsodium): content addresses of device-pool blobs, checksums of compiled artifacts.
#pragma once

#include <string>
#include <string_view>

namespace tirtune {

/// The SHA-256 of `bytes`, as 64 lowercase hex digits.
std::string Sha256Hex(std::string_view bytes);

}  // namespace tirtune
