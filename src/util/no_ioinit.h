// <iostream> without its static initializer, for vouch's own sources (issue 39, start-up).
//
// libstdc++ before GCC 13 puts `static ios_base::Init __ioinit;` into every file that includes
// <iostream>, and the first one constructs cout, cin, cerr and clog and the whole C++ locale
// at start-up: about 20 page faults and 0.1 ms of `vouch --version`'s 1.3 ms on the 2-core VM
// (docs/BENCHMARKS.md, stop 45), though vouch prints through fmt and never uses the standard
// streams. Only headers of its libraries include <iostream> (CLI11 for App::exit's default
// arguments and the warnings of deprecated options, Boost.Math's roots.hpp for
// BOOST_MATH_INSTRUMENT), and none of those paths is used.
//
// CMakeLists.txt includes this header first in every file of vouch_core and the vouch binary
// (-include): it declares the eight stream objects exactly as <iostream> does and marks
// <iostream> as included, without the initializer. A C++ stream (an ostringstream, CLI11's
// help) still works: the locale is built when the first one is made. The code that could reach
// the standard streams (CLI11's parser) constructs an ios_base::Init first (cli/command.cc).
// Other compilers and libraries, and GCC 13's libstdc++ (which initializes the streams in the
// library), get <iostream> as it is.
#pragma once

#include <istream>
#include <ostream>

#if defined(__GLIBCXX__) && !defined(_GLIBCXX_IOSTREAM) && defined(_GLIBCXX_RELEASE) && \
    _GLIBCXX_RELEASE < 13
#define _GLIBCXX_IOSTREAM 1
namespace std _GLIBCXX_VISIBILITY(default) {
  _GLIBCXX_BEGIN_NAMESPACE_VERSION
  extern istream cin;
  extern ostream cout;
  extern ostream cerr;
  extern ostream clog;
#ifdef _GLIBCXX_USE_WCHAR_T
  extern wistream wcin;
  extern wostream wcout;
  extern wostream wcerr;
  extern wostream wclog;
#endif
  _GLIBCXX_END_NAMESPACE_VERSION
}  // namespace )
#endif
