// SPDX-License-Identifier: Apache-2.0
// Handing freed heap back to the system. glibc keeps the memory a thread freed in that thread's
// arena for reuse, so a server that once decoded or prepared something large holds it until it
// exits; after such work the server trims instead (docs/reliability.md, "Memory").
#pragma once

namespace perfwarden {

// Returns the heap's free memory to the system (glibc malloc_trim: every arena, not only the
// main one); a no-op elsewhere. Costs a walk over the heap: call it after large work only.
void ReturnFreedMemory();

}  // namespace perfwarden
