#pragma once
// A per-thread free list for the small objects every op makes: tensor headers
// (TensorImpl), their Storage headers and graph nodes, each allocated with its shared_ptr
// control block through std::allocate_shared. A training step makes and frees the same
// few hundred of them every step; after the first step they come from here instead of
// malloc. Blocks freed on another thread join that thread's list (any thread may free a
// block: all come from ::operator new). The float buffers themselves have their own
// cache (storage.cpp).
#include <cstddef>
#include <new>

#include "minidl/tensor/pooled_allocator.hpp"  // small_block_allocate, small_block_free, SmallBlockAllocator

namespace minidl::detail {

/// Blocks up to this many bytes are recycled; larger requests go to ::operator new.
inline constexpr size_t kSmallBlockMax = 256;

/// memory_caching_enabled() (memory_caching.hpp): false in an AddressSanitizer build or with
/// MINIDL_NO_MEMORY_CACHING=1, where every block goes to the system (so a use after free is
/// still caught).
bool small_blocks_pooled();
/// Blocks the calling thread holds for reuse, by all size classes (the tests' view).
size_t small_blocks_cached();

}  // namespace minidl::detail
