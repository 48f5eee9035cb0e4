// Precompiled for every file of btfslim-core (meson.build: cpp_pch): fmt, which nearly every file includes
// through btfslim/error.h, and the standard headers most of them include. Only headers: nothing here may
// change what a file means, which includes what it needs itself.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>
