#include "util/hash.h"

#include <openssl/evp.h>
#include <openssl/opensslv.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <vector>

#include "util/bounded_file.h"

namespace vouch {
namespace {

// SHA-256 fetched from the provider once: OpenSSL 3 looks EVP_sha256() up again at every
// init, and that lookup was 2 % of `vouch history add` (two hashes a record).
const EVP_MD* Sha256Md() {
#if OPENSSL_VERSION_NUMBER >= 0x30000000L
  static const EVP_MD* md = [] {
    const EVP_MD* m = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return m ? m : EVP_sha256();
  }();
  return md;
#else
  return EVP_sha256();
#endif
}

struct Ctx {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), &EVP_MD_CTX_free};
  Ctx() { EVP_DigestInit_ex(ctx.get(), Sha256Md(), nullptr); }
  void Update(const void* p, size_t n) { EVP_DigestUpdate(ctx.get(), p, n); }
  std::string Hex() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx.get(), md, &len);
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < len; ++i) {
      out += digits[md[i] >> 4];
      out += digits[md[i] & 15];
    }
    return out;
  }
};

Status HashFileInto(Ctx& c, const std::string& path) {
  // Artifacts may be large (model files): no size cap, but only a regular file (a FIFO or
  // /dev/zero named as an artifact would never end).
  auto f = BoundedFile::Open(path, kNoSizeCap);
  if (!f) return MakeError("cannot hash {}", f.error().message);
  return f->ReadChunks([&](std::string_view chunk) {
    c.Update(chunk.data(), chunk.size());
    return OkStatus();
  });
}

}  // namespace

std::string Sha256Hex(std::string_view bytes) {
  Ctx c;
  c.Update(bytes.data(), bytes.size());
  return c.Hex();
}

Result<std::string> Sha256OfPath(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return MakeError("cannot hash {}: no such file or directory", path);
  Ctx c;
  if (fs::is_directory(st)) {
    std::vector<std::string> files;
    for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      if (it->is_regular_file()) files.push_back(fs::relative(it->path(), path).string());
    }
    if (ec) return MakeError("cannot walk {}: {}", path, ec.message());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      c.Update(f.data(), f.size() + 1);  // include the NUL as a separator
      if (auto s = HashFileInto(c, (fs::path(path) / f).string()); !s) return s.error();
    }
  } else {
    if (auto s = HashFileInto(c, path); !s) return s.error();
  }
  return c.Hex();
}

}  // namespace vouch
