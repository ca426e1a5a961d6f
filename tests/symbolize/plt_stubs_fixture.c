/* A library whose calls to the C library go through PLT stubs (built as is,
   and with -z ibtplt, where the stubs move to .plt.sec), for
   tests/symbolize/plt_stubs_test.cc. getppid's address is taken too, so its
   calls go through .plt.got instead. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

pid_t (*fixture_parent_function(void))(void) { return getppid; }

size_t fixture_calls(const char* text, char* out, size_t size) {
  size_t n = strlen(text);
  if (n >= size) n = size - 1;
  memcpy(out, text, n);
  out[n] = '\0';
  return n + (size_t)getpid() % 2 + (size_t)getppid() % 2 + (size_t)labs((long)n - 3);
}
