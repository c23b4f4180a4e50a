#include "core/heap.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace perfgate {

void ReturnFreedMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace perfgate
