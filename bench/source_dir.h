#pragma once

// The repository the benchmark was built from, for its fixtures. Only
// source_dir.cc holds the absolute path, so cache_bench.cc compiles to the
// same object in any clone (ccache shares it).
const char* benchSourceDir();
