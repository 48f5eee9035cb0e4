// Precompiled for every file of src/cli (meson.build: cpp_pch): CLI11, which is header-only and which
// every command's file includes through btfslim/cli.h, fmt and the standard headers. Only headers: nothing
// here may change what a file means, which includes what it needs itself.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
