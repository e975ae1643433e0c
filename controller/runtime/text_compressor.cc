#include "runtime/text_compressor.h"

#include <new>

#include <zstd.h>

namespace gpuplacement::runtime {
namespace {

// zstd's default: with a dictionary it packs a status as small as level 1
// does and no slower (measured on statuses of 2.9 and 3.2 KB).
constexpr int kLevel = ZSTD_CLEVEL_DEFAULT;

template <typename T, std::size_t (*Free)(T*)>
struct Freed {
  void operator()(T* p) const { Free(p); }
};

}  // namespace

struct TextCompressor::Contexts {
  std::unique_ptr<ZSTD_CCtx, Freed<ZSTD_CCtx, ZSTD_freeCCtx>> compress{ZSTD_createCCtx()};
  // Decompressing needs a context of its own; unpack() is const to its
  // callers, not to zstd.
  std::unique_ptr<ZSTD_DCtx, Freed<ZSTD_DCtx, ZSTD_freeDCtx>> decompress{ZSTD_createDCtx()};
  std::unique_ptr<ZSTD_CDict, Freed<ZSTD_CDict, ZSTD_freeCDict>> packWith;
  std::unique_ptr<ZSTD_DDict, Freed<ZSTD_DDict, ZSTD_freeDDict>> unpackWith;
};

TextCompressor::TextCompressor() : contexts_(std::make_unique<Contexts>()) {
  auto* compress = contexts_->compress.get();
  if (!compress || !contexts_->decompress ||
      ZSTD_isError(ZSTD_CCtx_setParameter(compress, ZSTD_c_compressionLevel, kLevel)) ||
      // 4 bytes a text: a text unpacked with another reference than its
      // own is refused, not read as some other status.
      ZSTD_isError(ZSTD_CCtx_setParameter(compress, ZSTD_c_checksumFlag, 1))) {
    throw std::bad_alloc();
  }
}

TextCompressor::~TextCompressor() = default;

void TextCompressor::setReference(std::string_view reference) {
  // Both copy the reference: the caller's text need not outlive them.
  contexts_->packWith.reset(ZSTD_createCDict(reference.data(), reference.size(), kLevel));
  contexts_->unpackWith.reset(ZSTD_createDDict(reference.data(), reference.size()));
  if (!contexts_->packWith || !contexts_->unpackWith ||
      ZSTD_isError(ZSTD_CCtx_refCDict(contexts_->compress.get(), contexts_->packWith.get())) ||
      ZSTD_isError(ZSTD_DCtx_refDDict(contexts_->decompress.get(), contexts_->unpackWith.get()))) {
    throw std::bad_alloc();
  }
}

std::string TextCompressor::pack(std::string_view text) {
  std::string packed(ZSTD_compressBound(text.size()), '\0');
  const auto size = ZSTD_compress2(contexts_->compress.get(), packed.data(), packed.size(),
                                   text.data(), text.size());
  if (ZSTD_isError(size)) {
    // The bound holds any text: only memory can fail here.
    throw std::bad_alloc();
  }
  packed.resize(size);
  packed.shrink_to_fit();  // what is kept is the point
  return packed;
}

std::optional<std::string> TextCompressor::unpack(std::string_view packed) const {
  const auto size = ZSTD_getFrameContentSize(packed.data(), packed.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) {
    return std::nullopt;
  }
  std::string text(size, '\0');
  const auto written = ZSTD_decompressDCtx(contexts_->decompress.get(), text.data(), text.size(),
                                           packed.data(), packed.size());
  if (ZSTD_isError(written) || written != size) {
    return std::nullopt;
  }
  return text;
}

}  // namespace gpuplacement::runtime
