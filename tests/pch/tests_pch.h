// Precompiled for every test file: Catch2's single header dominates their compile time.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
