#include "source_dir.h"

const char* benchSourceDir() {
  return GPUPLACEMENT_SOURCE_DIR;
}
