// Force-included (-include) only by the old-glibc release build (scripts/release_bullseye.sh):
// Debian 11's GCC 10 and its libstdc++ lack two C++20/C++17 library pieces vouch uses, both
// added in GCC 11, and its SQLite (3.34) one type name. Nothing here is compiled by the normal
// build (GCC 12, SQLite 3.40, Debian 12).
//   std::make_unique_for_overwrite   (P1020R1)
//   std::from_chars for double       (P0067R5, floating point)
//   sqlite3_filename                 (SQLite 3.40: the xOpen name's type, a const char*)
// The from_chars below reads with strtod in the "C" locale, as libstdc++ 11 does, with
// from_chars' own rules: no leading whitespace or '+', no "0x" prefix (hex is read as "0"),
// result_out_of_range (value untouched) when the value overflows or underflows.
#pragma once
#if __has_include(<sqlite3.h>)
#include <sqlite3.h>
#if SQLITE_VERSION_NUMBER < 3040000
typedef const char* sqlite3_filename;
#endif
#endif
#if defined(__cplusplus) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 11
#include <locale.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#if defined(__GLIBCXX__) && !defined(__cpp_lib_smart_ptr_for_overwrite)

namespace std {

template <class T>
requires(!is_array_v<T>) unique_ptr<T> make_unique_for_overwrite() { return unique_ptr<T>(new T); }
template <class T>
requires is_unbounded_array_v<T> unique_ptr<T> make_unique_for_overwrite(size_t n) {
  return unique_ptr<T>(new remove_extent_t<T>[n]);
}

inline from_chars_result from_chars(const char* first, const char* last, double& value,
                                    chars_format = chars_format::general) noexcept {
  const char* p = first;
  if (p != last && *p == '-') ++p;
  if (p == last || *p == '+' || *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' ||
      *p == '\v')
    return {first, errc::invalid_argument};
  // "0x..." is not a hex float to from_chars: it is the number 0 followed by 'x'.
  if (last - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    value = *first == '-' ? -0.0 : 0.0;
    return {p + 1, errc{}};
  }
  static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(0));
  string text(first, last);
  char* end = nullptr;
  const int saved = errno;
  errno = 0;
  const double d = strtod_l(text.c_str(), &end, c_locale);
  const int err = errno;
  errno = saved;
  if (end == text.c_str()) return {first, errc::invalid_argument};
  const char* stop = first + (end - text.c_str());
  if (err == ERANGE && (std::isinf(d) || d == 0.0 || !std::isnormal(d)))
    return {stop, errc::result_out_of_range};
  value = d;
  return {stop, errc{}};
}

}  // namespace std
#endif
#endif
