// fmt's compiled part, once for the whole program, where btfslim links fmt in (static_deps): fmt's
// headers declare it and this file defines it, as the shared libfmt does for a -Dstatic_deps=false build.
// Compiling fmt header-only instead put all of it into every file that includes <fmt/format.h> (nearly
// all of them), about 2 s of compile time in each.
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

// The templates fmt's headers declare but only format-inl.h defines, for the types fmt uses them with.
template auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl(locale_ref) -> char;
template auto decimal_point_impl(locale_ref) -> wchar_t;

}  // namespace detail
FMT_END_NAMESPACE
