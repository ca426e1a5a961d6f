// The Python caller of a PyTorch op, for STRATA_TORCH_STACK=N: up to N frames
// of the calling thread's Python stack, innermost first, as torch.profiler's
// with_stack prints them ("path(line): function", joined by '\n').
//
// CPython is reached through the interpreter already loaded in the process
// (dlsym on RTLD_DEFAULT, the stable API of CPython 3.9 and later), never
// linked. torch's bindings release the GIL around an op; the stack is read
// with the GIL taken back (PyGILState_Ensure), and only on threads Python
// knows: autograd's C++ backward threads have no Python stack.
// Threading: any thread; each keeps its own cache of code objects (with a
// reference held, so a cached pointer stays that code's).
#pragma once

#include <string>

namespace strata::agent::torch {

// Resolves the CPython functions. Returns false when any is missing (no
// CPython in the process, or one older than 3.9): no stacks then.
bool python_stack_init();

// Writes the frames into `out` (cleared first). Returns false, `out` empty,
// when the thread runs no Python code.
bool python_stack(int frames, std::string* out);

}  // namespace strata::agent::torch
